"""The client's stream reader: bytes from the wire, cut into reads where the input says,
through :class:`~a2a_client._streams.EventStream` (the SSE decoder, the event's JSON, the
JSON-RPC or HTTP+JSON stream event decoder, ids and generations) to the typed events.

The first byte chooses the binding (even: JSON-RPC, odd: HTTP+JSON) and the size of the
reads (from 1 byte to 4 KiB: :data:`STEPS`); the rest is the body of a
``text/event-stream`` answer. Events are capped at 4096 bytes, so memory stays bounded
however the bytes are framed.

Documented errors: :class:`~a2a_core.errors.A2AError`: RemoteProtocolError (an event too
large), an RPCError sent as an error event, TransportError (the stream ended before the
task settled: there is no server to resubscribe to here).
"""

from __future__ import annotations

from typing import Any

import requests
from _harness import fuzz, instrumented
from requests.structures import CaseInsensitiveDict

with instrumented(__name__ == "__main__"):
    from a2a_client._rest import rest_stream_event
    from a2a_client._rpc import stream_event
    from a2a_client._streams import EventStream
    from a2a_client._transport import Reply
    from a2a_core.errors import A2AError

MAX_EVENT = 4096
#: Read sizes (the first byte's bits 1-3 choose): byte by byte costs, so half are larger.
STEPS = (1, 2, 3, 7, 16, 61, 256, 4096)


class WireBytes:
    """What Reply reads a body from (urllib3's response, as far as Reply uses it):
    ``read1`` hands the input over ``step`` bytes at a time."""

    def __init__(self, body: bytes, step: int) -> None:
        self._body, self._step, self._at = body, step, 0

    def read1(self, amt: int, decode_content: bool = True) -> bytes:
        piece = self._body[self._at : self._at + min(amt, self._step)]
        self._at += len(piece)
        return piece

    def close(self) -> None:
        self._at = len(self._body)


def reply(body: bytes, step: int) -> Reply:
    response = requests.Response()
    response.status_code = 200
    response.headers = CaseInsensitiveDict({"Content-Type": "text/event-stream"})
    response.raw = WireBytes(body, step)
    response.url = "http://agent.example/a2a"
    return Reply(response, max_body=1 << 20)


def check(data: bytes) -> None:
    if not data:
        return
    decode: Any = rest_stream_event if data[0] & 1 else stream_event
    step = STEPS[(data[0] >> 1) % 8]
    stream = EventStream(lambda: reply(data[1:], step), decode, reopen=None, fetch=None,
                         event_timeout=None, max_event_size=MAX_EVENT)
    try:
        for _ in stream:
            pass
    except A2AError:
        pass
    finally:
        stream.close()


if __name__ == "__main__":
    fuzz(check)
