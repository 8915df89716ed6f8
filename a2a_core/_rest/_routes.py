"""Server side of the routes: an HTTP request -> the operation and its 1.0 params.

The routes are the operations' entries (:mod:`a2a_core.optable`), matched in the
table's :attr:`~a2a_core.optable.OperationTable.patterns`.

The params are what a 1.0 JSON-RPC call of the operation carries, so the
JSON-RPC decoders and handlers serve REST unchanged.

Rules:

* a body member that names a path variable with another value is refused
  (400), never overridden silently; an empty body is an empty message;
* unknown query parameters are ignored (``A2A-Version`` may travel there),
  and an empty value counts as absent (proto3: "" is unset); a known one that
  does not parse (not an integer, not ``true``/``false``, no TaskState name)
  is refused (400);
* matching tries the un-prefixed paths first, then the same paths below one
  tenant segment, so ``/tasks/x`` is GetTask, never ListTasks for tenant
  ``tasks``; a last segment ending in ``:cancel`` or ``:subscribe`` is that
  custom method, so a task id cannot end in one of those. The path a WSGI
  server hands over is already percent-decoded;
* bodies are read by the JSON-RPC parser's strict loader, under the same
  depth limit and the adapter's size limit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .._http import is_simple_request_type
from .._jsonrpc import DEFAULT_MAX_DEPTH
from .._jsonvalue import JSONObject, JSONValue
from .._opspec import variable
from .._strict_json import StrictJSONError, strict_loads
from ..errors import (
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    RPCError,
)
from ..optable import OPERATIONS, AnyOperation, OperationTable, QueryKind, Route
from ..wire._enums import STATE_1_0

__all__ = ["RestCall", "RestError", "parse_json", "route"]

_INTEGER = re.compile(r"-?\d{1,20}")
#: The 1.0 TaskState names a ``status`` filter may carry.
_STATE_NAMES = frozenset(STATE_1_0.values())
#: Path variables whose proto name differs from the lowerCamel one.
_SNAKE = {"taskId": "task_id"}
#: Longest piece of a peer's path or value repeated in an error message.
_SHOWN = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class RestCall:
    """A routed request: the operation and its params, as a 1.0 JSON-RPC call has them."""

    operation: AnyOperation
    params: JSONObject
    #: The ``/{tenant}`` path prefix, when the request had one (also in ``params``).
    tenant: str | None = None

    @property
    def is_streaming(self) -> bool:
        """The answer is an SSE stream of StreamResponse objects."""
        return self.operation.streams


@dataclass(frozen=True, slots=True)
class RestError:
    """A request refused before any handler runs: the error and the HTTP status to send."""

    error: RPCError
    status: int
    #: Extra response headers (``Allow`` on a 405).
    headers: tuple[tuple[str, str], ...] = ()


def route(
    method: str,
    path: str,
    query: Mapping[str, str],
    body: bytes,
    *,
    content_type: str | None = None,
    body_too_large: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
    table: OperationTable = OPERATIONS,
) -> RestCall | RestError:
    """Route one request below the interface URL; never raises for a peer's input.

    :param path: the path below the HTTP+JSON interface URL, percent-decoded.
    :param query: the query parameters (one value each, as the adapter parsed them).
    :param content_type: the request's Content-Type header, if any.
    :param body_too_large: the adapter stopped reading at its size limit (413).
    :param max_depth: deepest JSON nesting accepted, as for JSON-RPC.
    :param table: the operations served (their routes).
    :returns: a :class:`RestCall`, or a :class:`RestError` for an unknown path (404),
        a method the path does not serve (405 with ``Allow``), a browser form
        content type (415), a body over the limit (413), or a body or query
        parameter that cannot be read (400).
    """
    found = _match(path, table)
    if found is None:
        shown = path[:_SHOWN] + ("…" if len(path) > _SHOWN else "")
        return RestError(MethodNotFoundError(f"No A2A operation at {shown!r}"), 404)
    routes, bound = found
    entry = routes.get(method)
    if entry is None:
        allowed = ", ".join(sorted(routes))
        err = MethodNotFoundError(f"Method {method[:16]} is not allowed here; use {allowed}")
        return RestError(err, 405, (("Allow", allowed),))
    operation, chosen = entry
    try:
        params = _params(chosen, bound, query, body, content_type, body_too_large, max_depth)
    except _Refused as refused:
        return refused.rest_error
    except RPCError as err:
        return RestError(err, err.http_status)
    return RestCall(operation=operation, params=params, tenant=bound.get("tenant"))


_Routes = Mapping[str, tuple[AnyOperation, Route]]


def _match(path: str, table: OperationTable) -> tuple[_Routes, dict[str, str]] | None:
    """The routes of the first pattern matching ``path``, and the path variables."""
    segments = path.strip("/").split("/")
    if "" in segments:
        return None
    for candidate, tenant in ((segments, None), (segments[1:], segments[0])):
        for pattern, routes in table.patterns.items():
            bound = _bind(pattern, candidate, table.verbs)
            if bound is not None:
                return routes, bound if tenant is None else {**bound, "tenant": tenant}
    return None


def _bind(
    pattern: tuple[str, ...], segments: list[str], verbs: tuple[str, ...]
) -> dict[str, str] | None:
    """Path variables of ``segments`` under ``pattern``, or None when it does not match."""
    if len(pattern) != len(segments):
        return None
    bound: dict[str, str] = {}
    for template, segment in zip(pattern, segments, strict=True):
        if not template.startswith("{"):
            if template != segment:
                return None
            continue
        name, verb = variable(template)
        if verb:
            if not segment.endswith(verb):
                return None
            segment = segment[: -len(verb)]
        elif segment.endswith(verbs):
            return None
        if not segment:
            return None
        bound[name] = segment
    return bound


class _Refused(Exception):
    """Internal: a refusal whose HTTP status is not the error's own."""

    def __init__(self, rest_error: RestError) -> None:
        super().__init__(rest_error.error.message)
        self.rest_error = rest_error


