"""The JSON-RPC 2.0 envelope: strict parsing of requests, encoding of responses.

This module knows nothing of A2A beyond the error classes. It turns request
bytes into an :class:`RPCRequest` or raises, and wraps results and error
objects built elsewhere (the wire layer knows the versions) in an envelope.

Decisions (the rules of this file):

* **-32700 ParseError** for anything we refuse to read as a JSON text: invalid
  UTF-8, a UTF-8 BOM, syntax errors, ``NaN``/``Infinity``/``-Infinity``,
  numbers that overflow a double, duplicate object keys, lone UTF-16
  surrogates (escaped ``\\ud800`` or raw bytes), and nesting deeper than
  ``max_depth``. These are the I-JSON rules (RFC 7493) plus a depth limit.
  Depth is checked by a cheap bracket scan *before* :func:`json.loads`, which
  recurses and would otherwise raise ``RecursionError``.
* **-32600 InvalidRequestError** for a JSON text that is not an A2A JSON-RPC
  request: a top-level value that is not an object, a batch (a top-level
  array: A2A defines none and the official SDK refuses them), ``jsonrpc`` not
  exactly ``"2.0"``, ``method`` missing or not a non-empty string, an ``id``
  that is a bool, float, object or array, an ``id`` string longer than
  ``MAX_ID_LENGTH`` (256) characters or an integer of more digits (an id is
  echoed in every answer, so it must stay small),
  ``params`` that is a string, number or bool, and a notification (no ``id`` member): A2A defines no
  notifications and every method returns a result the client needs, so the
  caller gets -32600 with ``id: null`` unless ``allow_notifications=True``.
* **-32602 InvalidParamsError** for ``params`` given as an array: that is a
  valid JSON-RPC envelope, but every A2A method takes its params by name.
* Leniencies: ``"id": null`` is accepted (JSON-RPC discourages it, but peers
  send it) and is echoed as ``null``. ``"params": null`` reads as
  absent. Unknown top-level members are ignored.
* Error messages name the flaw in our own words (``invalid UTF-8 at byte
  3``), never Python's (no codec names, no ``sys.set_int_max_str_digits``).
* The raised error carries ``request_id`` (the id when it could be read, else
  ``None``) so the caller can echo it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

from ._jsonvalue import JSONObject, JSONValue
from ._strict_json import StrictJSONError, strict_loads
from .errors import (
    InvalidParamsError,
    InvalidRequestError,
    ParseError,
    RemoteProtocolError,
    RPCError,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "JSONRPC_VERSION",
    "MAX_ID_LENGTH",
    "RequestId",
    "RPCRequest",
    "RPCResponse",
    "parse_request",
    "parse_response",
    "response_dict",
    "error_response_dict",
    "encode_response",
    "encode_error_response",
]

#: Deepest nesting of arrays and objects we parse; A2A payloads stay far below it.
DEFAULT_MAX_DEPTH = 64
JSONRPC_VERSION = "2.0"
#: Longest string id we accept; every answer echoes the id, so a huge one is refused (-32600).
MAX_ID_LENGTH = 256
#: Integer ids up to MAX_ID_LENGTH digits: big ones survive exactly, huge ones are refused.
_MAX_INT_ID: int = 10**MAX_ID_LENGTH - 1

#: What a JSON-RPC id may be (``None`` for ``null``).
RequestId = str | int | None

@dataclass(frozen=True, slots=True, kw_only=True)
class RPCRequest:
    """One parsed request. ``params`` is ``None`` when the member was absent."""

    id: RequestId
    method: str
    params: JSONObject | None
    #: True when the ``id`` member was absent (only with ``allow_notifications``).
    is_notification: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RPCResponse:
    """One parsed response: exactly one of ``result`` / ``error`` is meaningful."""

    id: RequestId
    result: JSONValue = None
    #: The raw error object (``code``, ``message``, ``data``?) or ``None`` on success.
    error: JSONObject | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None


# -- strict JSON --------------------------------------------------------------------------


def _fail(error: RPCError, request_id: RequestId = None) -> NoReturn:
    """Raise ``error`` carrying the id, so every raise site reads the same."""
    error.request_id = request_id
    raise error




# -- requests -----------------------------------------------------------------------------


def _valid_id(value: object) -> bool:
    """JSON-RPC ids are strings, integers or null; bool is an int subclass in Python."""
    return (
        value is None
        or value.__class__ is str or value.__class__ is int  # (the usual ids: no call)
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


def _acceptable_id(value: object) -> bool:
    """A valid id small enough to echo: at most MAX_ID_LENGTH characters or digits."""
    if value.__class__ is int:  # the usual id (checked by class first: no bool slips in)
        return -_MAX_INT_ID <= value <= _MAX_INT_ID
    if isinstance(value, str):
        return len(value) <= MAX_ID_LENGTH
    if isinstance(value, int) and not isinstance(value, bool):
        return -_MAX_INT_ID <= value <= _MAX_INT_ID
    return value is None


def parse_request(
    body: bytes, *, max_depth: int = DEFAULT_MAX_DEPTH, allow_notifications: bool = False
) -> RPCRequest:
    """Parse one JSON-RPC request body under the rules in this module's docstring.

    :param body: the raw HTTP body.
    :param max_depth: deepest array/object nesting accepted.
    :param allow_notifications: accept a request without ``id`` (answered with ``id: null``).
    :raises ParseError: the body is not a strict JSON text.
    :raises InvalidRequestError: valid JSON, but not a request we accept.
    :raises InvalidParamsError: ``params`` is an array.
    """
    try:
        value = strict_loads(body, max_depth)
    except StrictJSONError as exc:
        _fail(ParseError(f"Invalid JSON payload: {exc}"))
    return _request_from_value(value, allow_notifications)


def _request_from_value(value: object, allow_notifications: bool) -> RPCRequest:
    """Check the envelope of an already decoded JSON value."""
    if value.__class__ is not dict:  # (what a JSON object decodes to)
        if isinstance(value, list):
            _fail(InvalidRequestError("Batch requests are not supported by A2A"))
        if not isinstance(value, dict):
            _fail(InvalidRequestError("A JSON-RPC request must be a JSON object"))
    has_id = "id" in value
    raw_id = value.get("id")
    acceptable = _acceptable_id(raw_id)
    request_id: RequestId = raw_id if acceptable else None
    if value.get("jsonrpc") != JSONRPC_VERSION:
        _fail(_invalid("jsonrpc", 'must be exactly "2.0"'), request_id)
    method = value.get("method")
    if not method or not (method.__class__ is str or isinstance(method, str)):
        _fail(_invalid("method", "must be a non-empty string"), request_id)
    if not acceptable:
        _fail(_invalid("id", _ID_RULE))
    if not has_id and not allow_notifications:
        _fail(_invalid("id", "is required: A2A defines no notifications"))
    params = value.get("params")
    if params is not None and params.__class__ is not dict:
        if isinstance(params, list):
            _fail(InvalidParamsError("params must be an object, not an array"), request_id)
        if not isinstance(params, dict):
            _fail(_invalid("params", "must be an object"), request_id)
    return RPCRequest(id=request_id, method=method, params=params, is_notification=not has_id)


_ID_RULE = (
    f"must be a string of at most {MAX_ID_LENGTH} characters, an integer of at most "
    f"{MAX_ID_LENGTH} digits, or null"
)


def _invalid(field: str, problem: str) -> InvalidRequestError:
    """An InvalidRequestError naming the member, also as a 1.0 field violation."""
    return InvalidRequestError(
        f"Invalid JSON-RPC request: '{field}' {problem}", field_violations={field: problem}
    )


# -- responses ----------------------------------------------------------------------------


def _check_id(id: RequestId) -> None:
    """Refuse ids that would make an invalid envelope (misuse of our API)."""
    if not _valid_id(id):
        raise TypeError(f"a JSON-RPC id must be str, int or None, not {type(id).__name__}")


def response_dict(id: RequestId, result: JSONValue) -> JSONObject:
    """The success envelope as a dict (SSE events embed this form)."""
    _check_id(id)
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "result": result}


def error_response_dict(id: RequestId, error_obj: Mapping[str, JSONValue]) -> JSONObject:
    """The error envelope as a dict; ``error_obj`` is built by the wire layer."""
    _check_id(id)
    if not isinstance(error_obj.get("code"), int) or isinstance(error_obj.get("code"), bool):
        raise ValueError("an error object needs an integer 'code'")
    if not isinstance(error_obj.get("message"), str):
        raise ValueError("an error object needs a string 'message'")
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "error": dict(error_obj)}


def _dumps(envelope: JSONObject) -> bytes:
    """Compact UTF-8 JSON; NaN or a lone surrogate in our own output is a ValueError."""
    return _ENCODER.encode(envelope).encode("utf-8")


#: What json.dumps would build for each call (an encoder keeps no state between calls).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_response(id: RequestId, result: JSONValue) -> bytes:
    """A success response body."""
    return _dumps(response_dict(id, result))


def encode_error_response(id: RequestId, error_obj: Mapping[str, JSONValue]) -> bytes:
    """An error response body."""
    return _dumps(error_response_dict(id, error_obj))


def parse_response(
    body: bytes | str | Mapping[str, JSONValue], *, max_depth: int = DEFAULT_MAX_DEPTH
) -> RPCResponse:
    """Read a response envelope (client side); anything malformed is the peer's fault.

    :raises RemoteProtocolError: not strict JSON, or not a JSON-RPC 2.0 response.
    """
    if isinstance(body, Mapping):
        value: object = dict(body)
    else:
        try:
            value = strict_loads(body, max_depth)
        except StrictJSONError as exc:
            raise RemoteProtocolError(f"response is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise RemoteProtocolError("a JSON-RPC response must be a JSON object")
    if value.get("jsonrpc") != JSONRPC_VERSION:
        raise RemoteProtocolError('response "jsonrpc" must be exactly "2.0"')
    if not _valid_id(value.get("id")):
        raise RemoteProtocolError("response id must be a string, an integer or null")
    has_result, has_error = "result" in value, "error" in value
    if has_result == has_error:
        raise RemoteProtocolError("a response must have exactly one of result or error")
    if has_result:
        return RPCResponse(id=value.get("id"), result=value["result"])
    return RPCResponse(id=value.get("id"), error=_checked_error(value["error"]))


def _checked_error(error: object) -> JSONObject:
    """An error object must have an integer code and a string message."""
    if not isinstance(error, dict):
        raise RemoteProtocolError("response error must be an object")
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        raise RemoteProtocolError("response error code must be an integer")
    if not isinstance(error.get("message"), str):
        raise RemoteProtocolError("response error message must be a string")
    return error
