"""A stream of typed events that survives a dropped connection.

:class:`EventStream` reads SSE with the core's incremental decoder (any chunking
works), hands each event's JSON to a decoder supplied by the client, and keeps
track of where the task is:

* it **ends** at a Message, at a 0.3 ``final: true`` status update, or at EOF after a
  terminal or interrupted state (1.0 servers close there; one that keeps an
  AUTH_REQUIRED stream open is read on);
* when the connection drops (or stays idle past the stream timeout) *before* that,
  it **resubscribes** to the task, sending ``Last-Event-ID`` when the server gave SSE
  ids, and drops events whose id it has already yielded. The number of reconnects in
  a row without progress is bounded, so a dead server still ends in an error;
* when the server says the task can no longer be subscribed to (it finished while we
  were away, or it does not stream), it yields the task from ``GetTask`` instead, so
  the caller learns the outcome rather than losing the task.

Memory and time are bounded whatever the server sends: an event (or a line) longer than
``max_event_size`` bytes (UTF-8) raises :class:`~a2a_core.errors.RemoteProtocolError`, and a
stream that hands on no event for ``event_timeout`` seconds raises
:class:`~a2a_client._errors.ReadTimeout` without resubscribing: comments and keep-alives
keep the connection alive, not the stream (the server is there, the task just says
nothing; a resubscription would wait the same).

Events that cannot be decoded are logged and skipped, so one odd event does not end
the stream; a JSON-RPC error event raises its typed error.

When the events carry **task generations** (the dev-1.1 preview, negotiated by asking
for :data:`~a2a_core._generations.GENERATIONS_EXTENSION_URI` in ``extensions=``), the
stream also proves it is complete: an update whose generation repeats one already
handed on is dropped, and one that skips a generation makes the stream fetch the task
once (GetTask) and hand that snapshot on first, so nothing the caller missed is lost;
``stream.gaps`` counts those recoveries.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

from a2a_core._sse import DEFAULT_MAX_EVENT_SIZE, END, NEED_DATA, SSEDecoder
from a2a_core.errors import (
    MethodNotFoundError,
    RemoteProtocolError,
    UnsupportedOperationError,
)
from a2a_core.models import (
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)

from ._errors import ReadTimeout, TransportError
from ._transport import DeadlineExceeded, Reply

__all__ = ["DEFAULT_EVENT_TIMEOUT", "DEFAULT_MAX_EVENT_SIZE", "EventStream"]

#: Seconds a stream may go without an event (comments and keep-alives do not count):
#: generous, for agents that work long between updates, but finite.
DEFAULT_EVENT_TIMEOUT = 300.0

log = logging.getLogger("a2a_client")

#: Opens a resubscription: (task id, last event id or None) -> an SSE reply.
Reopen = Callable[[str, "str | None"], Reply]


class EventStream(Iterator[StreamEvent]):
    """Iterate over typed events; ``close()`` (or ``with``) releases the connection.

    :param open: opens the first stream (already checked for HTTP and JSON-RPC errors).
    :param decode: JSON value of one event -> event; raises RemoteProtocolError when
        undecodable, an RPCError for an error response.
    :param reopen: resubscribes; ``None`` disables resuming.
    :param fetch: GetTask, used when resubscribing is refused.
    :param event_timeout: seconds without an event before ReadTimeout (None: no limit
        but the read timeout's); the attribute may be changed before or while iterating.
    :param max_event_size: the longest event (and line) read, in bytes of UTF-8.
    """

    def __init__(
        self,
        open: Callable[[], Reply],
        decode: Callable[[Any], StreamEvent],
        *,
        reopen: Reopen | None = None,
        fetch: Callable[[str], Task] | None = None,
        max_reconnects: int = 3,
        reconnect_delay: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        event_timeout: float | None = DEFAULT_EVENT_TIMEOUT,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
    ) -> None:
        if event_timeout is not None and event_timeout <= 0:
            raise ValueError("event_timeout must be > 0 (or None)")
        if max_event_size < 1:
            raise ValueError("max_event_size must be positive")
        self.event_timeout = event_timeout
        self.max_event_size = max_event_size
        self._decode = decode
        self._reopen = reopen
        self._fetch = fetch
        self.max_reconnects = max_reconnects
        self.reconnect_delay = reconnect_delay
        self._sleep = sleep
        #: Opened now, so that errors (task not found, HTTP 401…) raise at the call.
        self._reply: Reply = open()
        #: The task this stream is about, once an event named it.
        self.task_id: str | None = None
        #: The last SSE ``id`` seen (sent back as ``Last-Event-ID`` on resubscribe).
        self.last_event_id: str | None = None
        #: How many times this stream resubscribed.
        self.reconnects = 0
        self._seen_ids: set[str] = set()
        self._settled = False  # a terminal/interrupted state was seen: EOF is a normal end
        #: Set by abort(): the stream ends at once, without resubscribing.
        self.aborted = False
        #: The generation of the last event handed on (None: the events carry none).
        self.generation: int | None = None
        #: Gaps in the generations recovered with a GetTask.
        self.gaps = 0
        self._last_event = time.monotonic()  # (restarted when the iteration starts)
        self._events = self._run()

    def __next__(self) -> StreamEvent:
        return next(self._events)

    def __iter__(self) -> EventStream:
        return self

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading and release the connection (idempotent)."""
        self._events.close()
        self._reply.close()

    def abort(self) -> None:
        """From another thread: stop a read in progress; the iteration ends, no resubscribe."""
        self.aborted = True
        self._reply.abort()

    # -- the loop -------------------------------------------------------------------------

    def _run(self) -> Generator[StreamEvent, None, None]:
        """Read, and on a premature end resubscribe; see the module docstring."""
        failures = 0
        self._last_event = time.monotonic()
        while True:
            progressed, error = False, None
            try:
                for received in self._read(self._reply):
                    for event in self._in_order(received):
                        progressed = progressed or not isinstance(event, Task)
                        yield event
                        self._last_event = time.monotonic()
                    if self._finished(received):
                        return
            except DeadlineExceeded as exc:  # the event timeout, not a drop: no resubscribing
                if self._reply.content_type != "text/event-stream":
                    raise  # (a single JSON answer that trickled past its read timeout)
                raise self._idle_error() from exc
            except TransportError as exc:
                error = exc
            except Exception:
                if not self.aborted:
                    raise
            finally:
                self._reply.close()
            if self._settled or self.aborted:
                return
            failures = 0 if progressed else failures + 1
            replacement, failures = self._resume(failures, error)
            if isinstance(replacement, Task):
                yield replacement
                return
            self._reply = replacement

    def _resume(self, failures: int, error: TransportError | None) -> tuple[Reply | Task, int]:
        """Resubscribe after a drop, or raise when we cannot or may not; (reply, failures).

        A resubscription that fails to connect (a restarting server refuses connections
        for a moment) is one more reconnect without progress, tried again after the
        next delay, not the end of the stream.
        """
        while True:
            if self._reopen is None or self.task_id is None or failures > self.max_reconnects:
                if error is not None:
                    raise error
                raise TransportError("the stream ended before the task reached a final state")
            self.reconnects += 1
            log.info("stream for task %s dropped; resubscribing (%d)",
                     self.task_id, self.reconnects)
            self._sleep(self.reconnect_delay * (failures + 1))
            try:
                return self._reopen(self.task_id, self.last_event_id), failures
            except (UnsupportedOperationError, MethodNotFoundError):
                if self._fetch is None:
                    raise
                return self._fetch(self.task_id), failures
            except TransportError as exc:
                if self.aborted:
                    raise
                failures, error = failures + 1, exc

    def _read(self, reply: Reply) -> Iterator[StreamEvent]:
        """Events of one reply: SSE, or a single JSON-RPC response if the server sent one."""
        if reply.content_type != "text/event-stream":
            yield self._note(self._decode(_json(reply.read())))
            return
        decoder = SSEDecoder(max_event_size=self.max_event_size)
        self._set_deadline(reply)
        for chunk in reply.iter_bytes():
            if chunk:
                decoder.receive_data(chunk)
                for event in self._drain(decoder):
                    yield event
                    self._set_deadline(reply)
                if self._past_event_timeout():  # (a reader with no socket to arm)
                    raise DeadlineExceeded("no event before the stream's deadline")
        decoder.receive_data(b"")
        yield from self._drain(decoder)

    def _set_deadline(self, reply: Reply) -> None:
        """No read of ``reply`` waits past the event timeout, counted from the last event."""
        limit = self.event_timeout
        reply.deadline = None if limit is None else self._last_event + limit

    def _past_event_timeout(self) -> bool:
        limit = self.event_timeout
        return limit is not None and time.monotonic() - self._last_event >= limit

    def _idle_error(self) -> ReadTimeout:
        """What the caller gets when the event timeout ends the stream."""
        return ReadTimeout(f"no stream event for {self.event_timeout or 0:g} seconds "
                           "(comments and keep-alives do not count)")

    def _drain(self, decoder: SSEDecoder) -> Iterator[StreamEvent]:
        """Every complete event in the decoder, deduplicated by SSE id."""
        while True:
            sse = decoder.next_event()
            if sse is NEED_DATA or sse is END:
                return
            if sse.id is not None:
                if sse.id in self._seen_ids:
                    continue
                self._seen_ids.add(sse.id)
                self.last_event_id = sse.id
            try:
                event = self._decode(_json(sse.data))
            except RemoteProtocolError as exc:
                log.warning("skipping an undecodable stream event: %s", exc)
                continue
            yield self._note(event)

    def _in_order(self, event: StreamEvent) -> Iterator[StreamEvent]:
        """The event, checked against the generations handed on so far (module docstring)."""
        generation = getattr(event, "generation", None)
        if generation is None or isinstance(event, Message):
            yield event
            return
        last = self.generation
        if isinstance(event, Task) or last is None:
            self.generation = generation
            yield event
            return
        if generation <= last:
            return  # already handed on (a replay after resubscribing)
        if generation > last + 1 and self._fetch is not None and self.task_id is not None:
            self.gaps += 1
            log.info("task %s: generations %d..%d missing; fetching the task",
                     self.task_id, last + 1, generation - 1)
            task = self._fetch(self.task_id)
            self._note(task)
            yield task
            if task.generation is not None and task.generation >= generation:
                self.generation = task.generation
                return  # the snapshot already holds this change
        self.generation = generation
        yield event

    # -- bookkeeping ----------------------------------------------------------------------

    def _note(self, event: StreamEvent) -> StreamEvent:
        """Remember the task id and whether EOF would now be a normal end."""
        if isinstance(event, Task):
            self.task_id = event.id
            self._settled = _settles(event.status.state)
        elif isinstance(event, (TaskStatusUpdateEvent, TaskArtifactUpdateEvent)):
            self.task_id = event.task_id
            if isinstance(event, TaskStatusUpdateEvent):
                self._settled = _settles(event.status.state) or event.final
        return event

    def _finished(self, event: StreamEvent) -> bool:
        """Stop reading now: a Message reply, or 0.3's ``final: true``."""
        return isinstance(event, Message) or (
            isinstance(event, TaskStatusUpdateEvent) and event.final
        )


def _settles(state: Any) -> bool:
    return bool(state.is_terminal or state.is_interrupted)


def _json(data: bytes | str) -> Any:
    """One event's JSON; garbage is the peer's protocol error."""
    try:
        return json.loads(data)
    except ValueError as exc:
        raise RemoteProtocolError(f"stream event is not JSON: {exc}") from exc
    except RecursionError:  # nesting deeper than Python's json recurses
        raise RemoteProtocolError("stream event is not JSON we can read: nested too deep") from None
