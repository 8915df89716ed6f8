"""Webhook deliveries: a client span per POST, under the trace that queued it, and metrics.

The trace context travels in the outbox entry's own ``traceparent`` header
(:func:`~a2a_wsgi._telemetry.traced_outbox`), so a POST made by another
thread, another process or after a restart still joins it. With
OpenTelemetry the header is replaced by the POST's own span; without it,
the stored header goes out as it is.

Nothing of the webhook URL is recorded but its host and port: a query or
even a path may hold a secret (many services put one there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from a2a_core._observe import TraceParent

from ._runtime import TRACEPARENT_HEADER
from ._trace import otel

__all__ = ["PushAttempt", "push_settled"]

Headers = Sequence[tuple[str, str]]


class PushAttempt:
    """One POST to a webhook: ``with PushAttempt(...) as attempt: post(attempt.headers)``."""

    def __init__(self, task_id: str, config_id: str, url: str, attempt: int,
                 headers: Headers) -> None:
        self.headers: list[tuple[str, str]] = list(headers)
        self._span: Any = None
        if otel is None:
            return
        parts = urlsplit(url)
        attributes = {"a2a.task_id": task_id, "a2a.push.config_id": config_id,
                      "a2a.push.attempt": attempt, "http.request.method": "POST",
                      "server.address": parts.hostname or "", "server.port": _port(parts)}
        stored = TraceParent.parse(_header(self.headers, TRACEPARENT_HEADER))
        self._span = otel.start("A2A push delivery", otel.CLIENT, attributes, incoming=stored)
        own = otel.traceparent_of(self._span)
        if own is not None:
            self.headers = [(k, v) for k, v in self.headers if k.lower() != TRACEPARENT_HEADER]
            self.headers.append((TRACEPARENT_HEADER, own.header()))

    def __enter__(self) -> PushAttempt:
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if self._span is not None:
            otel.end(self._span, {}, exception=exc, error=type(exc).__name__ if exc else None)
            self._span = None

    def answered(self, status: int | None, error: str | None) -> None:
        """What the receiver answered (None: no answer, ``error`` says why)."""
        if otel is None:
            return
        ok = status is not None and 200 <= status < 300
        otel.push_attempts.add(1, {"a2a.push.outcome": "delivered" if ok else "failed"})
        reason = None if ok else str(status) if status is not None else _error_kind(error)
        if reason is not None:
            otel.push_failures.add(1, {"error.type": reason})
        if self._span is not None:
            attributes = {"http.response.status_code": status} if status is not None else {}
            otel.end(self._span, attributes, error=reason)
            self._span = None


def push_settled(count: int = 1) -> None:
    """``count`` queued POSTs left the outbox (delivered, or given up): off the backlog."""
    if otel is not None:
        otel.push_backlog.add(-count)


def _header(headers: Headers, name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _port(parts: Any) -> int:
    try:
        port = parts.port
    except ValueError:
        port = None
    return int(port) if port is not None else (443 if parts.scheme == "https" else 80)


def _error_kind(error: str | None) -> str:
    """A bounded label for an attempt that got no answer ("timed out", "connect failed")."""
    text = (error or "error").split(":", 1)[0]
    return text if text in ("timed out", "connect failed", "failed") else "error"
