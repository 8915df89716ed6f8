"""Remote skills as tools for an LLM tool loop: ``agent()`` / ``agent_tools()``.

``agent(card_url, headers=…, timeout=…, poll_every=…)`` is a pure descriptor (no I/O;
times in milliseconds). ``agent_tools(descriptor)`` fetches the card once
and returns one :class:`Tool` per skill, named ``sanitize(card name) + "_" +
sanitize(skill id)`` ("Calc Agent" + "calc" → ``Calc_Agent_calc``), with one required
string argument ``task``. ``tool.execute({"task": …})`` sends the text without blocking,
polls GetTask every ``poll_every`` ms within the budget and returns a :class:`ToolResult`
with ``output``, ``is_error`` and ``metadata`` {agent, taskId, state, polls, ms}.
It never raises.

Details (each is documented in docs/client.md):

* a ``failed``, ``canceled`` or ``rejected`` task is an error at once;
* an ``input-required`` / ``auth-required`` task returns at once with the agent's
  prompt ("A2A task <id> input-required: <prompt>", ``is_error`` true, the prompt also
  in ``metadata["prompt"]``), so the budget is not spent waiting for an answer only
  the caller can give;
* when the budget runs out or the caller cancels, the remote task is canceled
  (best effort), so it does not run on unobserved;
* a direct Message reply (no task) is a completed result holding the message text;
* the endpoint is chosen from the card like :class:`A2AClient` does (1.0 interface
  first, else 0.3 ``url``, else the card URL's origin), and answers are decoded
  tolerantly (``{"task": …}`` or bare, ``TASK_STATE_*`` or lower case, flat or
  ``kind`` parts);
* redirects never carry the custom headers to another origin.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import requests

from a2a_core.errors import RPCError
from a2a_core.models import AgentCard, Message, Role, Task, TaskState, TextPart

from ._client import A2AClient
from ._errors import HTTPStatusError, TimeoutException
from .auth import as_auth

__all__ = [
    "AgentDescriptor",
    "Tool",
    "ToolContext",
    "ToolResult",
    "agent",
    "agent_tools",
    "agents_from_config",
    "sanitize",
    "openai_tools",
    "anthropic_tools",
    "TASK_INPUT_SCHEMA",
]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")

#: The one argument every A2A tool takes: the task, in natural language.
TASK_INPUT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "The task to send to the agent, in natural language.",
        }
    },
    "required": ["task"],
    "additionalProperties": False,
}


def sanitize(text: str) -> str:
    """Every character outside ``[a-zA-Z0-9_-]`` becomes ``_`` (what tool-name rules allow)."""
    return _UNSAFE.sub("_", text)


@dataclass(frozen=True, slots=True, repr=False)
class AgentDescriptor:
    """Where a remote agent is and how to call it. Times are milliseconds."""

    card: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: int = 300_000
    poll_every: int = 1_000
    #: What ``A2AClient(auth=...)`` takes: a token, a token provider, an ``AuthBase``.
    auth: Any = None

    def __repr__(self) -> str:
        # Header names only: the values are templates that may hold literal secrets.
        auth = "" if self.auth is None else f", auth={type(self.auth).__name__}"
        return (
            f"AgentDescriptor(card={self.card!r}, headers={sorted(self.headers)}, "
            f"timeout={self.timeout}, poll_every={self.poll_every}{auth})"
        )


def agent(
    card: str,
    headers: Mapping[str, str] | None = None,
    timeout: int = 300_000,
    poll_every: int = 1_000,
    *,
    auth: Any = None,
) -> AgentDescriptor:
    """A pure descriptor of a remote agent (no I/O). ``card`` is the agent card URL;
    ``auth`` goes to the agent's own origin only, as with :class:`A2AClient`."""
    if not isinstance(card, str) or not card:
        raise ValueError("agent() needs the agent card URL as `card`")
    if timeout <= 0 or poll_every <= 0:
        raise ValueError("timeout and poll_every are positive milliseconds")
    as_auth(auth)  # a value A2AClient would refuse is refused here, before any I/O
    return AgentDescriptor(
        card=card, headers=dict(headers or {}), timeout=timeout, poll_every=poll_every,
        auth=auth,
    )


