"""Messages, their parts, artifacts, tasks and the stream events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from .._jsonvalue import JSONValue
from ._base import Role, TaskState, _model


@_model
class TextPart:
    text: str
    media_type: str | None = None
    metadata: Mapping[str, JSONValue] | None = None


@_model
class FilePart:
    """A file given inline (``raw`` bytes) or by ``url``: exactly one of the two."""

    raw: bytes | None = None
    url: str | None = None
    filename: str | None = None
    media_type: str | None = None
    metadata: Mapping[str, JSONValue] | None = None

    def __post_init__(self) -> None:
        if (self.raw is None) == (self.url is None):
            raise ValueError("FilePart needs exactly one of raw or url")


@_model
class DataPart:
    """Structured data. 1.0 allows any JSON value; 0.3 only an object."""

    data: JSONValue
    media_type: str | None = None
    metadata: Mapping[str, JSONValue] | None = None


Part = TextPart | FilePart | DataPart


@_model
class Message:
    message_id: str
    role: Role
    parts: Sequence[Part]
    context_id: str | None = None
    task_id: str | None = None
    reference_task_ids: Sequence[str] = ()
    extensions: Sequence[str] = ()
    metadata: Mapping[str, JSONValue] | None = None

    @property
    def text(self) -> str:
        """The text parts joined by newlines ("" when there are none)."""
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))


@_model
class Artifact:
    artifact_id: str
    parts: Sequence[Part]
    name: str | None = None
    description: str | None = None
    extensions: Sequence[str] = ()
    metadata: Mapping[str, JSONValue] | None = None


@_model
class TaskStatus:
    state: TaskState
    message: Message | None = None
    timestamp: datetime | None = None


@_model
class Task:
    id: str
    context_id: str
    status: TaskStatus
    artifacts: Sequence[Artifact] = ()
    history: Sequence[Message] = ()
    metadata: Mapping[str, JSONValue] | None = None
    #: dev-1.1 preview: +1 per state or artifact change, from 1 (None: not served).
    generation: int | None = None


@_model
class TaskStatusUpdateEvent:
    """A status change. ``final`` exists only on the 0.3 wire; 1.0 ignores it."""

    task_id: str
    context_id: str
    status: TaskStatus
    final: bool = False
    metadata: Mapping[str, JSONValue] | None = None
    #: The task's generation after this change (dev-1.1 preview; None: not served).
    generation: int | None = None


@_model
class TaskArtifactUpdateEvent:
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: Mapping[str, JSONValue] | None = None
    #: The task's generation after this change (dev-1.1 preview; None: not served).
    generation: int | None = None


#: What one stream event carries (1.0 ``StreamResponse``).
StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
#: What SendMessage answers (1.0 ``SendMessageResponse``).
SendResult = Task | Message
