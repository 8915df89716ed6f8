"""What both wire dialects share: primitives, enum spellings and one tolerant reader.

Output is dialect-specific (``v0_3`` / ``v1_0``), but input is not: a peer may
send 0.3 shapes under a 1.0 method name (the seed accepts both everywhere), so
there is a single decoder that reads either dialect's shapes and spellings.

Every decode error is an :class:`~a2a_core.errors.InvalidParamsError` whose
message starts with the JSON path of the bad field (``params.message.parts[0]``)
and whose ``field_violations`` maps that path to the description, so the
server can answer -32602 with an actionable 1.0 ``BadRequest``.

Proto3 reading rules apply to every dialect: ``null`` is the same as an absent
field, an empty optional string is the same as unset, unknown fields are
ignored, and both lowerCamel and snake_case member names are accepted.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any, TypeVar

from ..errors import InvalidParamsError
from ..models import (
    Artifact,
    AuthenticationInfo,
    CancelTaskRequest,
    DataPart,
    DeleteTaskPushNotificationConfigRequest,
    FilePart,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

__all__ = [
    "VERSIONS",
    "MAX_HISTORY_LENGTH",
    "MAX_TASK_ID_LENGTH",
    "check_version",
    "check_task_id",
    "invalid",
    "format_timestamp",
    "parse_timestamp",
    "encode_bytes",
    "decode_bytes",
    "compact",
    "Fields",
    "STATE_0_3",
    "STATE_1_0",
    "ROLE_0_3",
    "ROLE_1_0",
    "DATA_PART_COMPAT",
    "parse_state",
    "parse_role",
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
    "decode_send_configuration",
    "decode_send_request",
    "decode_get_task",
    "decode_cancel_task",
    "decode_subscribe",
    "decode_list_tasks",
    "decode_list_tasks_response",
    "decode_get_push_config",
    "decode_list_push_configs",
    "decode_list_push_configs_response",
    "decode_delete_push_config",
    "decode_get_extended_card",
]

T = TypeVar("T")

#: The protocol versions the codecs speak.
VERSIONS = ("0.3", "1.0")

#: Largest ``historyLength`` accepted (-32602 above): a bound on what one call may ask
#: for, as the official SDK has (a2a-python#1177); 0 means "no history" (1.0 §3.2.4).
MAX_HISTORY_LENGTH = 1000

#: Longest task id a client may name. Ids are server-generated (``tsk-`` + 32 hex here,
#: UUIDs or ULIDs elsewhere), so 128 leaves room for any sane scheme.
MAX_TASK_ID_LENGTH = 128
#: RFC 3986 unreserved characters plus ``:@+=``: safe in a URL path segment (the REST
#: binding puts the id in ``/tasks/{id}``), in a file or key name and in a log line.
_TASK_ID = re.compile(r"[A-Za-z0-9._~:@+=-]+")

#: 0.3 DataPart.data must be an object: other values travel as {"value": x} with this flag.
DATA_PART_COMPAT = "data_part_compat"


def check_version(version: str) -> str:
    """Refuse anything but "0.3"/"1.0": a typo must not silently pick a dialect."""
    if version not in VERSIONS:
        raise ValueError(f"unsupported protocol version {version!r}; expected one of {VERSIONS}")
    return version


# -- errors and paths --------------------------------------------------------------------


def join(path: str, key: str) -> str:
    """The JSON path of member ``key`` under ``path``."""
    return f"{path}.{key}" if path else key


def invalid(path: str, description: str) -> InvalidParamsError:
    """An InvalidParamsError that names the bad field, for humans and for BadRequest."""
    message = f"{path}: {description}" if path else description
    return InvalidParamsError(message, field_violations={path: description})


def check_task_id(value: str, path: str) -> str:
    """Refuse task ids no server of ours could have issued, before any store sees them.

    A task id from a client is a lookup key: ``/``, ``..``, NUL, CR/LF,
    spaces or megabytes in it can only be an attack on whatever stores or logs
    it (a path, a Redis key, a log line), so it is -32602 rather than -32001.
    """
    if len(value) > MAX_TASK_ID_LENGTH:
        raise invalid(path, f"a task id has at most {MAX_TASK_ID_LENGTH} characters")
    if not _TASK_ID.fullmatch(value) or value.startswith(".") or ".." in value:
        raise invalid(
            path,
            "a task id holds only letters, digits and ._~:@+=- (not starting with '.', no '..')",
        )
    return value


# -- primitives --------------------------------------------------------------------------


def format_timestamp(moment: datetime) -> str:
    """UTC, ``Z``, milliseconds: 1.0 MUST, and harmless for 0.3 readers. Naive means UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    m = moment.astimezone(timezone.utc)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        f".{m.microsecond // 1000:03d}Z"
    )