def _params(
    chosen: Route,
    bound: Mapping[str, str],
    query: Mapping[str, str],
    body: bytes,
    content_type: str | None,
    body_too_large: bool,
    max_depth: int,
) -> JSONObject:
    """The 1.0 params: path variables plus the body or the query, per the route."""
    if chosen.method == "POST" and is_simple_request_type(content_type):
        err = InvalidRequestError(
            "Unsupported Media Type: send application/a2a+json or application/json"
        )
        accepted = ("Accept-Post", "application/a2a+json, application/json")
        raise _Refused(RestError(err, 415, (accepted,)))
    if body_too_large:
        raise _Refused(RestError(InvalidRequestError("Request body too large"), 413))
    if chosen.body:
        return _with_path(_body_object(body, max_depth), bound)
    return {**_query_params(chosen.query, query), **bound}


def parse_json(body: bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> JSONValue:
    """A strict JSON text under the JSON-RPC parser's rules (I-JSON, depth limit).

    :raises ParseError: naming the flaw, in our words.
    """
    try:
        return strict_loads(body, max_depth)
    except StrictJSONError as exc:
        raise ParseError(f"Invalid JSON payload: {exc}") from None


def _body_object(body: bytes, max_depth: int) -> JSONObject:
    """The request message; an empty body is an empty message."""
    if not body.strip():
        return {}
    value = parse_json(body, max_depth)
    if not isinstance(value, dict):
        raise InvalidRequestError("The request body must be a JSON object")
    return value


def _with_path(params: JSONObject, bound: Mapping[str, str]) -> JSONObject:
    """Put the path variables in; a body member naming one differently is refused."""
    for name, value in bound.items():
        for key in (name, _SNAKE.get(name, name)):
            given = params.pop(key, None)
            if given is not None and given != value:
                raise InvalidParamsError(
                    f"body member {key!r} contradicts the path's {name} {_shown(value)}",
                    field_violations={key: f"must equal the path's {name} or be omitted"},
                )
        params[name] = value
    return params


def _query_params(kinds: Mapping[str, QueryKind], query: Mapping[str, str]) -> JSONObject:
    """The typed query parameters the route knows; others are ignored."""
    params: JSONObject = {}
    for name, kind in kinds.items():
        text = query.get(name)
        if text:
            params[name] = _query_value(name, kind, text)
    return params


def _query_value(name: str, kind: QueryKind, text: str) -> JSONValue:
    """One query parameter as the JSON value the 1.0 decoder reads."""
    if kind is QueryKind.STRING:
        return text
    if kind is QueryKind.INTEGER and _INTEGER.fullmatch(text):
        return int(text)
    if kind is QueryKind.BOOLEAN and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind is QueryKind.TASK_STATE and text in _STATE_NAMES:
        return text
    expected = {
        QueryKind.INTEGER: "an integer",
        QueryKind.BOOLEAN: "true or false",
        QueryKind.TASK_STATE: "a TaskState name such as TASK_STATE_WORKING",
    }[kind]
    problem = f"expected {expected}, got {_shown(text)}"
    raise InvalidParamsError(f"query parameter {name}: {problem}", field_violations={name: problem})


def _shown(text: str) -> str:
    """A peer's value in a message: quoted, and cut short."""
    return repr(text[:_SHOWN] + ("…" if len(text) > _SHOWN else ""))
