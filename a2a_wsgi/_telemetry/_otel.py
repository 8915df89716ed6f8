"""Everything that touches OpenTelemetry: imported only when ``opentelemetry`` is.

The tracer and the meter are taken from the global providers, through the
API's proxies: a provider the application sets up later (after import, as
most do) is used from then on. Without an SDK every span is a no-op that
still carries its parent's context, so propagation works with the API alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from opentelemetry import context, metrics, trace
from opentelemetry.metrics import _internal as _metrics_state
from opentelemetry.metrics._internal import _ProxyMeterProvider
from opentelemetry.trace import (
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TraceState,
)

from a2a_core import __version__
from a2a_core._observe import TraceParent

__all__ = [
    "Attributes",
    "listening",
    "Span",
    "Token",
    "activate",
    "current_traceparent",
    "deactivate",
    "end",
    "start",
    "traceparent_of",
]

#: Span and metric attributes.
Attributes = Mapping[str, Any]
#: What :func:`activate` returns, for :func:`deactivate` (a contextvars token).
Token = Any

tracer = trace.get_tracer("a2a_wsgi", __version__)
meter = metrics.get_meter("a2a_wsgi", __version__)

requests = meter.create_counter(
    "a2a.server.requests", unit="{request}",
    description="A2A requests answered, by operation, binding and status")
durations = meter.create_histogram(
    "a2a.server.request.duration", unit="s",
    description="Time to answer an A2A request (a stream: until it ended)")
open_streams = meter.create_up_down_counter(
    "a2a.server.open_streams", unit="{stream}", description="SSE streams open in this process")
task_states = meter.create_counter(
    "a2a.tasks.transitions", unit="{transition}", description="Task state changes, by new state")
push_backlog = meter.create_up_down_counter(
    "a2a.push.backlog", unit="{delivery}",
    description="Webhook POSTs queued and not yet delivered or given up (sum over processes)")
push_attempts = meter.create_counter(
    "a2a.push.attempts", unit="{attempt}", description="Webhook POST attempts, by outcome")
push_failures = meter.create_counter(
    "a2a.push.delivery.failures", unit="{attempt}",
    description="Webhook POST attempts that failed, by HTTP status or error")


#: Whether the API's global providers can be read as module attributes (they are None
#: until a provider is set in code, or loaded from the environment variables below).
_GLOBALS_READABLE = (hasattr(trace, "_TRACER_PROVIDER")
                     and hasattr(_metrics_state, "_METER_PROVIDER"))
#: An SDK named by environment variable is loaded by the API on first use, not at import.
_NAMED_IN_ENVIRON = ("OTEL_PYTHON_TRACER_PROVIDER" in os.environ
                     or "OTEL_PYTHON_METER_PROVIDER" in os.environ)


def listening() -> bool:
    """Whether an OpenTelemetry SDK is set up (a tracer or meter provider of its own).

    Without one every span is a no-op and every instrument discards what it
    is given, so a request need not build them (checked per request: an
    application may set its providers at any time). While no provider is set
    the answer is two attribute reads: the API's getters, which look at
    ``os.environ`` on every call, are asked only once one is.
    """
    if (_GLOBALS_READABLE and not _NAMED_IN_ENVIRON and trace._TRACER_PROVIDER is None
            and _metrics_state._METER_PROVIDER is None):
        return False
    return not (isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
                and isinstance(metrics.get_meter_provider(), _ProxyMeterProvider))


def _parent(current: Span, incoming: TraceParent | None,
            tracestate: str | None) -> context.Context | None:
    """The context a span starts in: the current span if there is one (an outer
    instrumentation already read the headers), else the caller's ``traceparent``."""
    if incoming is None or current.get_span_context().is_valid:
        return None
    state = TraceState.from_header([tracestate]) if tracestate else None
    remote = SpanContext(int(incoming.trace_id, 16), int(incoming.span_id, 16), is_remote=True,
                         trace_flags=TraceFlags(incoming.flags), trace_state=state)
    return trace.set_span_in_context(NonRecordingSpan(remote))


def start(name: str, kind: SpanKind, attributes: Attributes, *,
          incoming: TraceParent | None = None, tracestate: str | None = None) -> Span:
    """A span under the current one, or under ``incoming`` when nothing is current.

    A server span started inside another server span (an instrumented
    framework around the app) is made INTERNAL: one SERVER span per request.
    """
    current = trace.get_current_span()
    parent = _parent(current, incoming, tracestate)
    if kind is SpanKind.SERVER and parent is None and current.is_recording():
        kind = SpanKind.INTERNAL
    return tracer.start_span(name, context=parent, kind=kind, attributes=attributes)


def activate(span: Span) -> Token:
    """Make ``span`` current in this thread until :func:`deactivate`."""
    return context.attach(trace.set_span_in_context(span))


def deactivate(token: Token) -> None:
    context.detach(token)


def end(span: Span, attributes: Attributes, *, error: str | None = None,
        exception: BaseException | None = None) -> None:
    """Set the final attributes, the status, and end the span."""
    span.set_attributes(attributes)
    if exception is not None:
        span.record_exception(exception)
    if error is not None:
        span.set_status(Status(StatusCode.ERROR, error))
    span.end()


def failed(span: Span, exc: BaseException) -> None:
    """``span`` ends in error: ``exc`` raised under it."""
    if span.is_recording():
        span.record_exception(exc)
        span.set_status(Status(StatusCode.ERROR, type(exc).__name__))


def traceparent_of(span: Span) -> TraceParent | None:
    """The ``traceparent`` that makes a callee a child of ``span`` (None: no trace)."""
    found = span.get_span_context()
    if not found.is_valid:
        return None
    return TraceParent(f"{found.trace_id:032x}", f"{found.span_id:016x}", int(found.trace_flags))


def current_traceparent() -> TraceParent | None:
    return traceparent_of(trace.get_current_span())


def current_span() -> Span:
    return trace.get_current_span()


def captured() -> context.Context:
    """This thread's context, to carry to another thread."""
    return context.get_current()


def attach(carried: context.Context) -> Token:
    return context.attach(carried)


SERVER, CLIENT, INTERNAL = SpanKind.SERVER, SpanKind.CLIENT, SpanKind.INTERNAL
