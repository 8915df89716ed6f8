"""Successful HTTP+JSON answers: one JSON body, or an SSE stream of bare StreamResponses.

A handler's encoded result is the body as it is (the JSON-RPC ``result``),
except DeleteTaskPushNotificationConfig, whose ``null`` becomes the proto's
Empty ``{}``. A stream frames each event as ``data: <StreamResponse>`` with no
JSON-RPC envelope; an error raised mid-stream ends it with one
``event: error`` whose data is the ``google.rpc.Status`` body, as the
official SDK's server sends and its client reads as a typed error.

:func:`frame_stream` is the binding-neutral part of SSE framing (heartbeat
comments, event ids, the closing error event, ``close()`` reaching the
producer); :mod:`a2a_core._streaming` can frame JSON-RPC streams with it too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .. import wire
from .._closing import ClosingIterator
from .._http import HttpResponse
from .._service import Heartbeat, Idle, OutboundEvent, StreamItem
from .._sse import encode_comment, encode_event, join_batches
from .._streaming import SSE_HEADERS, dumps, encoded_event
from ..errors import InternalError, RPCError
from ..models import StreamEvent
from ._status import A2A_JSON, encode_status

__all__ = ["json_response", "sse_response", "sse_body", "frame_stream"]

logger = logging.getLogger("a2a_core.rest")

_VERSION = "1.0"


def json_response(
    result: Any, headers: Sequence[tuple[str, str]] = (), media_type: str = A2A_JSON,
) -> HttpResponse:
    """200 with the handler's encoded result, labelled ``media_type``.

    A REST body is always an object: a ``null`` result (Delete's) is proto's Empty, ``{}``.
    """
    if result is None:
        result = {}
    body = dumps(result).encode("utf-8")
    return HttpResponse(200, [("Content-Type", media_type), *headers], body)


def sse_response(
    items: Iterator[StreamItem], headers: Sequence[tuple[str, str]] = ()
) -> HttpResponse:
    """200 ``text/event-stream``; closing the body closes ``items``."""
    return HttpResponse(200, [*SSE_HEADERS, *headers], sse_body(items))


def sse_body(items: Iterator[StreamItem]) -> Iterator[bytes]:
    """The REST framing of a service's stream (see the module docstring)."""
    return frame_stream(items, _stream_response, _error_event)


def _stream_response(event: StreamEvent) -> str:
    # Once per event, not per subscriber (see streaming.encoded_event).
    return encoded_event(event, "rest", _encode_stream_response).decode("utf-8")


def _encode_stream_response(event: StreamEvent) -> Any:
    return wire.encode_stream_event(event, _VERSION)


_PING = encode_comment("ping")


def _error_event(err: RPCError) -> bytes:
    return encode_event(dumps(encode_status(err)), event="error")


def frame_stream(
    items: Iterator[StreamItem],
    encode: Callable[[StreamEvent], str],
    encode_error: Callable[[RPCError], bytes],
) -> Iterator[bytes]:
    """SSE chunks for ``items``, the data of each event written by ``encode``.

    Heartbeats become ``: ping`` comments, an :class:`~a2a_core._service.OutboundEvent`
    keeps its SSE id, and an error (an unexpected one is logged and sent as
    InternalError) ends the stream with the chunk ``encode_error`` makes.
    ``close()`` on the result stops the producer, even before the first chunk.
    """
    return ClosingIterator(_frames(items, encode, encode_error), also=items)


def _frames(
    items: Iterator[StreamItem],
    encode: Callable[[StreamEvent], str],
    encode_error: Callable[[RPCError], bytes],
) -> Iterator[bytes]:
    return join_batches(_marked_frames(items, encode, encode_error))


def _marked_frames(
    items: Iterator[StreamItem],
    encode: Callable[[StreamEvent], str],
    encode_error: Callable[[RPCError], bytes],
) -> Iterator[tuple[bytes, bool]]:
    """Each item's SSE frame and whether the next item is already at hand."""
    try:
        for item in items:
            if isinstance(item, Heartbeat):
                yield _PING, False
            elif isinstance(item, Idle):  # asleep: an empty write (what is held goes out first)
                yield b"", False
            elif isinstance(item, OutboundEvent):
                yield encode_event(encode(item.event), id=item.event_id), item.more
            else:
                yield encode_event(encode(item)), False
    except RPCError as err:
        yield encode_error(err), False
    except Exception:
        logger.exception("unhandled error while streaming")
        yield encode_error(InternalError()), False