def agents_from_config(block: Mapping[str, Any]) -> list[AgentDescriptor]:
    """An ``agents:`` config block, ``{id: {card, headers?, timeout?, pollEvery?,
    enabled?, disabled?}}``, as descriptors in sorted key order.

    Entries without a non-empty string ``card`` are skipped; ``disabled: true`` wins,
    then ``enabled: false`` skips. The key is only an identifier: tool names come from
    the card's name.
    """
    descriptors = []
    for key in sorted(block):
        entry = block[key]
        card = entry.get("card") if isinstance(entry, Mapping) else None
        if not isinstance(card, str) or not card:
            continue
        if entry.get("disabled") is True or entry.get("enabled") is False:
            continue
        descriptors.append(
            agent(
                card,
                headers=entry.get("headers"),
                timeout=entry.get("timeout", 300_000),
                poll_every=entry.get("pollEvery", 1_000),
            )
        )
    return descriptors


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returns: text for the model, an error flag, and metadata."""

    output: str
    is_error: bool = False
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Per-call options: ``timeout`` in **seconds** overrides the agent budget; setting
    ``signal`` (from another thread) cancels the call and the remote task."""

    timeout: float | None = None
    signal: threading.Event | None = None


def _wire_state(state: TaskState) -> str:
    """States are reported in their lower-case kebab form ("input-required")."""
    return state.value.replace("_", "-")


def _text(message: Message | None) -> str:
    return message.text if message is not None else ""


def _completed_output(task: Task) -> str:
    """Artifact text parts joined by newlines; else the last agent message; else ""."""
    texts = [p.text for a in task.artifacts for p in a.parts if isinstance(p, TextPart)]
    if texts:
        return "\n".join(texts)
    for message in reversed(task.history):
        if message.role is Role.AGENT:
            return message.text
    return ""


class _Call:
    """The bookkeeping of one execute(): budget, polls, and the result metadata."""

    def __init__(self, agent_name: str, budget_ms: float, signal: threading.Event) -> None:
        self.agent_name = agent_name
        self.budget_ms = budget_ms
        self.signal = signal
        self.start = time.monotonic()
        self.task_id = ""
        self.state = "submitted"
        self.polls = 0

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.start) * 1000

    def remaining(self) -> float:
        """Seconds left in the budget (never negative)."""
        return max((self.budget_ms - self.elapsed_ms()) / 1000, 0.0)

    def http_timeout(self) -> tuple[float, float]:
        """Each request may take the whole budget (connect capped at 5 s)."""
        budget = max(self.budget_ms / 1000, 0.001)
        return min(5.0, budget), budget

    def timed_out(self) -> ToolResult:
        budget = int(self.budget_ms)
        return self.result(
            f"A2A task {self.task_id} timed out after {budget}ms (state={self.state})", True
        )

    def result(self, output: str, is_error: bool, **extra: Any) -> ToolResult:
        metadata = {
            "agent": self.agent_name,
            "taskId": self.task_id,
            "state": self.state,
            "polls": self.polls,
            "ms": int(self.elapsed_ms()),
            **extra,
        }
        return ToolResult(output=output, is_error=is_error, metadata=metadata)


