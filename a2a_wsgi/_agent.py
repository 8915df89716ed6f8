"""The agent API: what a developer writes to serve an agent.

An agent is a subclass of :class:`Agent` that declares its card with class
attributes and answers :meth:`Agent.handle_message` with an *outcome* built by
one of the helpers here. The runtime (:mod:`a2a_wsgi._runtime`) turns each
outcome into task transitions::

    class Calc(Agent):
        name = "Calc Agent"
        skills = [AgentSkill(id="calc", name="Calc", description="Adds numbers")]

        def handle_message(self, msg, ctx):
            return reply("The sum is 5.")

Outcomes (:data:`Outcome` is their union):

* ``reply(*parts)``: completed, one artifact holding the parts, the agent's
  message appended to history, no status message.
* ``input_required(*parts)`` / ``auth_required(*parts)``: the task waits; the
  prompt is both the status message and the last history entry.
* ``stream(iterable)``: one artifact update per yielded part (one artifact id),
  then completed; an exception mid-stream ends failed with what was emitted.
* ``error(reason)``: failed, status message "Error: <reason>".
* ``reject(*parts)``: rejected, the parts as status message.
* ``working(text=None)``: the task stays WORKING (the agent, or something it
  started, will move it on later).
* ``message(*parts)``: a bare Message reply; no task is stored.

Returning a ``str`` is ``reply(str)``; returning ``None`` completes a task the
agent left WORKING (after driving it with :meth:`AgentContext.emit_status` /
:meth:`AgentContext.emit_artifact`). Raising ends the task failed with
"Error: <exception text>"; the traceback is logged, never sent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

from a2a_core.auth import Principal
from a2a_core.models import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Artifact,
    Message,
    Role,
    TaskState,
)

__all__ = [
    "Agent",
    "AgentContext",
    "TaskUpdater",
    "PartLike",
    "Reply",
    "InputRequired",
    "AuthRequired",
    "Stream",
    "Failure",
    "Rejected",
    "Working",
    "MessageReply",
    "Outcome",
    "reply",
    "input_required",
    "auth_required",
    "stream",
    "error",
    "reject",
    "working",
    "message",
    "to_parts",
    "as_outcome",
]

from ._outcomes import (
    AuthRequired,
    Failure,
    InputRequired,
    MessageReply,
    Outcome,
    PartLike,
    Rejected,
    Reply,
    Stream,
    Working,
    as_outcome,
    auth_required,
    error,
    input_required,
    message,
    reject,
    reply,
    stream,
    to_parts,
    working,
)

# -- the context -----------------------------------------------------------------------


class TaskUpdater(Protocol):
    """How an :class:`AgentContext` reaches the runtime that owns its task."""

    def update_status(self, state: TaskState, message: Message | None) -> None:
        ...

    def update_artifact(self, artifact: Artifact, *, append: bool, last_chunk: bool) -> None:
        ...

    def new_id(self, prefix: str) -> str:
        ...


@dataclass(kw_only=True, eq=False)
class AgentContext:
    """Everything an agent knows about the call it is answering.

    ``history`` holds every message so far, the current one last. ``cancelled``
    is set when the task is canceled; a long-running agent should check
    :meth:`is_cancelled` and stop.

    ``identity`` is the caller, None when anonymous, and always a
    :class:`~a2a_core.auth.Principal` however it was authenticated (``auth=``,
    a Django or Flask login through :mod:`a2a_wsgi.frameworks`,
    ``put_identity``): a ``str`` whose value is the identity (``"user:1"``), so
    ``f"Hello {context.identity}"`` greets the caller by name, with the
    authenticator's ``tenant`` and ``claims`` on it. A plain string given here
    is made one.
    """

    task_id: str
    context_id: str
    history: tuple[Message, ...] = ()
    metadata: Mapping[str, Any] | None = None
    extensions: Mapping[str, Any] = field(default_factory=dict)
    #: The caller: a :class:`~a2a_core.auth.Principal`, None when anonymous (typed Any
    #: only because the runtime hands over the core's untyped call identity).
    identity: Any = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    updater: TaskUpdater | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.identity = Principal.of(self.identity)  # a str from older callers, too

    @property
    def message(self) -> Message | None:
        """The message being answered (the newest history entry)."""
        return self.history[-1] if self.history else None

    def is_cancelled(self) -> bool:
        return self.cancelled.is_set()

    def emit_status(
        self, state: TaskState, message: str | Message | PartLike | None = None
    ) -> None:
        """Move the task to ``state`` now (subscribers see it); text becomes an agent message.

        An update the task can no longer take (it was canceled meanwhile) is dropped.
        """
        self._updater().update_status(state, self._agent_message(message))

    def emit_artifact(
        self,
        parts: PartLike,
        *,
        artifact_id: str | None = None,
        name: str | None = None,
        append: bool = False,
        last_chunk: bool = False,
    ) -> str:
        """Add (or with ``append`` extend) an artifact now; returns its id for later chunks."""
        updater = self._updater()
        artifact = Artifact(
            artifact_id=artifact_id or updater.new_id("art"), parts=to_parts(parts), name=name
        )
        updater.update_artifact(artifact, append=append, last_chunk=last_chunk)
        return artifact.artifact_id

    def _agent_message(self, content: str | Message | PartLike | None) -> Message | None:
        """An agent-role message bound to this task, from text, parts or a Message."""
        if content is None:
            return None
        if isinstance(content, Message):
            return replace(content, task_id=self.task_id, context_id=self.context_id)
        return Message(
            message_id=self._updater().new_id("msg"),
            role=Role.AGENT,
            parts=to_parts(content),
            task_id=self.task_id,
            context_id=self.context_id,
        )

    def _updater(self) -> TaskUpdater:
        if self.updater is None:
            raise RuntimeError("this AgentContext is not attached to a runtime")
        return self.updater


# -- the agent -------------------------------------------------------------------------


class Agent:
    """Base class for agents: declare the card, implement :meth:`handle_message`.

    Class attributes ``name`` (required), ``description``, ``version`` and
    ``skills`` fill the card; ``card_fields`` gives any other AgentCard field
    by its Python name (``provider``, ``default_input_modes``, …). The serving
    app decides streaming, push and extended-card capabilities.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    version: ClassVar[str] = "0.1.0"
    skills: ClassVar[Sequence[AgentSkill]] = ()
    card_fields: ClassVar[Mapping[str, Any]] = {}
    #: Safe to run again from the start when the worker running it died
    #: (its lease expired)? When False the task ends FAILED instead.
    rerun_on_worker_loss: ClassVar[bool] = False

    def handle_message(self, message: Message, context: AgentContext) -> Outcome | str | None:
        """Answer ``message``; ``context.history`` ends with it."""
        raise NotImplementedError(f"{type(self).__name__} must implement handle_message")

    def handle_cancel(self, context: AgentContext) -> None:
        """Called before a cancel takes effect; raising refuses the cancel."""

    def agent_card(self, *, capabilities: AgentCapabilities | None = None) -> AgentCard:
        """The card from the class attributes; ``capabilities`` replaces the declared ones."""
        if not self.name:
            raise TypeError(f"{type(self).__name__} needs a name for its agent card")
        fields = dict(self.card_fields)
        declared = fields.pop("capabilities", None) or AgentCapabilities()
        return AgentCard(
            name=self.name,
            description=self.description,
            version=self.version,
            skills=tuple(self.skills),
            capabilities=capabilities or declared,
            **fields,
        )

    @classmethod
    def from_function(
        cls,
        fn: Callable[[Message, AgentContext], Outcome | str | None],
        *,
        name: str,
        description: str = "",
        version: str = "0.1.0",
        skills: Sequence[AgentSkill] = (),
        card_fields: Mapping[str, Any] | None = None,
        on_cancel: Callable[[AgentContext], None] | None = None,
    ) -> Agent:
        """An agent whose handle_message is ``fn`` (and handle_cancel ``on_cancel``)."""
        return _FunctionAgent(
            fn,
            on_cancel,
            name=name,
            description=description,
            version=version,
            skills=tuple(skills),
            card_fields=dict(card_fields or {}),
        )


class _FunctionAgent(Agent):
    """Agent.from_function's product: card values live on the instance."""

    def __init__(
        self,
        fn: Callable[[Message, AgentContext], Outcome | str | None],
        on_cancel: Callable[[AgentContext], None] | None,
        **card: Any,
    ) -> None:
        self._fn, self._on_cancel = fn, on_cancel
        for key, value in card.items():
            setattr(self, key, value)

    def handle_message(self, message: Message, context: AgentContext) -> Outcome | str | None:
        return self._fn(message, context)

    def handle_cancel(self, context: AgentContext) -> None:
        if self._on_cancel is not None:
            self._on_cancel(context)
