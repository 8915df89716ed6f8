"""The tolerant decoder of models: one reader for both dialects' shapes and spellings.

Output is dialect-specific (:mod:`.v0_3` / :mod:`.v1_0`), but input is not: a
peer may send 0.3 shapes under a 1.0 method name (both are accepted
everywhere), so each model has a single decoder that reads either dialect.
Bad input raises the :func:`~._common.invalid` error naming its JSON path.
Method params and results are read in :mod:`._decode_requests`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._jsonvalue import JSONObject
from ..models import (
    Artifact,
    AuthenticationInfo,
    DataPart,
    FilePart,
    Message,
    Part,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from ._common import DATA_PART_COMPAT, MAX_INT64, invalid, join, shown
from ._enums import parse_role, parse_state
from ._fields import Fields
from ._json import decode_bytes

__all__ = [
    "decode_part",
    "decode_message",
    "decode_artifact",
    "decode_status",
    "decode_task",
    "decode_status_update",
    "decode_artifact_update",
    "decode_stream_event",
    "decode_authentication",
    "decode_push_config",
    "decode_task_push_config",
]

# -- content -----------------------------------------------------------------------------

_PART_KINDS = {"text": "text", "raw": "file", "url": "file", "file": "file", "data": "data"}


def decode_part(data: object, path: str) -> Part:
    """A 0.3 kind-tagged part (file nested) or a 1.0 flat part; kind inferred when missing."""
    f = Fields(data, path, "a part object")
    kind = f.string("kind") or _inferred_part_kind(f)
    metadata = f.struct("metadata")
    f.string("filename")  # (every 1.0 part may name one: a non-string is refused, not dropped)
    if kind == "text":
        text = f.required_string("text", allow_empty=True)
        return TextPart(text=text, media_type=f.string("mediaType", "mimeType"), metadata=metadata)
    if kind == "file":
        return _decode_file_part(f, metadata)
    if kind == "data":
        return _decode_data_part(f, metadata)
    raise invalid(join(path, "kind"), f"unknown part kind {shown(kind)}")


def _inferred_part_kind(f: Fields) -> str:
    """No ``kind``: the content member says (a pre-0.3 ``type`` must at least be known)."""
    legacy = f.string("type")  # the discriminator before 0.3 named it ``kind``
    if legacy is not None and legacy not in ("text", "file", "data"):
        raise invalid(join(f.path, "type"), f"unknown part kind {shown(legacy)}")
    present = [name for name in ("text", "raw", "url", "file") if f.has(name)]
    present += ["data"] if f.contains("data") else []
    if not present:
        raise invalid(f.path, "a part needs one of text, raw, url, data (0.3: file)")
    if len(present) > 1:
        raise invalid(f.path, f"a part holds exactly one content member, got {', '.join(present)}")
    return _PART_KINDS[present[0]]


def _decode_file_part(f: Fields, metadata: JSONObject | None) -> FilePart:
    """0.3 ``file: {bytes|uri, name, mimeType}`` or 1.0 ``raw|url, filename, mediaType``."""
    holder = f
    if f.has("file"):
        file_path, file = f.find("file")
        holder = Fields(file, file_path, "a file object")
    raw_path, raw = holder.find("raw", "bytes")
    url = holder.string("url", "uri")
    if (raw is None) == (url is None):
        raise invalid(
            holder.path, "a file part needs exactly one of raw (0.3: bytes) or url (0.3: uri)"
        )
    return FilePart(
        raw=None if raw is None else decode_bytes(raw, raw_path),
        url=url,
        filename=holder.string("filename", "name"),
        media_type=holder.string("mediaType", "mimeType"),
        metadata=metadata,
    )


def _decode_data_part(f: Fields, metadata: JSONObject | None) -> DataPart:
    """Any JSON value; undo the 0.3 ``{"value": x}`` wrapping flagged by data_part_compat."""
    if not f.contains("data"):
        raise invalid(join(f.path, "data"), "required field is missing")
    data = f.data["data"]
    if metadata and metadata.get(DATA_PART_COMPAT) is True and isinstance(data, Mapping):
        if set(data) == {"value"}:
            data = data["value"]
            metadata = {k: v for k, v in metadata.items() if k != DATA_PART_COMPAT} or None
    return DataPart(data=data, media_type=f.string("mediaType", "mimeType"), metadata=metadata)


def decode_message(data: object, path: str) -> Message:
    f = Fields(data, path, "a message object")
    f.expect_kind("message")
    return Message(
        message_id=f.required_string("messageId"),
        role=f.one("role", parse_role),
        parts=f.objects("parts", decode_part, required=True),
        context_id=f.string("contextId"),
        task_id=f.string("taskId"),
        reference_task_ids=f.strings("referenceTaskIds"),
        extensions=f.strings("extensions"),
        metadata=f.struct("metadata"),
    )


def decode_artifact(data: object, path: str) -> Artifact:
    f = Fields(data, path, "an artifact object")
    return Artifact(
        artifact_id=f.required_string("artifactId"),
        parts=f.objects("parts", decode_part, required=True),
        name=f.string("name"),
        description=f.string("description"),
        extensions=f.strings("extensions"),
        metadata=f.struct("metadata"),
    )


def decode_status(data: object, path: str) -> TaskStatus:
    f = Fields(data, path, "a task status object")
    return TaskStatus(
        state=f.one("state", parse_state),
        message=f.optional("message", decode_message),
        timestamp=f.timestamp("timestamp"),
    )


def decode_task(data: object, path: str) -> Task:
    f = Fields(data, path, "a task object")
    f.expect_kind("task")
    return Task(
        id=f.required_string("id"),
        context_id=f.string("contextId") or "",
        status=f.one("status", decode_status),
        artifacts=f.objects("artifacts", decode_artifact),
        history=f.objects("history", decode_message),
        metadata=f.struct("metadata"),
        generation=f.integer("generation", minimum=0, maximum=MAX_INT64),
    )


def decode_status_update(data: object, path: str) -> TaskStatusUpdateEvent:
    """``final`` is 0.3 only; absent (1.0) reads as False."""
    f = Fields(data, path, "a status update object")
    f.expect_kind("status-update")
    return TaskStatusUpdateEvent(
        task_id=f.required_string("taskId"),
        context_id=f.string("contextId") or "",
        status=f.one("status", decode_status),
        final=bool(f.boolean("final")),
        metadata=f.struct("metadata"),
        generation=f.integer("generation", minimum=0, maximum=MAX_INT64),
    )


def decode_artifact_update(data: object, path: str) -> TaskArtifactUpdateEvent:
    f = Fields(data, path, "an artifact update object")
    f.expect_kind("artifact-update")
    return TaskArtifactUpdateEvent(
        task_id=f.required_string("taskId"),
        context_id=f.string("contextId") or "",
        artifact=f.one("artifact", decode_artifact),
        append=bool(f.boolean("append")),
        last_chunk=bool(f.boolean("lastChunk")),
        metadata=f.struct("metadata"),
        generation=f.integer("generation", minimum=0, maximum=MAX_INT64),
    )


#: 0.3 ``kind`` -> decoder of the bare object.
_EVENT_KINDS: Mapping[str, Callable[[Any, str], StreamEvent]] = {
    "task": decode_task,
    "message": decode_message,
    "status-update": decode_status_update,
    "artifact-update": decode_artifact_update,
}
#: 1.0 StreamResponse member -> decoder of its value.
_EVENT_MEMBERS: Mapping[str, Callable[[Any, str], StreamEvent]] = {
    "task": decode_task,
    "message": decode_message,
    "statusUpdate": decode_status_update,
    "artifactUpdate": decode_artifact_update,
}


def decode_stream_event(data: object, path: str) -> StreamEvent:
    """A 1.0 StreamResponse wrapper or a bare 0.3 object (by ``kind``, else by its members)."""
    f = Fields(data, path, "a stream event object")
    kind = f.string("kind")
    if kind is not None:
        if kind not in _EVENT_KINDS:
            raise invalid(join(path, "kind"), f"unknown event kind {shown(kind)}")
        return _EVENT_KINDS[kind](data, path)
    wrapped = [name for name in _EVENT_MEMBERS if f.has(name)]
    if len(wrapped) > 1:
        raise invalid(path, f"a stream response holds exactly one member, got {', '.join(wrapped)}")
    if wrapped:
        return f.one(wrapped[0], _EVENT_MEMBERS[wrapped[0]])
    if f.has("artifact"):
        return decode_artifact_update(data, path)
    if f.has("status"):
        return decode_task(data, path) if f.has("id") else decode_status_update(data, path)
    if f.has("messageId") or f.has("parts"):
        return decode_message(data, path)
    raise invalid(path, "not a task, message, status update or artifact update")


# -- push notifications ------------------------------------------------------------------


def decode_authentication(data: object, path: str) -> AuthenticationInfo:
    """0.3 ``schemes: [...]`` or 1.0 ``scheme: "..."``."""
    f = Fields(data, path, "an authentication object")
    if f.has("schemes"):
        schemes = f.strings("schemes")
    elif f.has("scheme"):
        scheme = f.string("scheme")
        schemes = (scheme,) if scheme else ()
    else:
        raise invalid(join(path, "scheme"), "required field is missing")
    return AuthenticationInfo(schemes=schemes, credentials=f.string("credentials"))


def decode_push_config(data: object, path: str) -> PushNotificationConfig:
    """The webhook itself: 0.3 PushNotificationConfig, or a flat 1.0 config (taskId ignored)."""
    f = Fields(data, path, "a push notification config object")
    if f.has("pushNotificationConfig"):
        return f.one("pushNotificationConfig", decode_push_config)
    return PushNotificationConfig(
        url=f.required_string("url"),
        id=f.string("id"),
        token=f.string("token"),
        authentication=f.optional("authentication", decode_authentication),
    )


def decode_task_push_config(data: object, path: str) -> TaskPushNotificationConfig:
    """0.3 nested ``{taskId, pushNotificationConfig}`` or 1.0 flat ``{taskId, url, ...}``."""
    f = Fields(data, path, "a task push notification config object")
    return TaskPushNotificationConfig(
        task_id=f.required_string("taskId"),
        push_notification_config=decode_push_config(data, path),
        tenant=f.string("tenant"),
    )
