"""What the ``a2a`` command prints: human text or JSON lines, and the exit code a result means."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

from a2a_core.models import (
    AgentCard,
    DataPart,
    FilePart,
    Message,
    Part,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_core.wire import encode, encode_stream_event

from ._cli_exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_TASK_FAILED

__all__ = ["Output", "parts_text", "show_event", "show_result", "state_name", "stream_events",
           "task_exit"]


class Output:
    """Where results go: human text or JSON lines on stdout; live status on a TTY stderr."""

    def __init__(self, as_json: bool, out: TextIO, err: TextIO) -> None:
        self.as_json = as_json
        self.out = out
        self.err = err
        self.live = err.isatty()
        self._status_shown = False

    def json(self, value: Any) -> None:
        self.out.write(json.dumps(value, ensure_ascii=False) + "\n")

    def line(self, text: str) -> None:
        self.out.write(text + "\n")

    def status(self, task: Task, elapsed: float) -> None:
        """A live ``[state] 3.2s`` line, redrawn in place; nothing on a pipe."""
        if self.live:
            self.err.write(f"\r\x1b[K[{state_name(task.status.state)}] {task.id} {elapsed:.1f}s")
            self.err.flush()
            self._status_shown = True

    def end_status(self) -> None:
        if self._status_shown:
            self.err.write("\r\x1b[K")
            self.err.flush()
            self._status_shown = False


def state_name(state: TaskState) -> str:
    return str(state)


def task_exit(task: Task) -> int:
    state = task.status.state
    if state is TaskState.COMPLETED:
        return EXIT_OK
    if state.is_interrupted:
        return EXIT_INTERRUPTED
    if state.is_terminal:
        return EXIT_TASK_FAILED
    return EXIT_OK  # submitted/working: a non-waiting send succeeded


def _part_text(part: Part) -> str:
    """A part as a person reads it: its text, its data as JSON, a file as a one-line note."""
    if isinstance(part, DataPart):
        return json.dumps(part.data, ensure_ascii=False)
    if isinstance(part, FilePart):
        kind = part.media_type or "unknown type"
        if part.raw is not None:
            return f"[file {part.filename or '(unnamed)'}: {kind}, {len(part.raw)} bytes]"
        return f"[file {part.url}: {kind}]"
    return part.text


def parts_text(parts: Iterable[Part]) -> str:
    return "\n".join(_part_text(part) for part in parts)


def _describe_task(task: Task) -> list[str]:
    """Human lines: id, state, status message, artifacts' parts."""
    lines = [f"task {task.id} ({state_name(task.status.state)})  context {task.context_id}"]
    if task.status.message is not None and task.status.message.text:
        lines.append(f"  status: {task.status.message.text}")
    for artifact in task.artifacts:
        text = parts_text(artifact.parts)
        lines.append(text if text else f"  [artifact {artifact.artifact_id}: no parts]")
    return lines


def show_result(out: Output, result: Task | Message | AgentCard) -> int:
    if out.as_json:
        out.json(encode(result, "1.0"))
    elif isinstance(result, Message):
        out.line(parts_text(result.parts))
    elif isinstance(result, AgentCard):
        out.line(_describe_card(result))
    else:
        out.line("\n".join(_describe_task(result)))
    return task_exit(result) if isinstance(result, Task) else EXIT_OK


def _describe_card(card: AgentCard) -> str:
    lines = (
        [f"{card.name} {card.version}", card.description]
        if card.description
        else [f"{card.name} {card.version}"]
    )
    for interface in card.supported_interfaces:
        lines.append(
            f"  {interface.protocol_binding} {interface.protocol_version}  {interface.url}"
        )
    caps = card.capabilities
    lines.append(f"  streaming={bool(caps.streaming)} push={bool(caps.push_notifications)}")
    for skill in card.skills:
        lines.append(f"  - {skill.id}: {skill.description or skill.name}")
    return "\n".join(lines)


def _event_line(event: StreamEvent) -> str:
    if isinstance(event, TaskStatusUpdateEvent):
        text = event.status.message.text if event.status.message else ""
        return f"[{state_name(event.status.state)}] {text}".rstrip()
    if isinstance(event, TaskArtifactUpdateEvent):
        return parts_text(event.artifact.parts)
    if isinstance(event, Message):
        return parts_text(event.parts)
    return f"[{state_name(event.status.state)}] task {event.id}"


def show_event(out: Output, event: StreamEvent) -> None:
    """One event: a JSON line (1.0 StreamResponse), or its human line."""
    if out.as_json:
        out.json(encode_stream_event(event, "1.0"))
    else:
        out.line(_event_line(event))


def stream_events(out: Output, events: Iterable[StreamEvent]) -> int:
    """Print each event; the exit code follows the last known task state."""
    code = EXIT_OK
    for event in events:
        show_event(out, event)
        if isinstance(event, (Task, TaskStatusUpdateEvent)):
            state = event.status.state
            code = (
                EXIT_OK
                if state is TaskState.COMPLETED
                else EXIT_INTERRUPTED
                if state.is_interrupted
                else EXIT_TASK_FAILED
                if state.is_terminal
                else code
            )
    return code
