"""The trace a thread works for: OpenTelemetry's current span, else the caller's traceparent.

Without OpenTelemetry a request still has a trace when its caller sent a
valid ``traceparent``: it is held here for the request's thread (and carried
to the agent's), so log lines name it and webhook POSTs pass it on.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from a2a_core._observe import TraceParent

try:
    from . import _otel as otel
except ImportError:  # opentelemetry is not installed: nothing of it is imported
    otel = None  # type: ignore[assignment]

__all__ = ["carry", "current_traceparent", "incoming", "otel"]

#: The caller's trace context of the request this thread serves (None: none sent).
incoming: ContextVar[TraceParent | None] = ContextVar("a2a_traceparent", default=None)

R = TypeVar("R")


def current_traceparent() -> TraceParent | None:
    """What a callee of this thread should name as its parent: the current span, else
    the caller's context, else None."""
    if otel is not None:
        found = otel.current_traceparent()
        if found is not None:
            return found
    return incoming.get()


def carry(fn: Callable[..., R]) -> Callable[..., R]:
    """``fn``, run in this thread's trace wherever it is called (a pool's thread).

    Only the trace context travels (the current span and the caller's
    traceparent), not every context variable: a framework's request context
    stays with the request. Nothing to carry: ``fn`` itself.
    """
    caller = incoming.get()
    carried = otel.captured() if otel is not None and otel.current_traceparent() else None
    if caller is None and carried is None:
        return fn

    def in_trace(*args: Any, **kwargs: Any) -> R:
        reset = incoming.set(caller)
        token = otel.attach(carried) if carried is not None else None
        try:
            return fn(*args, **kwargs)
        finally:
            if token is not None:
                otel.deactivate(token)
            incoming.reset(reset)

    return in_trace
