"""What every wire module needs: the versions, the input limits and the error shape.

Every decode error is an :class:`~a2a_core.errors.InvalidParamsError` whose
message starts with the JSON path of the bad field (``params.message.parts[0]``)
and whose ``field_violations`` maps that path to the description, so the
server can answer -32602 with an actionable 1.0 ``BadRequest``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import InvalidParamsError

__all__ = [
    "VERSIONS",
    "MAX_HISTORY_LENGTH",
    "MAX_INT64",
    "MAX_TASK_ID_LENGTH",
    "MAX_IDENTIFIER_LENGTH",
    "MAX_REFERENCE_TASK_IDS",
    "MAX_EXTENSION_URIS",
    "MAX_URI_LENGTH",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_DEPTH",
    "MAX_PARTS",
    "MAX_FILENAME_LENGTH",
    "MAX_MEDIA_TYPE_LENGTH",
    "MAX_OUTPUT_MODES",
    "MAX_AUTH_SCHEMES",
    "MAX_SECRET_LENGTH",
    "MAX_PAGE_TOKEN_LENGTH",
    "DATA_PART_COMPAT",
    "check_version",
    "check_task_id",
    "join",
    "invalid",
    "json_type",
    "shown",
]

#: The protocol versions the codecs speak.
VERSIONS = ("0.3", "1.0")

#: Largest ``historyLength`` accepted (-32602 above): the proto's int32. A larger ask
#: than the history holds costs nothing (it is a slice), and the conformance kit
#: requires int32 max to be accepted; 0 means "no history" (1.0 §3.2.4).
MAX_HISTORY_LENGTH = 2**31 - 1
#: The largest int64 (the dev-1.1 generation fields).
MAX_INT64 = 2**63 - 1

#: Longest task id a client may name. Ids are server-generated (``tsk-`` + 32 hex here,
#: UUIDs or ULIDs elsewhere), so 128 leaves room for any sane scheme.
MAX_TASK_ID_LENGTH = 128
#: RFC 3986 unreserved characters plus ``:@+=``: safe in a URL path segment (the REST
#: binding puts the id in ``/tasks/{id}``), in a file or key name and in a log line.
_TASK_ID = re.compile(r"[A-Za-z0-9._~:@+=-]+")

# What a client may put in a request (:mod:`._limits` applies these; docs/serving.md
# lists them). Lengths count characters, as the spec's strings do. Each cap sits well
# above what a real agent or client sends and well below what would make one request
# a burden to store, index, log or echo back.

#: messageId, contextId (also as a ListTasks filter), tenant, a push-config id and an
#: authentication scheme name: client- or server-chosen keys (UUIDs, ULIDs, slugs).
MAX_IDENTIFIER_LENGTH = 256
#: Entries of message.referenceTaskIds (each is held to the task-id rule).
MAX_REFERENCE_TASK_IDS = 64
#: Entries of a message's ``extensions`` list.
MAX_EXTENSION_URIS = 64
#: An extension URI or a push-notification webhook URL (the common browser URL limit).
MAX_URI_LENGTH = 2048
#: One metadata object (message, part, params), as compact UTF-8 JSON.
MAX_METADATA_BYTES = 64 * 1024
#: Nesting of one metadata object: ``{}`` is one level, ``{"a": {}}`` two.
MAX_METADATA_DEPTH = 16
#: Parts in one message (the Dispatcher's ``max_parts`` default).
MAX_PARTS = 256
#: A file part's filename (0.3 ``file.name``): a path-sized name, not a document.
MAX_FILENAME_LENGTH = 1024
#: A media type (``mediaType``, 0.3 ``mimeType``, acceptedOutputModes entries): RFC 6838
#: allows 127 characters each for type and subtype.
MAX_MEDIA_TYPE_LENGTH = 255
#: Entries of configuration.acceptedOutputModes.
MAX_OUTPUT_MODES = 64
#: Entries of a push config's authentication.schemes (1.0 has one ``scheme``).
MAX_AUTH_SCHEMES = 16
#: A push-config ``token`` or authentication ``credentials``: room for a signed JWT.
MAX_SECRET_LENGTH = 4096
#: A ``pageToken``: opaque, but one the server issued (ours are under 300 characters).
MAX_PAGE_TOKEN_LENGTH = 1024

#: 0.3 DataPart.data must be an object: other values travel as {"value": x} with this flag.
DATA_PART_COMPAT = "data_part_compat"


def check_version(version: str) -> str:
    """Refuse anything but "0.3"/"1.0": a typo must not silently pick a dialect."""
    if version not in VERSIONS:
        raise ValueError(f"unsupported protocol version {version!r}; expected one of {VERSIONS}")
    return version


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


def json_type(value: object) -> str:
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


def shown(value: object) -> str:
    """A peer's value in an error message: short strings quoted, anything else by type.

    Error messages go back to the peer; echoing a megabyte, or Python's repr
    of a dict, helps nobody.
    """
    if isinstance(value, str):
        return repr(value) if len(value) <= 64 else repr(value[:64]) + "…"
    return json_type(value)