_FRACTION = re.compile(r"\.(\d+)")


def parse_timestamp(value: Any, path: str) -> datetime:
    """Read ISO 8601 leniently (0.3 examples omit ``Z``; proto emits nanoseconds); naive is UTC."""
    if not isinstance(value, str):
        raise invalid(path, "expected an ISO 8601 timestamp string")
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text, count=1)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise invalid(path, f"not an ISO 8601 timestamp: {_shown(value)}") from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def encode_bytes(raw: bytes) -> str:
    """Standard base64 with padding, as ProtoJSON writes ``bytes``."""
    return base64.b64encode(raw).decode("ascii")


def decode_bytes(value: Any, path: str) -> bytes:
    """Accept standard or URL-safe base64, padded or not (ProtoJSON parsers do)."""
    if not isinstance(value, str):
        raise invalid(path, "expected a base64 string")
    text = "".join(value.split()).replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(path, "not valid base64") from None


def compact(members: Mapping[str, Any]) -> dict[str, Any]:
    """Drop unset members: None and empty sequences (ProtoJSON omits them; so do we)."""
    return {
        k: v for k, v in members.items() if v is not None and not (isinstance(v, list) and not v)
    }


# -- reading objects ---------------------------------------------------------------------

_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")


@functools.lru_cache(maxsize=512)
def _snake(name: str) -> str:
    """Proto snake_case of a lowerCamel member name (memoised: a small, fixed vocabulary)."""
    return _CAMEL_HUMP.sub("_", name).lower()


