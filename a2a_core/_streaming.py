"""A service's stream as the bytes of an SSE response.

Each stream item becomes one ``data:`` line holding a JSON-RPC response with
the request's id (and an ``id:`` line when the item carries an event id);
heartbeats become comments; an error the stream raises ends it with one event
holding the JSON-RPC error. Closing the result stops the producer. Errors
known before the stream starts are not framed here: they are plain JSON-RPC
responses, and :func:`started` lets Operations learn a stream's own early
error while it can still answer that way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import TypeVar

from . import wire
from ._closing import ClosingIterator, close
from ._jsonrpc import RequestId, error_response_dict, response_dict
from ._jsonvalue import JSONObject, JSONValue
from ._service import HEARTBEAT, IDLE, OutboundEvent, StreamItem
from ._sse import encode_comment, encode_data_event, encode_event, join_batches
from ._versioning import V0_3
from .errors import InternalError, RPCError
from .models import Message, StreamEvent, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

__all__ = ["SSE_HEADERS", "sse_body", "started", "closing", "dumps", "encoded_event"]

logger = logging.getLogger("a2a_core.streaming")

_E = TypeVar("_E")

SSE_HEADERS = [
    ("Content-Type", "text/event-stream"),
    ("Cache-Control", "no-cache"),
    ("X-Accel-Buffering", "no"),  # nginx: do not buffer the stream
]


def dumps(value: JSONValue) -> str:
    """Compact JSON, as every body we send is written."""
    return _ENCODER.encode(value)


#: What ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` builds for each call
#: (an encoder keeps no state between calls): one for every event of every stream.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


#: Recently framed events as UTF-8 JSON, by (id(event), form). A task's event reaches
#: each of its subscribers as the same object (they read it from one batch), so it is
#: encoded once per version, not once per subscriber. An entry holds its event, so
#: the id cannot be another object's while it is kept; only events of up to
#: _MEMO_MAX_BYTES are kept, the _MEMO_SIZE newest.
_memo: dict[tuple[int, str], tuple[object, bytes]] = {}
_MEMO_SIZE = 64
_MEMO_MAX_BYTES = 64 * 1024


def encoded_event(event: _E, form: str, encode: Callable[[_E], JSONValue]) -> bytes:
    """``dumps(encode(event))`` in UTF-8, from the memo when ``event`` (the same object)
    was encoded in ``form`` (one name per ``encode``: a version, say) lately."""
    key = (id(event), form)
    hit = _memo.get(key)
    if hit is not None and hit[0] is event:
        return hit[1]
    data = dumps(encode(event)).encode("utf-8")
    if len(data) <= _MEMO_MAX_BYTES:
        if len(_memo) >= _MEMO_SIZE:
            try:
                _memo.pop(next(iter(_memo)), None)  # the oldest
            except (RuntimeError, StopIteration):  # another thread changed it meanwhile
                pass
        _memo[key] = (event, data)
    return data


_PING = encode_comment("ping")


def sse_body(request_id: RequestId, version: str, items: Iterator[StreamItem]) -> Iterator[bytes]:
    """Frame ``items``; the result's ``close()`` closes ``items`` too.

    The WSGI server calls ``close()`` when the client goes away, which must
    stop the producer even before the first chunk was taken (a bare
    generator would skip its ``finally`` then).
    """
    return ClosingIterator(_frames(request_id, version, items), also=items)


def started(items: Iterator[StreamItem]) -> Iterator[StreamItem]:
    """``items`` with its first item taken now, so an error it raises first is raised here.

    Only for a stream whose first item is at hand (a task snapshot): this
    blocks for as long as that item takes. The result closes ``items``.
    """
    try:
        first = next(items)
    except StopIteration:
        return iter(())
    except BaseException:
        close(items)
        raise
    return ClosingIterator(items, first=(first,))


def _error_event(request_id: RequestId, version: str, err: RPCError) -> bytes:
    """One plain ``data:`` event holding the JSON-RPC error.

    Not a named ``event: error``: the error object already says what it is,
    and the official 0.3 client turns a named error event into an untyped
    exception instead of the typed error.
    """
    error = error_response_dict(request_id, wire.encode_error(err, version))
    return encode_event(dumps(error))


def _envelope_head(request_id: RequestId) -> bytes:
    """``dumps(response_dict(request_id, result))`` up to the result (the JSON of the
    result and ``}`` follow): the same checks, the same bytes."""
    return dumps(response_dict(request_id, None))[: -len("null}")].encode("utf-8")


def _frames(request_id: RequestId, version: str, items: Iterator[StreamItem]) -> Iterator[bytes]:
    return join_batches(_marked_frames(request_id, version, items))


def _marked_frames(
    request_id: RequestId, version: str, items: Iterator[StreamItem]
) -> Iterator[tuple[bytes, bool]]:
    """Each item's SSE frame and whether the next item is already at hand."""
    head: bytes | None = None
    encode = partial(_encode_result, version)
    try:
        for item in items:
            if item is HEARTBEAT:
                yield _PING, False
                continue
            if item is IDLE:  # asleep: an empty write (what is held goes out first)
                yield b"", False
                continue
            event_id = None
            event: object = item
            more = False
            if isinstance(item, OutboundEvent):
                event, event_id, more = item.event, item.event_id, item.more
            if head is None:
                head = _envelope_head(request_id)
            result = encoded_event(event, version, encode)
            del item, event  # not held while the stream waits for its next item
            yield encode_data_event(head + result + b"}", id=event_id), more
            del result
    except RPCError as err:
        yield _error_event(request_id, version, err), False
    except Exception:
        logger.exception("unhandled error while streaming")
        yield _error_event(request_id, version, InternalError()), False


def _encode_result(version: str, event: object) -> JSONObject:
    return wire.encode_stream_event(_final_for(event, version), version)


def _final_for(event: object, version: str) -> StreamEvent:
    """0.3 ends a stream with ``final: true``; set it on terminal and interrupted states."""
    if not isinstance(event, (Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)):
        raise InternalError("the service yielded something that is not a stream event")
    if (
        version == V0_3
        and isinstance(event, TaskStatusUpdateEvent)
        and not event.final
        and (event.status.state.is_terminal or event.status.state.is_interrupted)
    ):
        return replace(event, final=True)
    return event


def closing(items: Iterator[StreamItem], *, on_close: Callable[[], None]) -> Iterator[StreamItem]:
    """``items``, calling ``on_close`` once: when exhausted, when it raises, or when closed
    (before the first item too). ``close()`` closes ``items``."""
    if isinstance(items, ClosingIterator) and items.adopt(on_close):
        return items  # the same calls, one layer less per item
    return ClosingIterator(items, on_close=on_close)
