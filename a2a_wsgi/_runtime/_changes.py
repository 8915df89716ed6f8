"""Change functions: pure ``task -> (new task, events)`` steps built on :mod:`a2a_core._tasks`.

A change may run more than once (a compare-and-set retry re-applies it to the
re-read task), so it decides from the task it is given, never from what it saw
before. Ids and timestamps come from the runtime's id factory and clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from a2a_core._tasks import (
    ACTIVE_STATES,
    INTERRUPTED_STATES,
    TERMINAL_STATES,
    append_message,
    apply_event,
)
from a2a_core.errors import InvalidParamsError
from a2a_core.models import (
    Artifact,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

from .._agent import to_parts
from ._defaults import Change

__all__ = ["Changes", "unless_terminal"]

_Result = tuple[Task, tuple[StreamEvent, ...]]
#: The states whose status update is ``final`` (0.3): terminal or interrupted.
_FINAL_STATES = TERMINAL_STATES | INTERRUPTED_STATES


def unless_terminal(change: Change) -> Change:
    """``change``, except on a task that has already ended (the first terminal state wins)."""

    def guarded(task: Task) -> _Result:
        return (task, ()) if task.status.state.is_terminal else change(task)

    return guarded


class Changes:
    """Builds the changes the runtime applies, stamping them with its clock and ids."""

    def __init__(self, clock: Callable[[], datetime], new_id: Callable[[str], str]) -> None:
        self.clock, self.new_id = clock, new_id

    def status(self, state: TaskState, message: Message | None = None) -> Change:
        """Move to ``state``; a no-op (no event) when apply_event leaves the task as it is."""

        def change(task: Task) -> _Result:
            status = TaskStatus(state=state, message=message, timestamp=self.clock())
            event = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=status,
                final=state in _FINAL_STATES,
            )
            updated = apply_event(task, event)
            return (task, ()) if updated is task else (updated, (event,))

        return change

    def leave_submitted(self) -> Change:
        """WORKING for a SUBMITTED task, nothing for any other (agents run on WORKING tasks)."""
        working = self.status(TaskState.WORKING)

        def change(task: Task) -> _Result:
            return working(task) if task.status.state is TaskState.SUBMITTED else (task, ())

        return change

    def agent_status(self, state: TaskState, message: Message | None) -> Change:
        """An agent's emit_status: a bare WORKING on a WORKING task says nothing new."""
        update = self.status(state, message)

        def change(task: Task) -> _Result:
            if state is task.status.state is TaskState.WORKING and message is None:
                return task, ()
            return update(task)

        return change

    def artifact(self, artifact: Artifact, *, append: bool, last_chunk: bool) -> Change:
        """Add (or extend) an artifact, as one artifact-update event."""

        def change(task: Task) -> _Result:
            event = TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id,
                                            artifact=artifact, append=append,
                                            last_chunk=last_chunk)
            return apply_event(task, event), (event,)

        return change

    def continuation(self, msg: Message) -> Change:
        """A follow-up message: append it and move to WORKING (runtime Rule 3)."""
        working = self.status(TaskState.WORKING)

        def change(task: Task) -> _Result:
            if msg.context_id is not None and msg.context_id != task.context_id:
                raise InvalidParamsError(
                    f"message.contextId {msg.context_id!r} does not match task {task.id}",
                    field_violations={"params.message.contextId": "does not match the task"},
                )
            return working(append_message(task, msg))

        return change

    def completion(
        self, parts: Sequence[Part], *, artifact_id: str | None, name: str | None = None
    ) -> Change:
        """COMPLETED with the agent's message in history, plus one artifact when given an id."""
        reply_id = self.new_id("msg")
        complete = self.status(TaskState.COMPLETED)

        def change(task: Task) -> _Result:
            events: tuple[StreamEvent, ...] = ()
            if artifact_id is not None:
                artifact = Artifact(artifact_id=artifact_id, parts=tuple(parts), name=name)
                events = (TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id,
                                                  artifact=artifact, last_chunk=True),)
                task = apply_event(task, events[0])
            if parts:  # (bound to the task already: append_message need not copy it)
                task = append_message(task, Message(message_id=reply_id, role=Role.AGENT,
                                                    parts=tuple(parts), task_id=task.id,
                                                    context_id=task.context_id))
            done, status_events = complete(task)
            return done, events + status_events

        return change

    def failure(self, task_id: str, context_id: str, reason: str) -> Change:
        """FAILED with "Error: <reason>" as the agent's status message."""
        message = self.agent_message(task_id, context_id, (f"Error: {reason}",))
        return self.status(TaskState.FAILED, message)

    def complete_if_active(self) -> Change:
        """Returning None: complete a task the agent left WORKING, keep any other state."""
        complete = self.status(TaskState.COMPLETED)

        def change(task: Task) -> _Result:
            return complete(task) if task.status.state in ACTIVE_STATES else (task, ())

        return change

    def agent_message(self, task_id: str, context_id: str, parts: Sequence[Any]) -> Message:
        """A message from the agent, bound to the task."""
        return Message(message_id=self.new_id("msg"), role=Role.AGENT, parts=to_parts(*parts),
                       task_id=task_id, context_id=context_id)
