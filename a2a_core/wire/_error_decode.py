"""Reading a JSON-RPC ``error`` object back into the registered error class, both versions.

0.3 carries free-form ``data``; 1.0 carries ``google.protobuf.Any`` details
(ErrorInfo, BadRequest), which are unpacked into the error's fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeGuard

from .._jsonvalue import JSONValue
from ..errors import InvalidAgentResponseError, RPCError, error_from_code
from . import _v1_0 as v1_0

__all__ = ["decode_error"]


def decode_error(data: object) -> RPCError:
    """The registered error class for ``code``; a malformed error object is the agent's fault.

    Returned, not raised, so the caller writes ``raise decode_error(body["error"])``.
    1.0 details are unpacked: ErrorInfo ``metadata`` -> ``metadata`` (its
    ``data`` key back to ``data``), BadRequest -> ``field_violations``.
    Other ``data`` is kept as is.
    """
    code = data.get("code") if isinstance(data, Mapping) else None
    if not isinstance(data, Mapping) or not isinstance(code, int) or isinstance(code, bool):
        return InvalidAgentResponseError("malformed JSON-RPC error object", data)
    message = data.get("message")
    detail = data.get("data")
    error = error_from_code(code, message if isinstance(message, str) else None, detail)
    if _is_any_list(detail):
        _unpack_details(error, detail)
    return error


def _is_any_list(value: object) -> TypeGuard[list[Mapping[str, JSONValue]]]:
    """A 1.0 ``data``: a non-empty list of ``google.protobuf.Any`` objects."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, Mapping) and isinstance(item.get("@type"), str) for item in value)
    )


def _unpack_details(error: RPCError, details: list[Mapping[str, JSONValue]]) -> None:
    """Move ErrorInfo/BadRequest into the error's fields; keep unknown details as ``data``."""
    others = []
    error.data = None
    for item in details:
        info = item.get("metadata", {})
        if item["@type"] == v1_0.ERROR_INFO_TYPE and isinstance(info, Mapping):
            metadata = {str(k): str(v) for k, v in info.items()}
            if v1_0.DATA_METADATA_KEY in metadata:
                error.data = _loads(metadata.pop(v1_0.DATA_METADATA_KEY))
            error.metadata = metadata
        elif item["@type"] == v1_0.BAD_REQUEST_TYPE:
            violations = item.get("fieldViolations")
            error.field_violations = {
                str(v.get("field", "")): str(v.get("description", ""))
                for v in (violations if isinstance(violations, list) else [])
                if isinstance(v, Mapping)
            }
        else:
            others.append(item)
    if others and error.data is None:
        error.data = others


def _loads(text: str) -> Any:
    """The JSON-encoded ``data`` we put in ErrorInfo; a peer's plain string stays a string."""
    try:
        return json.loads(text)
    except ValueError:
        return text
