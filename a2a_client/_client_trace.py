"""The client's OpenTelemetry span per request, and the trace headers it sends.

Imported whether or not ``opentelemetry`` is installed: without it ``tracer``
is None and the transport makes no spans.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from a2a_core._observe import TraceParent

try:
    from opentelemetry import trace as otel_trace
except ImportError:  # not installed: no spans, nothing of it imported
    otel_trace = None  # type: ignore[assignment]

__all__ = ["client_span", "otel_trace", "safe_url", "trace_headers", "tracer"]

#: The global provider's tracer, through the API's proxy (a provider set later is used).
tracer = otel_trace.get_tracer("a2a_client") if otel_trace is not None else None

#: The JSON-RPC method near the start of a request body, as the RPC channel writes it.
_RPC_METHOD = re.compile(rb'"method":\s*"([A-Za-z/]{1,64})"')


def client_span(method: str, url: str, body: bytes | None) -> Any:
    """The span of one request, named by its JSON-RPC method when the body names one.

    Only the URL's scheme, host, port and path are recorded: no userinfo, no query.
    """
    parts = urlsplit(url)
    found = _RPC_METHOD.search(body[:256]) if body else None
    attributes: dict[str, Any] = {"http.request.method": method, "url.full": safe_url(url),
                                  "server.address": parts.hostname or ""}
    if parts.port is not None:
        attributes["server.port"] = parts.port
    name = method
    if found is not None:
        name = found.group(1).decode()
        attributes.update({"rpc.system": "jsonrpc", "rpc.method": name})
    return tracer.start_as_current_span(f"A2A {name}", kind=otel_trace.SpanKind.CLIENT,
                                        attributes=attributes)


def trace_headers(span: Any) -> dict[str, str]:
    """``traceparent`` (and ``tracestate``) making the agent's span a child of ``span``."""
    context = span.get_span_context()
    if not context.is_valid:
        return {}
    parent = TraceParent(f"{context.trace_id:032x}", f"{context.span_id:016x}",
                         int(context.trace_flags))
    headers = {"traceparent": parent.header()}
    state = context.trace_state.to_header() if context.trace_state else ""
    if state:
        headers["tracestate"] = state
    return headers


def safe_url(url: str) -> str:
    """A URL fit for a log line: no userinfo, no query string."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