class Tool:
    """One remote skill as a tool. ``execute`` never raises."""

    source = "a2a"

    def __init__(
        self,
        *,
        name: str,
        description: str,
        client: A2AClient,
        agent_name: str,
        descriptor: AgentDescriptor,
    ) -> None:
        self.name = name
        self.description = description
        self.input_schema: Mapping[str, Any] = TASK_INPUT_SCHEMA
        self._client = client
        self._agent_name = agent_name
        self._descriptor = descriptor

    def __repr__(self) -> str:
        return f"<Tool {self.name} source=a2a>"

    def to_openai(self) -> dict[str, Any]:
        """OpenAI-style function calling (Chat Completions ``tools`` entry)."""
        function = {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.input_schema),
        }
        return {"type": "function", "function": function}

    def to_anthropic(self) -> dict[str, Any]:
        """Anthropic-style tool definition (Messages API ``tools`` entry)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": dict(self.input_schema),
        }

    def execute(self, args: Mapping[str, Any], context: ToolContext | None = None) -> ToolResult:
        """Send ``args["task"]`` and poll until done, within the budget; see the module doc."""
        ctx = context or ToolContext()
        budget = ctx.timeout * 1000 if ctx.timeout is not None else self._descriptor.timeout
        call = _Call(self._agent_name, budget, ctx.signal or threading.Event())
        try:
            task = args.get("task") if isinstance(args, Mapping) else None
            return self._run(call, "" if task is None else str(task))
        except Exception as exc:  # noqa: BLE001 - the contract: execute never raises
            if call.signal.is_set():
                return self._aborted(call)
            if isinstance(exc, TimeoutException) and call.task_id and call.remaining() == 0:
                self._cancel_remote(call)
                return call.timed_out()
            return call.result(_error_text(exc), True)

    def _run(self, call: _Call, text: str) -> ToolResult:
        """Send once (non-blocking), then GetTask every poll_every ms until settled."""
        sent = self._client.send_message(text, blocking=False, timeout=call.http_timeout())
        if isinstance(sent, Message):
            call.state = "completed"
            return call.result(sent.text, False)
        task = sent
        call.task_id = task.id
        while True:
            call.state = _wire_state(task.status.state)
            settled = self._settled(call, task)
            if settled is not None:
                return settled
            if call.signal.is_set():
                return self._aborted(call)
            if call.elapsed_ms() >= call.budget_ms:
                self._cancel_remote(call)
                return call.timed_out()
            if call.signal.wait(min(self._descriptor.poll_every / 1000, call.remaining())):
                return self._aborted(call)
            task = self._client.get_task(call.task_id, timeout=call.http_timeout())
            call.polls += 1

    def _settled(self, call: _Call, task: Task) -> ToolResult | None:
        """The result for a task that needs no more polling, else None."""
        state = task.status.state
        if state is TaskState.COMPLETED:
            return call.result(_completed_output(task), False)
        if state.is_terminal:  # failed, canceled, rejected
            message = _text(task.status.message)
            return call.result(
                f"A2A task {task.id} {call.state}" + (f": {message}" if message else ""), True
            )
        if state.is_interrupted:
            prompt = _text(task.status.message)
            output = f"A2A task {task.id} {call.state}" + (f": {prompt}" if prompt else "")
            return call.result(output, True, prompt=prompt)
        return None

    def _aborted(self, call: _Call) -> ToolResult:
        """The caller canceled: cancel the remote task too; no further GetTask."""
        self._cancel_remote(call)
        call.state = "canceled"
        return call.result(f"A2A task {call.task_id} canceled", True)

    def _cancel_remote(self, call: _Call) -> None:
        """Best effort: a task we stop watching should not run on unobserved."""
        if not call.task_id:
            return
        try:
            self._client.cancel_task(call.task_id, timeout=(2.0, 5.0))
        except Exception:  # noqa: BLE001 - already returning an error result
            pass


def _error_text(exc: Exception) -> str:
    """The error output: JSON-RPC message, "HTTP <status>: <body>", or the exception's text."""
    if isinstance(exc, RPCError):
        return exc.message or f"JSON-RPC error {exc.code}"
    if isinstance(exc, HTTPStatusError):
        return str(exc)
    return str(exc) or type(exc).__name__


def agent_tools(
    descriptor: AgentDescriptor, *, session: requests.Session | None = None
) -> list[Tool]:
    """Fetch the card once; one Tool per skill. Fetch failures raise (the caller isolates them)."""
    budget = descriptor.timeout / 1000
    client = A2AClient(
        descriptor.card,
        session=session,
        headers=descriptor.headers,
        timeout=(min(5.0, budget), budget),
        auth=descriptor.auth,
    )
    card = client.get_card()
    return [
        _tool(card, skill_key, description, client, descriptor)
        for skill_key, description in _skills(card)
    ]


def _skills(card: AgentCard) -> list[tuple[str, str]]:
    """(skill key, description) per skill: key = id or name; description falls back to name, key."""
    entries = []
    for skill in card.skills:
        key = skill.id or skill.name or ""
        entries.append((key, skill.description or skill.name or key))
    return entries


def _tool(
    card: AgentCard, key: str, description: str, client: A2AClient, descriptor: AgentDescriptor
) -> Tool:
    agent_name = card.name or "agent"
    return Tool(
        name=f"{sanitize(agent_name)}_{sanitize(key)}",
        description=description,
        client=client,
        agent_name=agent_name,
        descriptor=descriptor,
    )


def openai_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """The ``tools=`` list for an OpenAI-style chat completion."""
    return [t.to_openai() for t in tools]


def anthropic_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """The ``tools=`` list for an Anthropic-style messages call."""
    return [t.to_anthropic() for t in tools]
