"""What the telemetry tests share: the OpenTelemetry SDK in memory, and a served A2AApp.

The SDK's providers are global and can be set once per process, so they are
set here on first import and kept; a span processor records only while a
test holds :func:`captured_spans`, so the rest of a test session does not
fill memory with spans.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

from a2a_wsgi import A2AApp
from a2a_wsgi._serve import ServerHandle, serve
from a2a_wsgi._telemetry import ACCESS_LOGGER

__all__ = ["READER", "SPANS", "access_lines", "captured_spans", "metric_points", "metric_total",
           "serving", "texts_of", "wait_until"]


class _Capture(SpanProcessor):
    """Keeps ended spans while armed."""

    def __init__(self) -> None:
        self.armed = False
        self.spans: list[ReadableSpan] = []
        self.lock = threading.Lock()

    def on_end(self, span: ReadableSpan) -> None:
        if self.armed:
            with self.lock:
                self.spans.append(span)

    def ended(self) -> list[ReadableSpan]:
        with self.lock:
            return list(self.spans)


def _install() -> tuple[_Capture, InMemoryMetricReader]:
    capture = _Capture()
    provider = TracerProvider()
    provider.add_span_processor(capture)
    trace.set_tracer_provider(provider)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    assert trace.get_tracer_provider() is provider, "another tracer provider was set first"
    return capture, reader


SPANS, READER = _install()


def metric_points(name: str) -> list[tuple[dict[str, Any], float]]:
    """(attributes, value) of every point of metric ``name`` as collected now (cumulative)."""
    found: list[tuple[dict[str, Any], float]] = []
    data = READER.get_metrics_data()
    if data is None:
        return found
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name != name:
                    continue
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    if value is None:
                        value = getattr(point, "count", 0)
                    found.append((dict(point.attributes or {}), float(value)))
    return found


def metric_total(name: str, **attributes: Any) -> float:
    """The sum of ``name``'s points whose attributes include ``attributes``."""
    return sum(value for labels, value in metric_points(name)
               if all(labels.get(k) == v for k, v in attributes.items()))


@contextmanager
def serving(app: A2AApp) -> Iterator[ServerHandle]:
    """``app`` (which observes its requests) on an ephemeral loopback port; stopped and
    closed afterwards."""
    app.start()
    handle = serve(app, "127.0.0.1:0")
    try:
        yield handle
    finally:
        handle.stop()
        app.close()
        app.runtime.store.close()  # a PostgreSQL store's connections


@contextmanager
def captured_spans() -> Iterator[_Capture]:
    with SPANS.lock:
        SPANS.spans.clear()
    SPANS.armed = True
    try:
        yield SPANS
    finally:
        SPANS.armed = False
        with SPANS.lock:
            SPANS.spans.clear()


def access_lines(records: Iterable[logging.LogRecord]) -> list[logging.LogRecord]:
    return [r for r in records if r.name == ACCESS_LOGGER]


def texts_of(records: Iterable[logging.LogRecord], spans: Iterable[ReadableSpan]) -> list[str]:
    """Everything a log record or a span shows: messages, every attribute, every event."""
    shown: list[str] = []
    for record in records:
        shown.append(record.getMessage())
        shown.extend(repr(v) for v in vars(record).values())
    for span in spans:
        shown.append(span.name)
        shown.extend(f"{k}={v!r}" for k, v in (span.attributes or {}).items())
        shown.append(repr(span.status.description))
        for event in span.events:
            shown.append(event.name)
            shown.extend(f"{k}={v!r}" for k, v in (event.attributes or {}).items())
    return shown


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    """``predicate()`` once it is truthy; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)
