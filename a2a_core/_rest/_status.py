"""A2A errors as HTTP+JSON answers: ``google.rpc.Status`` bodies (AIP-193), both ways.

::

    {"error": {"code": 404, "status": "NOT_FOUND", "message": "Task t-1 not found",
               "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org",
                            "metadata": {}}]}}

``code`` is the HTTP status (each error class's ``http_status``, the v1.0.1
table), ``status`` the gRPC code name of the spec's mapping table, and
``details`` exactly the list the JSON-RPC binding sends as ``error.data``
(an ErrorInfo always, a BadRequest when fields are named), so both bindings
carry the same reason, metadata and field violations. Only the message and
those details reach the peer: never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._http import HttpResponse
from .._streaming import dumps
from ..errors import (
    ERROR_CLASSES,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PushNotificationNotSupportedError,
    RPCError,
    TaskGenerationMismatchError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from ..wire import decode_error, encode_error
from ..wire._v1_0 import ERROR_DOMAIN, ERROR_INFO_TYPE

__all__ = [
    "A2A_JSON",
    "PLAIN_JSON",
    "answer_media_type",
    "GRPC_STATUS",
    "grpc_status",
    "encode_status",
    "error_response",
    "decode_status",
]

#: The registered media type of HTTP+JSON bodies (1.0); requests may also use application/json.
A2A_JSON = "application/a2a+json"
#: What a REST answer is labelled unless the client asks for A2A_JSON: v1.0.0 of the
#: spec (and the 1.0 conformance kit) says ``application/json``; later 1.0 text registers
#: ``application/a2a+json``. Serving the one the client names satisfies both.
PLAIN_JSON = "application/json"


def answer_media_type(accept: str | None) -> str:
    """``application/a2a+json`` when ``Accept`` names it, else ``application/json``."""
    return A2A_JSON if accept and A2A_JSON in accept.lower() else PLAIN_JSON

#: Error class -> the google.rpc.Code name of the spec's table (v1.0.1, as the SDK has it).
GRPC_STATUS: Mapping[type[RPCError], str] = {
    ParseError: "INVALID_ARGUMENT",
    InvalidRequestError: "INVALID_ARGUMENT",
    MethodNotFoundError: "NOT_FOUND",
    InvalidParamsError: "INVALID_ARGUMENT",
    InternalError: "INTERNAL",
    TaskNotFoundError: "NOT_FOUND",
    TaskNotCancelableError: "FAILED_PRECONDITION",
    PushNotificationNotSupportedError: "FAILED_PRECONDITION",
    UnsupportedOperationError: "FAILED_PRECONDITION",
    ContentTypeNotSupportedError: "INVALID_ARGUMENT",
    InvalidAgentResponseError: "INTERNAL",
    ExtendedAgentCardNotConfiguredError: "FAILED_PRECONDITION",
    ExtensionSupportRequiredError: "FAILED_PRECONDITION",
    VersionNotSupportedError: "FAILED_PRECONDITION",
    TaskGenerationMismatchError: "ABORTED",
}

#: ErrorInfo reason -> class, for reading a peer's Status (ParseError has no reason of
#: its own; the JSON-RPC codec writes PARSE_ERROR for it).
_BY_REASON: Mapping[str, type[RPCError]] = {
    **{cls.reason: cls for cls in ERROR_CLASSES.values() if cls.reason},
    "PARSE_ERROR": ParseError,
}


def grpc_status(err: RPCError) -> str:
    """The ``status`` name; a code we do not know is UNKNOWN (HTTP 500)."""
    return GRPC_STATUS.get(type(err), "UNKNOWN")


def encode_status(err: RPCError, *, status: int | None = None) -> dict[str, Any]:
    """The ``google.rpc.Status`` body; ``status`` overrides the error's own HTTP status."""
    details = encode_error(err, "1.0")["data"]
    return {
        "error": {
            "code": err.http_status if status is None else status,
            "status": grpc_status(err),
            "message": err.message,
            "details": details,
        }
    }


def error_response(
    err: RPCError, *, status: int | None = None, headers: Sequence[tuple[str, str]] = (),
    media_type: str = A2A_JSON,
) -> HttpResponse:
    """An error as a whole HTTP response: the status, ``application/a2a+json``, the body.

    :param status: the HTTP status when it is not the error's (405, 413, 415).
    :param headers: added after Content-Type (``Allow``, ``A2A-Version``…).
    """
    code = err.http_status if status is None else status
    body = dumps(encode_status(err, status=code)).encode("utf-8")
    return HttpResponse(code, [("Content-Type", media_type), *headers], body)


def decode_status(payload: Any) -> RPCError | None:
    """Client side: the typed error a ``google.rpc.Status`` body names, by ErrorInfo reason.

    The error carries what the JSON-RPC binding's would: message, ErrorInfo
    metadata (its ``data`` key back as ``data``) and BadRequest field violations.
    None when the body is no Status or names no A2A reason (a proxy's page, a
    server of another protocol): the caller then reports the HTTP status itself.
    """
    body = payload.get("error") if isinstance(payload, Mapping) else None
    if not isinstance(body, Mapping):
        return None
    details = body.get("details")
    if not isinstance(details, list):
        return None
    known = [_BY_REASON[reason] for reason in _reasons(details) if reason in _BY_REASON]
    if not known:
        return None
    cls = known[0]
    message = body.get("message")
    anys = [d for d in details if isinstance(d, Mapping) and isinstance(d.get("@type"), str)]
    return decode_error({"code": cls.code, "message": message, "data": anys or None})


def _reasons(details: list[Any]) -> list[str]:
    """The reasons of the A2A ErrorInfo details (no domain counts as ours)."""
    return [
        item["reason"]
        for item in details
        if isinstance(item, Mapping)
        and item.get("@type") == ERROR_INFO_TYPE
        and item.get("domain", ERROR_DOMAIN) == ERROR_DOMAIN
        and isinstance(item.get("reason"), str)
    ]
