"""One access log line, one span and the request metrics per request: :func:`observe`.

:func:`observe` wraps an app's handling of one WSGI request. It reads the
caller's ``traceparent`` and ``X-Request-Id``, puts a
:class:`~a2a_core._observe.CallRecord` in the environ for the app to carry on
its :class:`~a2a_core._http.HttpRequest` (:func:`call_record`), makes the
request's span current while the app runs, and when the answer is done
writes the line on ``a2a_wsgi.access``. A whole body is done when the app
returns it; a stream when the server closes it, so its line tells how many
events went out and how it ended.

Nothing a client sends is logged as it came: no header but a validated
request id and trace context, no query string, no body; ids the client
chose (task, JSON-RPC id, path) are cut short and stripped of control
characters.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from a2a_core._observe import CARD, JSONRPC, CallRecord, TraceParent

from .._disconnect import client_gone_probe
from ..auth._wsgi import principal_owner
from ._trace import incoming, otel

__all__ = ["ACCESS_LOGGER", "RECORD_KEY", "call_record", "observe", "request_id", "unobserved"]

ACCESS_LOGGER = "a2a_wsgi.access"
#: Where :func:`observe` leaves the request's record in the environ.
RECORD_KEY = "a2a.call_record"
REQUEST_ID_HEADER = "X-Request-Id"

log = logging.getLogger(ACCESS_LOGGER)

StartResponse = Callable[..., Any]
Handle = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

#: A request id we echo and log as the client sent it; anything else is replaced.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:/+=@-]{1,128}")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")
_MAX_FIELD = 128


def call_record(environ: Mapping[str, Any], binding: str | None = None) -> CallRecord | None:
    """The record :func:`observe` made for this request (None: not observed).

    ``binding`` notes a route the app answers without a binding of the core
    (``"card"``: the agent card).
    """
    found = environ.get(RECORD_KEY)
    if not isinstance(found, CallRecord):
        return None
    if binding is not None and found.binding is None:
        found.start(binding)
    return found


def unobserved(environ: Mapping[str, Any]) -> bool:
    """Whether a request answered 200 or 304 would leave no trace: no :func:`observe`
    around it already, no access line at INFO, no OpenTelemetry SDK. Such a request
    may be answered without a record (it needs only its :func:`request_id`)."""
    return (RECORD_KEY not in environ and not log.isEnabledFor(logging.INFO)
            and (otel is None or not otel.listening()))


def request_id(environ: Mapping[str, Any]) -> str:
    """The request's id: the caller's ``X-Request-Id`` when it is one we echo, else new."""
    sent = environ["HTTP_X_REQUEST_ID"] if "HTTP_X_REQUEST_ID" in environ else None
    if isinstance(sent, str) and _REQUEST_ID.fullmatch(sent):
        return sent
    # A correlation id, not a secret: the process's PRNG (reseeded in each forked worker)
    # spares every request a getrandom system call.
    return f"{random.getrandbits(64):016x}"


def observe(environ: dict[str, Any], start_response: StartResponse,
            handle: Handle) -> Iterable[bytes]:
    """``handle(environ, start_response)``, logged, traced and counted.

    Inside another :func:`observe` of the same request (a middleware and the
    app both observing) it only calls ``handle``: one line per request.
    """
    if RECORD_KEY in environ:
        return handle(environ, start_response)
    call = _Call(environ, start_response)
    environ[RECORD_KEY] = call.record
    entered = call.enter()
    try:
        body = handle(environ, call.start_response)
    except BaseException as exc:
        call.leave(entered)
        call.finish(exc)
        raise
    call.leave(entered)
    if body.__class__ is list or isinstance(body, (list, tuple)):  # (a whole body: a list)
        call.finish()
        return body
    return _ObservedBody(body, call)


def _always() -> bool:
    """A stream's count is read: the span or the metrics will (an SDK listens)."""
    return True


def _logging_warnings() -> bool:
    """Whether a stream's count will be read without a span or metrics: by the line
    (INFO, or WARNING when the answer failed). Without it, its items pass unnoted."""
    return log.isEnabledFor(logging.WARNING)


