"""The task lifecycle: which state may follow which, and how updates change a task.

Every function here takes a :class:`~a2a_core.models.Task` and returns a new one;
nothing is mutated, nothing is stored, no clock is read. The runtime owns
storage and time and passes ids and timestamps in.
"""

# Theory of operation
# -------------------
#
# A task is a small state machine. The rules are kept as *data* (``TRANSITIONS``)
# so that they can be read, tested exhaustively and drawn, the way h11 keeps its
# connection rules in tables instead of ``if`` chains.
#
# Rule 1: the table is the law. A status update from state A to state B is legal
# exactly when ``B in TRANSITIONS[A]``. Anything else raises InvalidTransitionError
# and leaves the task untouched (functions return new tasks, so "untouched" is
# automatic: the caller still holds the old one).
#
#     SUBMITTED       -> WORKING, INPUT_REQUIRED, AUTH_REQUIRED, any terminal
#     WORKING         -> WORKING (a fresh status message), INPUT_REQUIRED,
#                        AUTH_REQUIRED, any terminal
#     INPUT_REQUIRED  -> WORKING (the continuation), INPUT_REQUIRED (ask again),
#                        any terminal (cancel, failure, rejection)
#     AUTH_REQUIRED   -> WORKING, AUTH_REQUIRED, any terminal
#     CANCELED        -> CANCELED (a re-cancel, idempotent)
#     COMPLETED, FAILED, REJECTED -> nothing
#     UNKNOWN         -> nothing, and nothing -> UNKNOWN
#
# An interrupted state does not jump straight to the other interrupted state:
# the continuation that resolves the interruption runs in WORKING first (a
# runtime moves a task to WORKING before it calls the agent).
# UNKNOWN is a decoding fallback for a state we could not read; it is never a
# state a task may be put in or leave by a rule.
#
# Rule 2: terminal means frozen. No status update, no artifact update and no new
# message is accepted once a task is COMPLETED, CANCELED, FAILED or REJECTED.
# The one exception is CANCELED -> CANCELED, which returns the task *unchanged*
# (the first cancel's timestamp stays; re-canceling is a no-op, not an update).
# A message to a terminal task raises UnsupportedOperationError (-32004 on the
# wire, as 1.0 §3.4 asks), not InvalidTransitionError: it is the client's
# request that is unsupported, not our own bookkeeping that is wrong.
#
# Rule 3: history is the conversation, in order. ``new_task`` starts it with the
# user's message; ``append_message`` adds a continuation (user) or an agent reply
# given without a status message; ``apply_status`` adds the status message when
# it is an *agent* message whose id is not already the last entry. So an agent
# that asks for input both appends its question and shows it as status.message
# (an agent's input_required), and a runtime that already appended the message
# does not get it twice. A user-role status message is kept on the status but
# not added to history (user turns enter history only through their own call).
#
# Rule 4: artifacts are keyed by artifact_id. ``append=False`` replaces the
# artifact with that id in place (or adds it at the end); ``append=True``
# extends its parts (or adds it when no such artifact exists yet: dropping the
# chunk, as the Python SDK does, would lose output a sloppy agent meant to
# send). ``last_chunk`` is not recorded on the model.
#
# Every message stored on a task carries the task's id and context id. A message
# that names a different task or context is a caller bug (ValueError).

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._jsonvalue import JSONObject, JSONValue
from .errors import InvalidTransitionError, UnsupportedOperationError
from .models import (
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    evolve,
)

__all__ = [
    "TERMINAL_STATES",
    "INTERRUPTED_STATES",
    "ACTIVE_STATES",
    "TRANSITIONS",
    "AUTH_METADATA_KEY",
    "RESERVED_METADATA_KEYS",
    "can_transition",
    "new_task",
    "apply_status",
    "apply_event",
    "append_message",
    "trim_history",
    "strip_artifacts",
    "is_cancelable",
    "merge_metadata",
    "protect_reserved",
    "with_identity",
    "TransitionEvent",
    "transitions_between",
]

_S = TaskState

TERMINAL_STATES: frozenset[TaskState] = frozenset(
    {_S.COMPLETED, _S.CANCELED, _S.FAILED, _S.REJECTED}
)
INTERRUPTED_STATES: frozenset[TaskState] = frozenset({_S.INPUT_REQUIRED, _S.AUTH_REQUIRED})
ACTIVE_STATES: frozenset[TaskState] = frozenset({_S.SUBMITTED, _S.WORKING})

