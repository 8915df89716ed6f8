"""What a call was, for the adapter's access log and trace: filled by the bindings.

The core reads no clock and writes no log. An adapter that wants to say what
a request did puts a :class:`CallRecord` on its
:class:`~a2a_core._http.HttpRequest`; the binding that answers it writes down
the operation, the version, the request id, the task it named or made, the
error it answered with and, for a stream, how many events went out. The
adapter adds the timing, the HTTP status and the caller, then logs and traces.

A request without a record gets :data:`UNOBSERVED`, whose methods do nothing,
so the bindings fill it without asking whether anyone listens.

:class:`TraceParent` reads and writes the W3C ``traceparent`` header (Trace
Context level 1), so both the server and the client can honour one without
an OpenTelemetry SDK.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

from ._jsonvalue import JSONValue
from ._operations import Answer, Events, Result
from ._service import HEARTBEAT, IDLE, OutboundEvent, StreamItem
from .errors import InternalError, RPCError
from .models import Message, Task, TaskStatusUpdateEvent
from .optable import AnyOperation

if TYPE_CHECKING:
    from ._http import HttpRequest

__all__ = [
    "CARD",
    "CallRecord",
    "GRPC",
    "HTTP_JSON",
    "JSONRPC",
    "TraceParent",
    "UNOBSERVED",
    "observed",
]

#: The ``binding`` a call came in on, spelled as a card's ``protocolBinding``.
JSONRPC = "JSONRPC"
HTTP_JSON = "HTTP+JSON"
GRPC = "GRPC"
#: The agent card's own route (no operation).
CARD = "card"



@dataclass(slots=True)
class CallRecord:
    """What one call was: every field stays None (or 0) until a binding learns it."""

    #: JSONRPC, HTTP+JSON, GRPC or card.
    binding: str | None = None
    #: The operation's 1.0 name ("SendMessage"), whatever dialect named it.
    operation: str | None = None
    #: The protocol version the call was answered in.
    version: str | None = None
    #: The JSON-RPC id, as sent (None: a notification, or not read).
    request_id: str | int | None = None
    task_id: str | None = None
    context_id: str | None = None
    #: Whoever the deployment authenticated the caller as (never logged as such).
    identity: object = None
    #: The A2A error answered, if any: its JSON-RPC code and its reason
    #: (the 1.0 ErrorInfo reason, else the error's class name).
    error_code: int | None = None
    error_reason: str | None = None
    #: The answer is a stream; ``events`` counts the events it has yielded so far, and
    #: ``final`` says whether the last one ended the call's part of the task (a terminal
    #: or interrupted state, or a message): a stream that stops without one was cut short.
    streamed: bool = False
    events: int = 0
    final: bool = False
    #: Asked once when the answer is a stream: whether its items are to be noted as they
    #: pass (``events``, ``final``, the ids, an error it raises). False when nothing will
    #: read them (no log line, no span, no metric): the stream is handed on unwrapped.
    #: None: always noted.
    counting: Callable[[], bool] | None = None

    def start(self, binding: str, version: str | None = None, identity: object = None) -> None:
        """The binding took the request."""
        self.binding, self.version, self.identity = binding, version, identity

    def identify(self, request_id: str | int | None) -> None:
        """The JSON-RPC id could be read."""
        self.request_id = request_id

    def operating(self, operation: AnyOperation, params: Mapping[str, JSONValue]) -> None:
        """The operation is known; the task and context its params name, if any."""
        self.operation = operation.name
        self.task_id, self.context_id = _named_ids(operation, params)

    def failed(self, err: RPCError) -> None:
        """The call is answered with ``err`` (before or during a stream)."""
        self.error_code = err.code
        self.error_reason = err.reason or type(err).__name__

    def answered(self, operation: AnyOperation, outcome: Answer) -> Answer:
        """The operation's answer, its ids noted; a stream is counted as it goes."""
        if isinstance(outcome, Events):
            self.streamed = True
            if self.counting is not None and not self.counting():
                return outcome
            return Events(_Counted(outcome.items, self))
        if self.task_id is None and Task in operation.results:  # a task, or a task-or-message
            self._note_ids(*_result_ids(outcome))
        return outcome

    def _note_ids(self, task_id: str | None, context_id: str | None) -> None:
        self.task_id = self.task_id or task_id
        self.context_id = self.context_id or context_id

    def passed(self, item: StreamItem) -> None:
        """One stream item went by: counted, and its task noted."""
        if item is HEARTBEAT or item is IDLE:
            return
        self.events += 1
        event = item.event if isinstance(item, OutboundEvent) else item
        self.final = _is_final(event)
        if self.task_id is None or self.context_id is None:
            task_id = event.id if isinstance(event, Task) else getattr(event, "task_id", None)
            self._note_ids(task_id, getattr(event, "context_id", None))