class _Call:
    """One request being answered: its clock, ids, span and record."""

    def __init__(self, environ: dict[str, Any], start_response: StartResponse) -> None:
        self.started = time.perf_counter()
        self.environ = environ
        self._start_response = start_response
        self.record = CallRecord()
        self.status: int | None = None
        parent = environ["HTTP_TRACEPARENT"] if "HTTP_TRACEPARENT" in environ else None
        self.incoming = TraceParent.parse(parent) if parent is not None else None
        self.request_id = request_id(environ)
        #: Whether the answer is a stream, and how it ended (:func:`_stream_end`).
        self.streaming = False
        self.exhausted = False
        self.raised = False
        self.stream_end: str | None = None
        #: Whether an OpenTelemetry SDK listens: without one, no span and no metrics.
        self.metered = otel is not None and otel.listening()
        # a plain function, not a bound method: the record (in the environ) must not
        # hold the call, or the two would be a cycle only the collector frees
        self.record.counting = _always if self.metered else _logging_warnings
        method = environ.get("REQUEST_METHOD", "GET")
        self.span = None if not self.metered else otel.start(
            f"A2A {method}", otel.SERVER, {"http.request.method": method},
            incoming=self.incoming, tracestate=environ.get("HTTP_TRACESTATE"))
        self._done = False

    def start_response(self, status: str, headers: list[tuple[str, str]],
                       exc_info: Any = None) -> Any:
        """The app's start_response: the status noted, the request id echoed."""
        self.status = _status_code(status)
        for name, _ in headers:
            # (the first letter is looked at first: most headers never need lower())
            if name[:1] in "xX" and name.lower() == "x-request-id":
                break
        else:
            headers = [*headers, (REQUEST_ID_HEADER, self.request_id)]
        return self._start_response(status, headers, exc_info)

    def enter(self) -> tuple[Any, Any]:
        """Make this request's trace current in this thread (until :meth:`leave`)."""
        token = otel.activate(self.span) if self.span is not None else None
        return incoming.set(self.incoming), token

    def leave(self, entered: tuple[Any, Any]) -> None:
        reset, token = entered
        if token is not None:
            otel.deactivate(token)
        incoming.reset(reset)

    def finish(self, exception: BaseException | None = None) -> None:
        """The answer is done: the log line, the span's end, the metrics (once)."""
        if self._done:
            return
        self._done = True
        seconds = time.perf_counter() - self.started
        status = self.status if self.status is not None else 500
        level = logging.WARNING if status >= 500 or exception is not None else logging.INFO
        logged = log.isEnabledFor(level)
        recording = self.span is not None and self.span.is_recording()
        fields = self._fields(status, seconds, exception) if logged or recording else None
        if logged and fields is not None:
            log.log(level, "%s", _message(fields), extra=fields)
        if not self.metered:
            return
        if self.streaming:
            otel.open_streams.add(-1)
        metric = _metric_attributes(self.record, status, exception)
        otel.requests.add(1, metric)
        otel.durations.record(seconds, metric)
        if fields is not None and recording:
            self._end_span(fields, exception)
        elif self.span is not None:
            self.span.end()  # a no-op span (no SDK): nothing to describe

    def _fields(self, status: int, seconds: float,
                exception: BaseException | None) -> dict[str, Any]:
        record, environ = self.record, self.environ
        ours = otel.traceparent_of(self.span) if self.span is not None else None
        trace = ours or self.incoming
        traced = ours is not None and self.span is not None and self.span.is_recording()
        return {
            "operation": record.operation,
            "a2a_version": record.version,
            "binding": record.binding,
            "task_id": _clean(record.task_id),
            "context_id": _clean(record.context_id),
            "caller": _clean(principal_owner(record.identity)),
            "http_method": environ.get("REQUEST_METHOD"),
            "path": _clean(_path(environ)),
            "http_status": status,
            "error_code": record.error_code,
            "error_reason": record.error_reason,
            "exception": type(exception).__name__ if exception is not None else None,
            "duration_ms": round(seconds * 1000, 3),
            "request_id": self.request_id,
            "rpc_id": _clean(record.request_id),
            "trace_id": trace.trace_id if trace is not None else None,
            "span_id": ours.span_id if traced and ours is not None else None,
            "streamed": record.streamed,
            "events": record.events if record.streamed else None,
            "stream_end": self.stream_end,
            "remote_addr": environ.get("REMOTE_ADDR"),
        }

    def _end_span(self, fields: dict[str, Any], exception: BaseException | None) -> None:
        assert self.span is not None
        name = fields["operation"] or ("agent card" if fields["binding"] == CARD else None)
        if name is not None:
            self.span.update_name(f"A2A {name}")
        error = _error_description(fields, exception)
        otel.end(self.span, _span_attributes(fields), error=error, exception=exception)


class _ObservedBody:
    """A streamed body whose ``close()`` ends the request's line and span.

    Each chunk is produced with the request's trace current, so what the
    stream's producer logs or calls joins the trace.
    """

    def __init__(self, body: Iterable[bytes], call: _Call) -> None:
        self._body = body
        self._chunks: Iterator[bytes] = iter(body)
        self._call = call
        call.streaming = True
        if call.metered:
            otel.open_streams.add(1)

    def __iter__(self) -> _ObservedBody:
        return self

    def __next__(self) -> bytes:
        call = self._call
        if call.span is None and incoming.get() is call.incoming:
            entered = None  # the request's trace is current already: nothing to enter
        else:
            entered = call.enter()
        try:
            chunk = next(self._chunks)
        except StopIteration:
            call.exhausted = True
            raise
        except BaseException:
            call.raised = True
            raise
        finally:
            if entered is not None:
                call.leave(entered)
        return chunk

    def close(self) -> None:
        call = self._call
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            call.stream_end = _stream_end(call)
            call.finish()


