"""What bounding the client's reads must not break: compressed bodies still decode, an
event on a stream without chunking arrives when it is sent (not once 64 KiB piled up), and
events, unlike comments, keep a stream alive past its event timeout; and the client's own
limits (``A2AClient(event_timeout=, max_event_size=)``) reach every stream it opens."""

from __future__ import annotations

import gzip
import json
import socket
import time
from collections.abc import Callable, Iterator

import pytest
from hostile_server import HostileServer, Request, card_json, sse, working_event

from a2a_client import A2AClient
from a2a_client._errors import ReadTimeout
from a2a_client._streams import DEFAULT_EVENT_TIMEOUT, EventStream
from a2a_core.errors import RemoteProtocolError
from a2a_core.models import Task, TaskStatusUpdateEvent


def _gzipped_card(server: HostileServer, conn: socket.socket, req: Request) -> None:
    body = gzip.compress(card_json(f"{server.url}/gzip-card"))
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip"
                 b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def _one_event_then_silence(server: HostileServer) -> Iterator[bytes]:
    yield working_event() + b"\n\n"
    yield from server.trickle(b"", 30)  # nothing more, connection open


def _status(state: str, final: bool = False) -> bytes:
    event = {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": state},
                              "final": final}}
    return b"data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": event}).encode()


def _events_slower_than_nothing(server: HostileServer) -> Iterator[bytes]:
    """Working updates 0.3 s apart for 1.5 s (each inside a 1 s event timeout), then done."""
    yield working_event() + b"\n\n"
    for _ in range(5):
        time.sleep(0.3)
        yield b": tick\n\n" + _status("TASK_STATE_WORKING") + b"\n\n"
    yield _status("TASK_STATE_COMPLETED", final=True) + b"\n\n"


def _one_event_of(size: int) -> Callable[[HostileServer], Iterator[bytes]]:
    """An event whose data line is ``size`` bytes, sent in 64 KiB blocks, then silence."""
    def blocks(server: HostileServer) -> Iterator[bytes]:
        yield b"data: "
        for _ in range(size // 65536):
            yield b"x" * 65536
        yield b"\n\n"
        yield from server.trickle(b"", 30)
    return blocks


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    cases = {
        "event-1m": ("post", sse(_one_event_of(1024 * 1024))),
        "gzip-card": ("card", _gzipped_card),
        "unchunked": ("post", sse(_one_event_then_silence, chunked=False)),
        "steady": ("post", sse(_events_slower_than_nothing)),
    }
    hostile = HostileServer(cases)
    yield hostile
    hostile.close()


def test_a_gzip_encoded_card_is_decoded(server: HostileServer) -> None:
    with A2AClient(f"{server.url}/gzip-card", timeout=5) as agent:
        assert agent.get_card().name == "Hostile Agent"


def test_an_event_on_a_stream_without_chunking_arrives_before_more_bytes_do(
    server: HostileServer,
) -> None:
    with A2AClient(f"{server.url}/unchunked", timeout=5, stream_idle_timeout=20) as agent:
        stream = agent.stream_message("hi")
        stream.event_timeout = 20  # longer than any wait the test itself tolerates
        began = time.monotonic()
        first = next(stream)
        waited = time.monotonic() - began
        stream.close()
    assert isinstance(first, Task) and first.id == "t-1"
    assert waited < 10, "the event waited for a full read buffer"


def test_events_keep_a_stream_alive_past_its_event_timeout(server: HostileServer) -> None:
    with A2AClient(f"{server.url}/steady", timeout=5) as agent:
        stream = agent.stream_message("hi")
        stream.event_timeout = 1.0
        events = list(stream)
    assert isinstance(events[-1], TaskStatusUpdateEvent) and events[-1].final
    assert len(events) == 7


def test_event_timeout_is_generous_by_default_and_must_be_positive() -> None:
    assert 60 <= DEFAULT_EVENT_TIMEOUT < float("inf")
    with pytest.raises(ValueError):
        EventStream(lambda: None, lambda value: value, event_timeout=0)  # type: ignore[arg-type,return-value]


def test_the_event_timeout_cuts_a_read_short_and_ends_the_stream_without_resubscribing(
    server: HostileServer,
) -> None:
    """One event, then silence: the wait is cut by the event timeout, well before the
    (longer) read timeout, and the stream ends instead of resubscribing."""
    with A2AClient(f"{server.url}/unchunked", timeout=5, stream_idle_timeout=20,
                   reconnect_delay=0.01) as agent:
        stream = agent.stream_message("hi")
        stream.event_timeout = 0.5
        next(stream)
        began = time.monotonic()
        with pytest.raises(ReadTimeout, match="no stream event for 0.5 seconds"):
            next(stream)
        assert time.monotonic() - began < 10
        assert stream.reconnects == 0


def test_the_clients_event_timeout_reaches_its_streams_and_ends_a_silent_one(
    server: HostileServer,
) -> None:
    with A2AClient(f"{server.url}/unchunked", timeout=5, stream_idle_timeout=20,
                   event_timeout=0.5, max_event_size=4096, reconnect_delay=0.01) as agent:
        for stream in (agent.stream_message("hi"), agent.subscribe("t-1")):
            assert (stream.event_timeout, stream.max_event_size) == (0.5, 4096)
            stream.close()
        stream = agent.stream_message("hi")
        next(stream)
        began = time.monotonic()
        with pytest.raises(ReadTimeout, match="no stream event for 0.5 seconds"):
            next(stream)
        assert time.monotonic() - began < 10
        assert stream.reconnects == 0


def test_the_clients_max_event_size_ends_a_stream_at_an_event_past_it(
    server: HostileServer,
) -> None:
    with A2AClient(f"{server.url}/event-1m", timeout=5, stream_idle_timeout=20,
                   max_event_size=64 * 1024) as agent:
        stream = agent.stream_message("hi")
        began = time.monotonic()
        with pytest.raises(RemoteProtocolError, match="65536"):
            next(stream)
        assert time.monotonic() - began < 10
    # the default lets the same event through to the decoder (it is no A2A event, so the
    # stream skips it and then times out on the silence after it)
    with A2AClient(f"{server.url}/event-1m", timeout=5, stream_idle_timeout=20,
                   event_timeout=0.5) as agent, pytest.raises(ReadTimeout):
        next(agent.stream_message("hi"))


@pytest.mark.parametrize("limits", [{"event_timeout": 0}, {"event_timeout": -1.0},
                                    {"max_event_size": 0}])
def test_the_clients_event_limits_must_be_positive(limits: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        A2AClient("http://127.0.0.1:9/", **limits)  # type: ignore[arg-type]