#: state -> the states that may follow it. A state missing here has no successor.
TRANSITIONS: Mapping[TaskState, frozenset[TaskState]] = {
    _S.SUBMITTED: frozenset({_S.WORKING}) | INTERRUPTED_STATES | TERMINAL_STATES,
    _S.WORKING: frozenset({_S.WORKING}) | INTERRUPTED_STATES | TERMINAL_STATES,
    _S.INPUT_REQUIRED: frozenset({_S.WORKING, _S.INPUT_REQUIRED}) | TERMINAL_STATES,
    _S.AUTH_REQUIRED: frozenset({_S.WORKING, _S.AUTH_REQUIRED}) | TERMINAL_STATES,
    _S.CANCELED: frozenset({_S.CANCELED}),
    _S.COMPLETED: frozenset(),
    _S.FAILED: frozenset(),
    _S.REJECTED: frozenset(),
    _S.UNKNOWN: frozenset(),
}

#: States that accept no artifact and no message: terminal, plus the unreadable UNKNOWN.
_FROZEN_STATES = TERMINAL_STATES | {_S.UNKNOWN}

#: The metadata key the runtime puts the authenticated identity under.
AUTH_METADATA_KEY = "a2a.auth"
#: Metadata keys only the server may set; caller-supplied values are dropped.
RESERVED_METADATA_KEYS: frozenset[str] = frozenset({AUTH_METADATA_KEY})


_NO_STATES: frozenset[TaskState] = frozenset()


def can_transition(a: TaskState, b: TaskState) -> bool:
    """True when the table lets a task in state ``a`` move to ``b``."""
    return b in TRANSITIONS.get(a, _NO_STATES)


# -- building and updating tasks -------------------------------------------------------


def _bind(message: Message, task_id: str, context_id: str) -> Message:
    """Fill in the message's ids so history is self-describing; refuse a foreign message."""
    if message.task_id is not None and message.task_id != task_id:
        raise ValueError(f"message {message.message_id!r} belongs to task {message.task_id!r}")
    if message.context_id is not None and message.context_id != context_id:
        raise ValueError(
            f"message {message.message_id!r} belongs to context {message.context_id!r}"
        )
    if message.task_id == task_id and message.context_id == context_id:
        return message
    return evolve(message, task_id=task_id, context_id=context_id)


def new_task(
    *,
    task_id: str,
    context_id: str,
    message: Message,
    timestamp: datetime,
    metadata: Mapping[str, JSONValue] | None = None,
) -> Task:
    """A SUBMITTED task whose history is the message that created it."""
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=TaskState.SUBMITTED, timestamp=timestamp),
        history=(_bind(message, task_id, context_id),),
        metadata=dict(metadata) if metadata is not None else None,
    )


def _check_transition(task: Task, target: TaskState) -> None:
    """Raise InvalidTransitionError unless the table allows ``task`` to reach ``target``."""
    current = task.status.state
    if target not in TRANSITIONS.get(current, _NO_STATES):  # (can_transition, inlined)
        raise InvalidTransitionError(
            f"task {task.id!r} cannot go from {current.name} to {target.name}"
        )


def apply_status(task: Task, status: TaskStatus) -> Task:
    """Move the task to ``status``, adding an agent status message to history (Rule 3).

    Raises InvalidTransitionError when the table forbids the change. A re-cancel
    of a CANCELED task returns the task unchanged.
    """
    current = task.status.state
    if status.state not in TRANSITIONS.get(current, _NO_STATES):  # (_check_transition, inlined)
        _check_transition(task, status.state)  # raises
    if current is TaskState.CANCELED:
        return task
    message = status.message
    history = task.history  # a tuple (models freeze their sequences)
    if message is not None:
        message = _bind(message, task.id, task.context_id)
        status = evolve(status, message=message)
        if message.role is Role.AGENT and not _is_last(history, message):
            history = (*history, message)
    return evolve(task, status=status, history=history)


def _is_last(history: Sequence[Message], message: Message) -> bool:
    """Is ``message`` (by id) already the newest history entry?"""
    return bool(history) and history[-1].message_id == message.message_id