def _stream_end(call: _Call) -> str:
    """How a stream ended, as far as the server can tell once it is closed.

    "complete": it ran to the event that ends the task's part; "failed": it
    raised or ended with an error event; "client gone": the client hung up
    first; "ended": its producer stopped early (a subscription's time limit);
    "closed": the server closed it before the end (shutting down).
    """
    if call.raised or call.record.error_code is not None:
        return "failed"
    if call.exhausted and call.record.final:
        return "complete"
    gone = client_gone_probe(call.environ)
    if gone is not None and gone():
        return "client gone"
    return "ended" if call.exhausted else "closed"


def _metric_attributes(record: CallRecord, status: int,
                       exception: BaseException | None) -> dict[str, Any]:
    """The request metrics' labels: bounded sets of values only (no ids)."""
    error = record.error_reason or (type(exception).__name__ if exception else None)
    labels = {"a2a.operation": record.operation, "a2a.binding": record.binding,
              "a2a.version": record.version, "http.response.status_code": status,
              "error.type": error}
    return {k: v for k, v in labels.items() if v is not None}


def _span_attributes(fields: dict[str, Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "a2a.operation": fields["operation"],
        "a2a.version": fields["a2a_version"],
        "a2a.binding": fields["binding"],
        "a2a.task_id": fields["task_id"],
        "a2a.context_id": fields["context_id"],
        "a2a.caller": fields["caller"],
        "a2a.request_id": fields["request_id"],
        "http.request.method": fields["http_method"],
        "url.path": fields["path"],
        "http.response.status_code": fields["http_status"],
        "a2a.error.code": fields["error_code"],
        "error.type": fields["error_reason"] or fields["exception"],
    }
    if fields["binding"] == JSONRPC:
        attributes.update({"rpc.system": "jsonrpc", "rpc.method": fields["operation"],
                           "rpc.jsonrpc.request_id": fields["rpc_id"],
                           "rpc.jsonrpc.error_code": fields["error_code"]})
    if fields["streamed"]:
        attributes.update({"a2a.stream.events": fields["events"],
                           "a2a.stream.end": fields["stream_end"]})
    return {k: v for k, v in attributes.items() if v is not None}


def _error_description(fields: dict[str, Any], exception: BaseException | None) -> str | None:
    """Why the span failed: the A2A error answered, a 5xx, or an exception; else None."""
    if fields["error_code"] is not None:
        return f"{fields['error_reason']} ({fields['error_code']})"
    if exception is not None:
        return type(exception).__name__
    if fields["http_status"] >= 500:
        return f"HTTP {fields['http_status']}"
    return None


def _message(fields: dict[str, Any]) -> str:
    """The line a person reads: what, how it went, how long, and the ids to look it up by."""
    what = [fields["operation"] or f"{fields['http_method']} {fields['path']}"]
    what += [v for v in (fields["binding"], fields["a2a_version"]) if v]
    outcome = [str(fields["http_status"])]
    if fields["error_code"] is not None:
        outcome.append(f"{fields['error_reason']}({fields['error_code']})")
    if fields["exception"]:
        outcome.append(f"raised {fields['exception']}")
    if fields["streamed"]:
        outcome.append(f"stream {fields['stream_end']} after {fields['events']} events")
    ids = [f"{name}={fields[key]}" for name, key in _IDS if fields[key] is not None]
    return (f"{' '.join(what)} -> {' '.join(outcome)} in {fields['duration_ms']:.1f} ms "
            f"{' '.join(ids)}")


_IDS = (("task", "task_id"), ("caller", "caller"), ("rid", "request_id"), ("rpc_id", "rpc_id"),
        ("trace", "trace_id"))


def _path(environ: dict[str, Any]) -> str:
    return f"{environ.get('SCRIPT_NAME', '')}{environ.get('PATH_INFO', '')}" or "/"


def _clean(value: Any) -> Any:
    """A client-chosen value fit for a log line: printable ASCII, at most 128 characters."""
    if value is None or isinstance(value, int):
        return value
    text = _UNPRINTABLE.sub("?", str(value))
    return text if len(text) <= _MAX_FIELD else text[:_MAX_FIELD - 1] + "…"


def _status_code(status: str) -> int | None:
    try:
        return int(status[:3])
    except ValueError:
        return None