class _Unobserved(CallRecord):
    """The record of a request nobody observes: it keeps nothing."""

    __slots__ = ()

    def start(self, binding: str, version: str | None = None, identity: object = None) -> None:
        pass

    def identify(self, request_id: str | int | None) -> None:
        pass

    def operating(self, operation: AnyOperation, params: Mapping[str, JSONValue]) -> None:
        pass

    def failed(self, err: RPCError) -> None:
        pass

    def answered(self, operation: AnyOperation, outcome: Answer) -> Answer:
        return outcome


#: Stands in for the record of a request that carries none.
UNOBSERVED: CallRecord = _Unobserved()


def observed(request: HttpRequest) -> CallRecord:
    """The request's record, or :data:`UNOBSERVED`."""
    return request.record if request.record is not None else UNOBSERVED


def _is_final(event: object) -> bool:
    if isinstance(event, Message):
        return True
    if not isinstance(event, (Task, TaskStatusUpdateEvent)):
        return False
    state = event.status.state
    return state.is_terminal or state.is_interrupted


def _text(value: object) -> str | None:
    # (absent and "" answer without a call; an exact str with none: every request asks)
    return value if value and (value.__class__ is str or isinstance(value, str)) else None


def _is_object(value: object) -> TypeGuard[Mapping[str, JSONValue]]:
    return value.__class__ is dict or isinstance(value, Mapping)


def _named_ids(
    operation: AnyOperation, params: Mapping[str, JSONValue]
) -> tuple[str | None, str | None]:
    """The task and context a call's params name (the JSON members both versions share)."""
    message = params.get("message")
    if message is not None and _is_object(message):
        return _text(message.get("taskId")), _text(message.get("contextId"))
    task_id = _text(params.get("taskId"))
    if task_id is None and operation.task_in_id:
        task_id = _text(params.get("id"))
    return task_id, None


def _result_ids(outcome: Result) -> tuple[str | None, str | None]:
    """The task and context of a task or message result, 1.0-wrapped or 0.3-bare."""
    value: object = outcome.value
    if not _is_object(value):
        return None, None
    if len(value) == 1:
        for inner in value.values():  # 1.0 {"task": ...} / {"message": ...}
            value = inner
        if not _is_object(value):
            return None, None
    task_id = value.get("id") if "status" in value else value.get("taskId")
    return _text(task_id), _text(value.get("contextId"))


class _Counted:
    """A stream's items, noted on a record as they pass; ``close()`` closes the items."""

    __slots__ = ("_items", "_record")

    def __init__(self, items: Iterator[StreamItem], record: CallRecord) -> None:
        self._items, self._record = items, record

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> StreamItem:
        try:
            item = next(self._items)
        except StopIteration:
            raise
        except RPCError as err:
            self._record.failed(err)
            raise
        except Exception:
            self._record.failed(InternalError())
            raise
        self._record.passed(item)
        return item

    def close(self) -> None:
        close = getattr(self._items, "close", None)
        if close is not None:
            close()


# -- W3C trace context ------------------------------------------------------------------

_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16


@dataclass(frozen=True, slots=True)
class TraceParent:
    """A W3C ``traceparent``: the caller's trace, the span that called, and its flags."""

    trace_id: str
    span_id: str
    flags: int = 0

    @property
    def sampled(self) -> bool:
        return bool(self.flags & 1)

    @classmethod
    def parse(cls, value: str | None) -> TraceParent | None:
        """The header's trace context, or None when it is absent or not valid.

        Version 00 is exactly 55 characters; a later version may append fields
        after a "-", which are ignored. Version ff, upper-case hex and all-zero
        ids are invalid (Trace Context §3.2).
        """
        if not value:
            return None
        value = value.strip(" \t")
        found = _TRACEPARENT.match(value)
        if found is None:
            return None
        version, trace_id, span_id, flags = found.groups()
        if version == "ff" or trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
            return None
        if len(value) != 55 and (version == "00" or value[55:56] != "-"):
            return None
        return cls(trace_id, span_id, int(flags, 16))

    def header(self) -> str:
        """The header value, version 00."""
        return f"00-{self.trace_id}-{self.span_id}-{self.flags:02x}"
