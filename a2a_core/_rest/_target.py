"""Client side of the routes: 1.0 params -> the HTTP request that carries them.

The inverse of :func:`~._routes.route`: path variables are taken out of the
params and percent-encoded into the path (the tenant as its prefix); a
``body: "*"`` route sends the rest as the body, a GET or DELETE route as
query text (``true``/``false``, decimal integers, strings as they are).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from .._opspec import variable
from ..optable import AnyOperation, Route

__all__ = ["RestTarget", "request_target"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RestTarget:
    """The HTTP request for one call, relative to the interface URL."""

    method: str
    #: Percent-encoded, starting with "/" (tenant prefix included).
    path: str
    #: Query parameters as text (GET and DELETE routes).
    query: dict[str, str] = field(default_factory=dict)
    #: The JSON body (``body: "*"`` routes), else None.
    body: dict[str, Any] | None = None


def request_target(
    operation: AnyOperation, params: Mapping[str, Any], *,
    method: str | None = None,
) -> RestTarget:
    """The request carrying ``params`` (a 1.0 JSON-RPC params object) for ``operation``.

    :param method: pick one of the operation's methods (SubscribeToTask has POST and
        GET); the first of its entry's ``routes`` by default.
    :raises ValueError: a path variable is missing, or a member has no place in this
        route (a GET cannot carry an object).
    """
    chosen = _route_for(operation, method)
    remaining = dict(params)
    tenant = remaining.pop("tenant", None)
    segments = [_segment(template, remaining, operation) for template in chosen.pattern]
    if tenant:
        segments.insert(0, quote(str(tenant), safe=""))
    path = "/" + "/".join(segments)
    if chosen.body:
        return RestTarget(method=chosen.method, path=path, body=remaining)
    unplaced = sorted(set(remaining) - set(chosen.query))
    if unplaced:
        raise ValueError(f"{operation.name} over HTTP+JSON cannot carry {unplaced}")
    query = {name: _query_text(value) for name, value in remaining.items() if value is not None}
    return RestTarget(method=chosen.method, path=path, query=query)


def _route_for(operation: AnyOperation, method: str | None) -> Route:
    for entry in operation.routes:
        if method in (None, entry.method):
            return entry
    raise ValueError(f"{operation.name} has no HTTP+JSON route for method {method}")


def _segment(template: str, params: dict[str, Any], operation: AnyOperation) -> str:
    """One path segment; a variable is taken out of ``params``."""
    if not template.startswith("{"):
        return template
    name, verb = variable(template)
    value = params.pop(name, None)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{operation.name} over HTTP+JSON needs {name} (it is in the path)")
    return quote(value, safe="") + verb


def _query_text(value: Any) -> str:
    """A scalar as query text: ``true``/``false``, decimal integers, strings as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    raise ValueError(f"a query parameter cannot carry {type(value).__name__}")
