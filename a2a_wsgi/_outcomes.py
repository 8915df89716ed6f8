"""The outcomes an agent answers with, and the helpers that build them (see :mod:`a2a_wsgi._agent`).

Each outcome is a small frozen class; the runtime turns it into task
transitions. The helpers turn terse content (strings, Parts, lists of them)
into Parts and refuse an empty reply, which the wire forbids.

These names mean only this: what the protocol core's handlers answer is another thing,
:class:`a2a_core._operations.Result` or :class:`~a2a_core._operations.Events`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from a2a_core.models import DataPart, FilePart, Part, TextPart

__all__ = [
    "AuthRequired", "Failure", "InputRequired", "MessageReply", "Outcome", "PartLike", "Rejected",
    "Reply", "Stream", "Working", "as_outcome", "auth_required", "error", "input_required",
    "message", "reject", "reply", "stream", "to_parts", "working",
]

#: What the helpers accept as content: a string (-> TextPart), a Part, or a list of those.
PartLike = str | TextPart | FilePart | DataPart | Sequence[Any]

_PART_TYPES = (TextPart, FilePart, DataPart)


def to_parts(*items: Any) -> tuple[Part, ...]:
    """Flatten strings, Parts and lists of them into Parts, so agents can be terse."""
    parts: list[Part] = []
    for item in items:
        if item.__class__ in _PART_TYPES:  # (exactly a part: the usual item, no call)
            parts.append(item)
        elif isinstance(item, str):
            parts.append(TextPart(text=item))
        elif isinstance(item, _PART_TYPES):
            parts.append(item)
        elif isinstance(item, (list, tuple)):
            parts.extend(to_parts(*item))
        else:
            raise TypeError(f"cannot use {type(item).__name__} as a message part")
    return tuple(parts)


def _non_empty(items: tuple[Any, ...], helper: str) -> tuple[Part, ...]:
    """Parts for an outcome that must carry content (the wire forbids empty parts)."""
    parts = to_parts(*items)
    if not parts:
        raise ValueError(f"{helper}() needs at least one part")
    return parts


# -- outcomes --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reply:
    """Complete the task with one artifact holding ``parts``."""

    parts: tuple[Part, ...]
    artifact_name: str | None = None


@dataclass(frozen=True, slots=True)
class InputRequired:
    """Ask the caller for more input; the prompt becomes the status message."""

    parts: tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class AuthRequired:
    """Ask the caller to authenticate; the prompt becomes the status message."""

    parts: tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class Stream:
    """Send each part of ``source`` as it comes, then complete."""

    source: Iterable[Any]
    artifact_name: str | None = None


@dataclass(frozen=True, slots=True)
class Failure:
    """Fail the task with status message "Error: <reason>"."""

    reason: str


@dataclass(frozen=True, slots=True)
class Rejected:
    """Refuse the task; the parts explain why."""

    parts: tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class Working:
    """Leave the task WORKING, optionally with a fresh status text."""

    text: str | None = None


@dataclass(frozen=True, slots=True)
class MessageReply:
    """Answer with a bare Message; no task is kept."""

    parts: tuple[Part, ...]


#: What handle_message answers besides a str or None: exactly these classes (closed).
Outcome = (
    Reply | InputRequired | AuthRequired | Stream | Failure | Rejected | Working | MessageReply
)
_OUTCOME_TYPES = (
    Reply, InputRequired, AuthRequired, Stream, Failure, Rejected, Working, MessageReply
)


def reply(*parts: PartLike, artifact_name: str | None = None) -> Reply:
    """Complete the task with one artifact holding ``parts``."""
    return Reply(_non_empty(parts, "reply"), artifact_name)


def input_required(*parts: PartLike) -> InputRequired:
    """Move the task to input-required with ``parts`` as the prompt."""
    return InputRequired(_non_empty(parts, "input_required"))


def auth_required(*parts: PartLike) -> AuthRequired:
    """Move the task to auth-required with ``parts`` as the prompt."""
    return AuthRequired(_non_empty(parts, "auth_required"))


def stream(source: Iterable[Any], *, artifact_name: str | None = None) -> Stream:
    """Stream the parts ``source`` yields (str or Part) as chunks of one artifact."""
    return Stream(source, artifact_name)


def error(reason: object) -> Failure:
    """Fail the task; ``reason`` is shown to the caller as "Error: <reason>"."""
    return Failure(str(reason))


def reject(*parts: PartLike) -> Rejected:
    """Reject the task, explaining why in ``parts``."""
    return Rejected(_non_empty(parts, "reject"))


def working(text: str | None = None) -> Working:
    """Keep the task WORKING; a blocking send returns it at once."""
    return Working(text)


def message(*parts: PartLike) -> MessageReply:
    """Reply with a bare Message instead of a task."""
    return MessageReply(_non_empty(parts, "message"))


def as_outcome(value: object) -> Outcome | None:
    """Normalise what handle_message returned: str means reply; None is kept as None."""
    if value is None or value.__class__ in _OUTCOME_TYPES or isinstance(value, _OUTCOME_TYPES):
        return value
    if isinstance(value, str):
        return Reply((TextPart(text=value),))
    raise TypeError(
        f"handle_message returned {type(value).__name__}; return an outcome such as reply(...)"
    )
