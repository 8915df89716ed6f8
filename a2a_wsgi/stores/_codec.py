"""Models as JSON text for the SQL stores, in the stores' own encoding (:mod:`.encoding`).

Rows written before that encoding hold the 0.3 wire shape (status timestamps
at full microsecond precision); they are still read, through the wire
decoder, and the next save of the task rewrites them in the stores' encoding.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, TypeVar

from a2a_core import wire
from a2a_core.models import (
    DataPart,
    FilePart,
    Part,
    StreamEvent,
    Task,
    TaskPushNotificationConfig,
    TextPart,
)

from ._encoding import from_document, is_document, to_document

__all__ = [
    "dump_task",
    "load_task",
    "dump_event",
    "load_event",
    "dump_push_config",
    "load_push_config",
    "dump_part",
    "load_part",
]

_T = TypeVar("_T")


def _dump(value: object) -> str:
    return json.dumps(to_document(value), separators=(",", ":"), ensure_ascii=False)


def _load(text: str | bytes, cls: type[_T] | tuple[type, ...]) -> tuple[bool, Any]:
    """(True, the value) for a document in the stores' encoding; (False, the parsed JSON)
    for a legacy row."""
    data = json.loads(text)
    if not is_document(data):
        return False, data
    value = from_document(data)
    if not isinstance(value, cls):
        raise TypeError(f"stored {type(value).__name__} where a {cls} was expected")
    return True, value


def dump_task(task: Task) -> str:
    return _dump(task)


def load_task(text: str | bytes) -> Task:
    ours, value = _load(text, Task)
    return value if ours else wire.decode(Task, value)


def dump_part(part: Part) -> str:
    return _dump(part)


def load_part(text: str | bytes) -> Part:
    # Parts have rows of their own only in the stores' encoding (schema 5 on).
    _, value = _load(text, (TextPart, FilePart, DataPart))
    return value  # type: ignore[no-any-return]


def dump_event(event: StreamEvent) -> str:
    return _dump(event)


def load_event(text: str | bytes) -> StreamEvent:
    ours, value = _load(text, (Task, *_EVENT_TYPES))
    return value if ours else wire.decode_stream_event(value)


def dump_push_config(config: TaskPushNotificationConfig) -> str:
    return _dump(config)


def load_push_config(text: str | bytes) -> TaskPushNotificationConfig:
    ours, value = _load(text, TaskPushNotificationConfig)
    if ours:
        return value  # type: ignore[no-any-return]
    # Legacy rows: the 1.0 wire shape plus the dialect the config was created in.
    config = wire.decode(TaskPushNotificationConfig, value)
    version = value.get("protocolVersion")
    return replace(config, protocol_version=version) if isinstance(version, str) else config


def _event_types() -> tuple[type, ...]:
    from a2a_core.models import Message, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

    return (Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)


_EVENT_TYPES = _event_types()