def apply_event(task: Task, event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> Task:
    """Apply one stream event to the task it names (ids must match: ValueError)."""
    if event.task_id != task.id or event.context_id != task.context_id:
        raise ValueError(
            f"event for task {event.task_id!r}/{event.context_id!r} "
            f"applied to task {task.id!r}/{task.context_id!r}"
        )
    if isinstance(event, TaskStatusUpdateEvent):
        return apply_status(task, event.status)
    if task.status.state in _FROZEN_STATES:
        raise InvalidTransitionError(
            f"task {task.id!r} is {task.status.state.name}: no artifact update allowed"
        )
    return evolve(task, artifacts=_merge_artifact(task.artifacts, event))


def _merge_artifact(
    artifacts: Sequence[Artifact], event: TaskArtifactUpdateEvent
) -> tuple[Artifact, ...]:
    """Replace, extend or add the event's artifact, keyed by artifact_id (Rule 4)."""
    new = event.artifact
    for i, old in enumerate(artifacts):
        if old.artifact_id == new.artifact_id:
            merged = _extend_artifact(old, new) if event.append else new
            return (*artifacts[:i], merged, *artifacts[i + 1 :])
    return (*artifacts, new)


def _extend_artifact(old: Artifact, chunk: Artifact) -> Artifact:
    """Append a chunk's parts; descriptive fields already set win, metadata merges."""
    return evolve(
        old,
        parts=(*old.parts, *chunk.parts),
        name=old.name if old.name is not None else chunk.name,
        description=old.description if old.description is not None else chunk.description,
        extensions=(*old.extensions, *(e for e in chunk.extensions if e not in old.extensions)),
        metadata=merge_metadata(old.metadata, chunk.metadata),
    )


def append_message(task: Task, message: Message) -> Task:
    """Add a message to history without a state change (a continuation or a plain reply).

    A terminal (or UNKNOWN) task cannot be continued: UnsupportedOperationError (-32004).
    """
    if task.status.state in _FROZEN_STATES:
        raise UnsupportedOperationError(
            f"Task {task.id} is {task.status.state.value} and cannot be continued"
        )
    bound = _bind(message, task.id, task.context_id)
    return evolve(task, history=(*task.history, bound))


def trim_history(task: Task, history_length: int | None) -> Task:
    """Keep the ``history_length`` newest messages (None: all; 0: none; negative: ValueError)."""
    if history_length is None:
        return task
    if history_length < 0:
        raise ValueError(f"history_length must be >= 0, got {history_length}")
    if history_length == 0:
        return evolve(task, history=())
    return evolve(task, history=tuple(task.history)[-history_length:])


def strip_artifacts(task: Task) -> Task:
    """The task without artifacts (ListTasks leaves them out unless asked)."""
    return evolve(task, artifacts=())


def is_cancelable(task: Task) -> bool:
    """Can a cancel request succeed? Derived from the table, so a re-cancel is True.

    COMPLETED, FAILED and REJECTED are not cancelable; neither is UNKNOWN, since
    the table never lets a task leave it.
    """
    return can_transition(task.status.state, TaskState.CANCELED)


# -- metadata --------------------------------------------------------------------------


def merge_metadata(*layers: Mapping[str, JSONValue] | None) -> JSONObject | None:
    """Shallow-merge metadata layers, later wins (static, then per request, then per call).

    An empty result is None, so "no metadata" has one spelling.
    """
    merged: JSONObject = {}
    for layer in layers:
        if layer:
            merged.update(layer)
    return merged or None


def protect_reserved(
    metadata: Mapping[str, JSONValue] | None,
    reserved: Iterable[str] = RESERVED_METADATA_KEYS,
) -> JSONObject:
    """Drop keys a caller must not forge (they are the server's to set)."""
    banned = frozenset(reserved)
    return {k: v for k, v in (metadata or {}).items() if k not in banned}


def with_identity(metadata: Mapping[str, JSONValue] | None, identity: Any) -> JSONObject:
    """Replace any caller-supplied ``"a2a.auth"`` with the authenticated identity.

    With ``identity=None`` the key is only removed: an anonymous caller must not
    be able to claim an identity either.
    """
    result = protect_reserved(metadata, (AUTH_METADATA_KEY,))
    if identity is not None:
        result[AUTH_METADATA_KEY] = identity
    return result


# -- transition events -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TransitionEvent:
    """One state change (from, to), for the runtime's logging/metrics hook."""

    task_id: str
    #: None when the task was just created.
    from_state: TaskState | None
    to_state: TaskState
    timestamp: datetime | None


def transitions_between(old: Task | None, new: Task) -> TransitionEvent | None:
    """The state change from ``old`` to ``new``, or None when the state stayed the same.

    ``old=None`` means ``new`` was just created. Different task ids: ValueError.
    """
    if old is not None and old.id != new.id:
        raise ValueError(f"tasks {old.id!r} and {new.id!r} are not the same task")
    from_state = old.status.state if old is not None else None
    if from_state is new.status.state:
        return None
    return TransitionEvent(
        task_id=new.id,
        from_state=from_state,
        to_state=new.status.state,
        timestamp=new.status.timestamp,
    )
