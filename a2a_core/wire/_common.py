"""What every wire module needs: the versions, the input limits and the error shape.

Every decode error is an :class:`~a2a_core.errors.InvalidParamsError` whose
message starts with the JSON path of the bad field (``params.message.parts[0]``)
and whose ``field_violations`` maps that path to the description, so the
server can answer -32602 with an actionable 1.0 ``BadRequest``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidParamsError

__all__ = [
    "VERSIONS",
    "MAX_HISTORY_LENGTH",
    "MAX_TASK_ID_LENGTH",
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


def json_type(value: Any) -> str:
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


def shown(value: Any) -> str:
    """A peer's value in an error message: short strings quoted, anything else by type.

    Error messages go back to the peer; echoing a megabyte, or Python's repr
    of a dict, helps nobody.
    """
    if isinstance(value, str):
        return repr(value) if len(value) <= 64 else repr(value[:64]) + "…"
    return json_type(value)