class Fields:
    """One JSON object being decoded, with the path that error messages name.

    Lookups try each given name in lowerCamel and snake_case; ``null`` counts
    as absent. Paths use the member name the peer actually sent.
    """

    __slots__ = ("data", "path")

    def __init__(self, data: Any, path: str, what: str = "an object") -> None:
        if not isinstance(data, Mapping):
            raise invalid(path, f"expected {what}, got {_json_type(data)}")
        self.data: Mapping[str, Any] = data
        self.path = path

    def find(self, *names: str) -> tuple[str, Any]:
        """(path, value) of the first name present; value None when none is."""
        for name in names:
            for key in (name, _snake(name)):
                if self.data.get(key) is not None:
                    return join(self.path, key), self.data[key]
        return join(self.path, names[0]), None

    def has(self, *names: str) -> bool:
        return self.find(*names)[1] is not None

    def contains(self, name: str) -> bool:
        """Presence even when the value is null (a 1.0 ``data`` part may hold null)."""
        return name in self.data or _snake(name) in self.data

    def required(self, *names: str) -> tuple[str, Any]:
        path, value = self.find(*names)
        if value is None:
            raise invalid(path, "required field is missing")
        return path, value

    def string(self, *names: str) -> str | None:
        """An optional string; "" reads as unset (proto3)."""
        path, value = self.find(*names)
        if value is None:
            return None
        if not isinstance(value, str):
            raise invalid(path, f"expected a string, got {_json_type(value)}")
        return value or None

    def required_string(self, *names: str, allow_empty: bool = False) -> str:
        path, value = self.required(*names)
        if not isinstance(value, str):
            raise invalid(path, f"expected a string, got {_json_type(value)}")
        if not value and not allow_empty:
            raise invalid(path, "must not be empty")
        return value

    def integer(
        self, name: str, *, minimum: int | None = None, maximum: int | None = None
    ) -> int | None:
        """An optional integer; bool is not one. ProtoJSON also allows decimal strings."""
        path, value = self.find(name)
        if value is None:
            return None
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(path, f"expected an integer, got {_json_type(value)}")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise invalid(path, _range_text(minimum, maximum))
        return value

    def boolean(self, name: str) -> bool | None:
        path, value = self.find(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise invalid(path, f"expected a boolean, got {_json_type(value)}")
        return value

    def strings(self, name: str) -> tuple[str, ...]:
        path, value = self.find(name)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise invalid(path, f"expected an array of strings, got {_json_type(value)}")
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise invalid(f"{path}[{index}]", f"expected a string, got {_json_type(item)}")
        return tuple(value)

    def struct(self, name: str) -> dict[str, Any] | None:
        """A free-form object (metadata): kept as the peer sent it."""
        path, value = self.find(name)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise invalid(path, f"expected an object, got {_json_type(value)}")
        return dict(value)

    def timestamp(self, name: str) -> datetime | None:
        path, value = self.find(name)
        return None if value is None else parse_timestamp(value, path)

    def objects(
        self, name: str, decode: Callable[[Any, str], T], *, required: bool = False
    ) -> tuple[T, ...]:
        """A repeated message; ``required`` means present with at least one element."""
        path, value = self.find(name)
        if value is None:
            if required:
                raise invalid(path, "required field is missing")
            return ()
        if not isinstance(value, list):
            raise invalid(path, f"expected an array, got {_json_type(value)}")
        if required and not value:
            raise invalid(path, "must hold at least one element")
        return tuple(decode(item, f"{path}[{index}]") for index, item in enumerate(value))

    def optional(self, name: str, decode: Callable[[Any, str], T]) -> T | None:
        path, value = self.find(name)
        return None if value is None else decode(value, path)

    def expect_kind(self, *kinds: str) -> str | None:
        """A 0.3 ``kind`` may be missing (spec examples omit it) but must not be wrong."""
        path, value = self.find("kind")
        if value is None:
            return None
        if value not in kinds:
            expected = " or ".join(map(repr, kinds))
            raise invalid(path, f"expected kind {expected}, got {_shown(value)}")
        return str(value)


def _json_type(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _shown(value: Any) -> str:
    """A peer's value in an error message: short strings quoted, anything else by type.

    Error messages go back to the peer; echoing a megabyte, or Python's repr
    of a dict, helps nobody.
    """
    if isinstance(value, str):
        return repr(value) if len(value) <= 64 else repr(value[:64]) + "…"
    return _json_type(value)


def _range_text(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"must be between {minimum} and {maximum}"
    if minimum is not None:
        return f"must be >= {minimum}"
    return f"must be <= {maximum}"


# -- enum spellings ----------------------------------------------------------------------

#: 0.3 wire spelling of each state (lower-case kebab).
STATE_0_3: Mapping[TaskState, str] = {state: state.value.replace("_", "-") for state in TaskState}
#: 1.0 ProtoJSON enum names; UNKNOWN is the proto's zero value.
STATE_1_0: Mapping[TaskState, str] = {
    state: "TASK_STATE_UNSPECIFIED" if state is TaskState.UNKNOWN else f"TASK_STATE_{state.name}"
    for state in TaskState
}
_STATE_NUMBERS: Mapping[int, TaskState] = {
    0: TaskState.UNKNOWN,
    1: TaskState.SUBMITTED,
    2: TaskState.WORKING,
    3: TaskState.COMPLETED,
    4: TaskState.FAILED,
    5: TaskState.CANCELED,
    6: TaskState.INPUT_REQUIRED,
    7: TaskState.REJECTED,
    8: TaskState.AUTH_REQUIRED,
}
ROLE_0_3: Mapping[Role, str] = {Role.USER: "user", Role.AGENT: "agent"}
ROLE_1_0: Mapping[Role, str] = {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT"}
_ROLE_NUMBERS: Mapping[int, Role] = {1: Role.USER, 2: Role.AGENT}


def parse_state(value: Any, path: str, *, strict: bool = False) -> TaskState:
    """Any spelling of a state: "input-required", "TASK_STATE_INPUT_REQUIRED", 6.

    Unknown values become ``TaskState.UNKNOWN`` (a newer peer must not crash
    us, as h2 treats unknown error codes); ``strict`` refuses them instead,
    for filters where a typo would silently match nothing.
    """
    state: TaskState | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        state = _STATE_NUMBERS.get(value)
    elif isinstance(value, str):
        name = value.strip().upper().replace("-", "_").removeprefix("TASK_STATE_")
        name = {"CANCELLED": "CANCELED", "UNSPECIFIED": "UNKNOWN"}.get(name, name)
        state = TaskState.__members__.get(name)
    else:
        raise invalid(path, f"expected a task state, got {_json_type(value)}")
    if state is None:
        if strict:
            raise invalid(path, f"unknown task state {_shown(value)}")
        return TaskState.UNKNOWN
    return state


def parse_role(value: Any, path: str) -> Role:
    """A role as "user", "ROLE_USER" or 1. An unknown role is an error: nobody can act on it."""
    role: Role | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        role = _ROLE_NUMBERS.get(value)
    elif isinstance(value, str):
        name = value.strip().upper().removeprefix("ROLE_")
        role = Role.__members__.get(name)
    if role is None:
        raise invalid(path, f"expected role user or agent, got {_shown(value)}")
    return role


# -- content -----------------------------------------------------------------------------

_PART_KINDS = {"text": "text", "raw": "file", "url": "file", "file": "file", "data": "data"}


def decode_part(data: Any, path: str) -> Part:
    """A 0.3 kind-tagged part (file nested) or a 1.0 flat part; kind inferred when missing."""
    f = Fields(data, path, "a part object")
    kind = f.string("kind")
    legacy = f.string("type")  # the discriminator before 0.3 named it ``kind``
    if kind is None and legacy is not None and legacy not in ("text", "file", "data"):
        raise invalid(join(path, "type"), f"unknown part kind {_shown(legacy)}")
    if kind is None:
        present = [name for name in ("text", "raw", "url", "file") if f.has(name)]
        present += ["data"] if f.contains("data") else []
        if not present:
            raise invalid(path, "a part needs one of text, raw, url, data (0.3: file)")
        if len(present) > 1:
            raise invalid(
                path, f"a part holds exactly one content member, got {', '.join(present)}"
            )
        kind = _PART_KINDS[present[0]]
    metadata = f.struct("metadata")
    if kind == "text":
        text = f.required_string("text", allow_empty=True)
        return TextPart(text=text, media_type=f.string("mediaType", "mimeType"), metadata=metadata)
    if kind == "file":
        return _decode_file_part(f, metadata)
    if kind == "data":
        return _decode_data_part(f, metadata)
    raise invalid(join(path, "kind"), f"unknown part kind {_shown(kind)}")


def _decode_file_part(f: Fields, metadata: dict[str, Any] | None) -> FilePart:
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


def _decode_data_part(f: Fields, metadata: dict[str, Any] | None) -> DataPart:
    """Any JSON value; undo the 0.3 ``{"value": x}`` wrapping flagged by data_part_compat."""
    if not f.contains("data"):
        raise invalid(join(f.path, "data"), "required field is missing")
    data = f.data["data"]
    if metadata and metadata.get(DATA_PART_COMPAT) is True and isinstance(data, Mapping):
        if set(data) == {"value"}:
            data = data["value"]
            metadata = {k: v for k, v in metadata.items() if k != DATA_PART_COMPAT} or None
    return DataPart(data=data, media_type=f.string("mediaType", "mimeType"), metadata=metadata)


def decode_message(data: Any, path: str) -> Message:
    f = Fields(data, path, "a message object")
    f.expect_kind("message")
    return Message(
        message_id=f.required_string("messageId"),
        role=parse_role(f.required("role")[1], f.required("role")[0]),
        parts=f.objects("parts", decode_part, required=True),
        context_id=f.string("contextId"),
        task_id=f.string("taskId"),
        reference_task_ids=f.strings("referenceTaskIds"),
        extensions=f.strings("extensions"),
        metadata=f.struct("metadata"),
    )


def decode_artifact(data: Any, path: str) -> Artifact:
    f = Fields(data, path, "an artifact object")
    return Artifact(
        artifact_id=f.required_string("artifactId"),
        parts=f.objects("parts", decode_part, required=True),
        name=f.string("name"),
        description=f.string("description"),
        extensions=f.strings("extensions"),
        metadata=f.struct("metadata"),
    )


def decode_status(data: Any, path: str) -> TaskStatus:
    f = Fields(data, path, "a task status object")
    state_path, state = f.required("state")
    return TaskStatus(
        state=parse_state(state, state_path),
        message=f.optional("message", decode_message),
        timestamp=f.timestamp("timestamp"),
    )


def decode_task(data: Any, path: str) -> Task:
    f = Fields(data, path, "a task object")
    f.expect_kind("task")
    return Task(
        id=f.required_string("id"),
        context_id=f.string("contextId") or "",
        status=decode_status(f.required("status")[1], f.required("status")[0]),
        artifacts=f.objects("artifacts", decode_artifact),
        history=f.objects("history", decode_message),
        metadata=f.struct("metadata"),
    )


def decode_status_update(data: Any, path: str) -> TaskStatusUpdateEvent:
    """``final`` is 0.3 only; absent (1.0) reads as False."""
    f = Fields(data, path, "a status update object")
    f.expect_kind("status-update")
    return TaskStatusUpdateEvent(
        task_id=f.required_string("taskId"),
        context_id=f.string("contextId") or "",
        status=decode_status(f.required("status")[1], f.required("status")[0]),
        final=bool(f.boolean("final")),
        metadata=f.struct("metadata"),
    )


def decode_artifact_update(data: Any, path: str) -> TaskArtifactUpdateEvent:
    f = Fields(data, path, "an artifact update object")
    f.expect_kind("artifact-update")
    return TaskArtifactUpdateEvent(
        task_id=f.required_string("taskId"),
        context_id=f.string("contextId") or "",
        artifact=decode_artifact(f.required("artifact")[1], f.required("artifact")[0]),
        append=bool(f.boolean("append")),
        last_chunk=bool(f.boolean("lastChunk")),
        metadata=f.struct("metadata"),
    )


_EVENT_DECODERS: Mapping[str, Callable[[Any, str], StreamEvent]] = {
    "task": decode_task,
    "message": decode_message,
    "statusUpdate": decode_status_update,
    "status-update": decode_status_update,
    "artifactUpdate": decode_artifact_update,
    "artifact-update": decode_artifact_update,
}


def decode_stream_event(data: Any, path: str) -> StreamEvent:
    """A 1.0 StreamResponse wrapper or a bare 0.3 object (by ``kind``, else by its members)."""
    f = Fields(data, path, "a stream event object")
    kind = f.string("kind")
    if kind is not None:
        if kind not in _EVENT_DECODERS or kind in ("statusUpdate", "artifactUpdate"):
            raise invalid(join(path, "kind"), f"unknown event kind {_shown(kind)}")
        return _EVENT_DECODERS[kind](data, path)
    wrapped = [
        name for name in ("task", "message", "statusUpdate", "artifactUpdate") if f.has(name)
    ]
    if len(wrapped) > 1:
        raise invalid(path, f"a stream response holds exactly one member, got {', '.join(wrapped)}")
    if wrapped:
        member_path, member = f.find(wrapped[0])
        return _EVENT_DECODERS[wrapped[0]](member, member_path)
    if f.has("artifact"):
        return decode_artifact_update(data, path)
    if f.has("status"):
        return decode_task(data, path) if f.has("id") else decode_status_update(data, path)
    if f.has("messageId") or f.has("parts"):
        return decode_message(data, path)
    raise invalid(path, "not a task, message, status update or artifact update")


# -- push notifications ------------------------------------------------------------------


def decode_authentication(data: Any, path: str) -> AuthenticationInfo:
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


def decode_push_config(data: Any, path: str) -> PushNotificationConfig:
    """The webhook itself: 0.3 PushNotificationConfig, or a flat 1.0 config (taskId ignored)."""
    f = Fields(data, path, "a push notification config object")
    if f.has("pushNotificationConfig"):
        inner_path, inner = f.find("pushNotificationConfig")
        return decode_push_config(inner, inner_path)
    return PushNotificationConfig(
        url=f.required_string("url"),
        id=f.string("id"),
        token=f.string("token"),
        authentication=f.optional("authentication", decode_authentication),
    )


def decode_task_push_config(data: Any, path: str) -> TaskPushNotificationConfig:
    """0.3 nested ``{taskId, pushNotificationConfig}`` or 1.0 flat ``{taskId, url, ...}``."""
    f = Fields(data, path, "a task push notification config object")
    return TaskPushNotificationConfig(
        task_id=f.required_string("taskId"),
        push_notification_config=decode_push_config(data, path),
        tenant=f.string("tenant"),
    )


# -- requests and responses --------------------------------------------------------------


def decode_send_configuration(data: Any, path: str) -> SendMessageConfiguration:
    """Either dialect: ``blocking`` (0.3) wins over ``returnImmediately`` (1.0); default blocks."""
    f = Fields(data, path, "a configuration object")
    blocking = f.boolean("blocking")
    if blocking is None:
        blocking = not f.boolean("returnImmediately")
    return SendMessageConfiguration(
        accepted_output_modes=f.strings("acceptedOutputModes"),
        history_length=f.integer("historyLength", minimum=0, maximum=MAX_HISTORY_LENGTH),
        push_notification_config=(
            f.optional("pushNotificationConfig", decode_push_config)
            or f.optional("taskPushNotificationConfig", decode_push_config)
        ),
        blocking=blocking,
    )


def decode_send_request(data: Any, path: str) -> SendMessageRequest:
    f = Fields(data, path)
    return SendMessageRequest(
        message=decode_message(f.required("message")[1], f.required("message")[0]),
        configuration=f.optional("configuration", decode_send_configuration),
        metadata=f.struct("metadata"),
        tenant=f.string("tenant"),
    )


def decode_get_task(data: Any, path: str) -> GetTaskRequest:
    f = Fields(data, path)
    return GetTaskRequest(
        id=f.required_string("id"),
        history_length=f.integer("historyLength", minimum=0, maximum=MAX_HISTORY_LENGTH),
        metadata=f.struct("metadata"),
        tenant=f.string("tenant"),
    )


def decode_cancel_task(data: Any, path: str) -> CancelTaskRequest:
    f = Fields(data, path)
    return CancelTaskRequest(
        id=f.required_string("id"), metadata=f.struct("metadata"), tenant=f.string("tenant")
    )


def decode_subscribe(data: Any, path: str) -> SubscribeToTaskRequest:
    f = Fields(data, path)
    return SubscribeToTaskRequest(
        id=f.required_string("id"), metadata=f.struct("metadata"), tenant=f.string("tenant")
    )


def decode_list_tasks(data: Any, path: str) -> ListTasksRequest:
    """Filters are strict: an unknown status would silently match nothing."""
    f = Fields(data, path)
    status_path, status = f.find("status")
    state = None if status is None else parse_state(status, status_path, strict=True)
    return ListTasksRequest(
        context_id=f.string("contextId"),
        status=None if state is TaskState.UNKNOWN else state,
        page_size=f.integer("pageSize", minimum=1, maximum=100),
        page_token=f.string("pageToken"),
        history_length=f.integer("historyLength", minimum=0, maximum=MAX_HISTORY_LENGTH),
        status_timestamp_after=f.timestamp("statusTimestampAfter"),
        include_artifacts=bool(f.boolean("includeArtifacts")),
        tenant=f.string("tenant"),
    )


def decode_list_tasks_response(data: Any, path: str) -> ListTasksResponse:
    f = Fields(data, path)
    return ListTasksResponse(
        tasks=f.objects("tasks", decode_task),
        next_page_token=f.string("nextPageToken") or "",
        page_size=f.integer("pageSize") or 0,
        total_size=f.integer("totalSize") or 0,
    )


def _push_target(
    f: Fields, version: str | None, *, config_required: bool
) -> tuple[str, str | None]:
    """(task id, config id) of a push-config Get/Delete, whose ``id`` means different things.

    ``taskId`` present: 1.0 shape, ``id`` is the config. ``pushNotificationConfigId``
    present: 0.3 shape, ``id`` is the task. Neither: the version decides (0.3,
    or unknown, reads ``id`` as the task; 1.0 then lacks its required taskId).
    """
    if f.has("taskId") or (version == "1.0" and not f.has("pushNotificationConfigId")):
        task_id = f.required_string("taskId")
        config_id = f.string("id") or f.string("pushNotificationConfigId")
        missing = join(f.path, "id")
    else:
        task_id = f.required_string("id")
        config_id = f.string("pushNotificationConfigId")
        missing = join(f.path, "pushNotificationConfigId")
    if config_required and config_id is None:
        raise invalid(missing, "required field is missing")
    return task_id, config_id


def decode_get_push_config(
    data: Any, path: str, version: str | None = None
) -> GetTaskPushNotificationConfigRequest:
    f = Fields(data, path)
    task_id, config_id = _push_target(f, version, config_required=False)
    return GetTaskPushNotificationConfigRequest(
        task_id=task_id, config_id=config_id, tenant=f.string("tenant")
    )


def decode_delete_push_config(
    data: Any, path: str, version: str | None = None
) -> DeleteTaskPushNotificationConfigRequest:
    f = Fields(data, path)
    task_id, config_id = _push_target(f, version, config_required=True)
    assert config_id is not None
    return DeleteTaskPushNotificationConfigRequest(
        task_id=task_id, config_id=config_id, tenant=f.string("tenant")
    )


def decode_list_push_configs(data: Any, path: str) -> ListTaskPushNotificationConfigsRequest:
    """1.0 ``taskId`` or 0.3 ``id`` (there ``id`` can only mean the task)."""
    f = Fields(data, path)
    task_id = f.required_string("taskId") if f.has("taskId") else f.required_string("id")
    return ListTaskPushNotificationConfigsRequest(
        task_id=task_id,
        page_size=f.integer("pageSize", minimum=0),
        page_token=f.string("pageToken"),
        tenant=f.string("tenant"),
    )


def decode_list_push_configs_response(
    data: Any, path: str
) -> ListTaskPushNotificationConfigsResponse:
    """A 0.3 bare array or a 1.0 ``{configs, nextPageToken}``."""
    if isinstance(data, list):
        data = {"configs": data}
    f = Fields(data, path, "an array or object")
    return ListTaskPushNotificationConfigsResponse(
        configs=f.objects("configs", decode_task_push_config),
        next_page_token=f.string("nextPageToken") or "",
    )


def decode_get_extended_card(data: Any, path: str) -> GetExtendedAgentCardRequest:
    return GetExtendedAgentCardRequest(tenant=Fields(data, path).string("tenant"))
