"""Models as JSON text for the SQL stores (SQLite here, PostgreSQL in its own module).

The 0.3 wire shapes are reused (they keep a status update's ``final`` flag),
with one change: status timestamps are written at full microsecond precision,
because the wire's millisecond form would reorder tasks and break list cursors.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from a2a_core import wire
from a2a_core.models import (
    StreamEvent,
    Task,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
)

from .base import as_utc

__all__ = [
    "dump_task",
    "load_task",
    "dump_event",
    "load_event",
    "dump_push_config",
    "load_push_config",
]

_VERSION = "0.3"


def _exact_status(data: dict[str, Any], status: TaskStatus) -> None:
    """Replace the wire's millisecond timestamp by the exact one."""
    if status.timestamp is not None:
        data["status"]["timestamp"] = as_utc(status.timestamp).isoformat()


def dump_task(task: Task) -> str:
    data = wire.encode(task, _VERSION)
    _exact_status(data, task.status)
    return json.dumps(data, separators=(",", ":"))


def load_task(text: str) -> Task:
    return wire.decode(Task, json.loads(text))


def dump_event(event: StreamEvent) -> str:
    data = wire.encode_stream_event(event, _VERSION)
    if isinstance(event, TaskStatusUpdateEvent):
        _exact_status(data, event.status)
    return json.dumps(data, separators=(",", ":"))


def load_event(text: str) -> StreamEvent:
    return wire.decode_stream_event(json.loads(text))


def dump_push_config(config: TaskPushNotificationConfig) -> str:
    """1.0 shape (the 0.3 one has no tenant), plus the dialect it was created in."""
    data = wire.encode(config, "1.0")
    if config.protocol_version is not None:
        data["protocolVersion"] = config.protocol_version
    return json.dumps(data, separators=(",", ":"))


def load_push_config(text: str) -> TaskPushNotificationConfig:
    data = json.loads(text)
    config = wire.decode(TaskPushNotificationConfig, data)
    version = data.get("protocolVersion")
    return replace(config, protocol_version=version) if isinstance(version, str) else config
