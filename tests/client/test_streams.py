"""Streams over real sockets: any chunking, drops resumed without losing or repeating events."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from client_peers import Err, Peer, card_v03, sse, sse_event, status_json, task_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.wsgi_server import Served
from werkzeug.wrappers import Response

from a2a_client import A2AClient
from a2a_client._errors import ReadTimeout, TransportError
from a2a_core.errors import InternalError, UnsupportedOperationError
from a2a_core.models import (
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)


def status_update(state: str, *, v03: bool = False, final: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "taskId": "t1",
        "contextId": "ctx-1",
        "status": status_json(state, v03=v03),
    }
    if v03:
        return {**body, "kind": "status-update", "final": final}
    return {"statusUpdate": body}


def artifact_update(text: str) -> dict[str, Any]:
    artifact = {"artifactId": "art-1", "parts": [{"text": text}]}
    return {"artifactUpdate": {"taskId": "t1", "contextId": "ctx-1", "artifact": artifact}}


def kinds(events: Any) -> list[str]:
    out = []
    for event in events:
        if isinstance(event, Task):
            out.append(f"task:{event.status.state.name}")
        elif isinstance(event, TaskStatusUpdateEvent):
            out.append(f"status:{event.status.state.name}")
        elif isinstance(event, TaskArtifactUpdateEvent):
            out.append(f"artifact:{event.artifact.parts[0].text}")  # type: ignore[union-attr]
        else:
            out.append(type(event).__name__)
    return out


FULL = [
    "task:WORKING",
    "status:WORKING",
    "artifact:The sum ",
    "artifact:is 5.",
    "status:COMPLETED",
]


def full_stream(line_end: str = "\n") -> bytes:
    """The whole FULL stream, with heartbeat comments, in the given line ending."""
    events = [
        sse_event({"task": task_json("t1", "TASK_STATE_WORKING")}),
        b": ping\n\n",
        sse_event(status_update("TASK_STATE_WORKING")),
        sse_event(artifact_update("The sum ")),
        sse_event(artifact_update("is 5.")),
        b": ping\n\n",
        sse_event(status_update("TASK_STATE_COMPLETED")),
    ]
    return b"".join(events).replace(b"\n", line_end.encode())


# -- arbitrary chunking (one server for every Hypothesis example) ---------------------------


class Chunked:
    """Sends ``self.chunks`` as separate HTTP chunks."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.url = ""

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ["REQUEST_METHOD"] == "GET":
            body = json.dumps(card_v03(self.url + "/"))
            return Response(body, mimetype="application/json")(environ, start_response)
        return sse(list(self.chunks))(environ, start_response)


@pytest.fixture(scope="module")
def chunked() -> Iterator[Chunked]:
    app = Chunked()
    served = Served(app)
    app.url = served.url
    yield app
    served.stop()


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), line_end=st.sampled_from(["\n", "\r\n", "\r"]))
def test_any_chunking_gives_the_same_events(
    chunked: Chunked, data: st.DataObject, line_end: str
) -> None:
    whole = full_stream(line_end)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(whole) - 1), max_size=40)))
    chunked.chunks = [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]
    with A2AClient(chunked.url, version="1.0") as client, client.stream_message("add") as stream:
        assert kinds(stream) == FULL


def test_byte_by_byte(chunked: Chunked) -> None:
    whole = full_stream("\r\n")
    chunked.chunks = [whole[i : i + 1] for i in range(len(whole))]
    with A2AClient(chunked.url) as client:
        assert kinds(client.stream_message("add")) == FULL


# -- drops and resubscription ---------------------------------------------------------------


def test_dropped_stream_resumes_with_last_event_id_and_dedupes(peer: Peer) -> None:
    peer.handlers["SendStreamingMessage"] = lambda call: sse(
        [
            sse_event({"task": task_json("t1", "TASK_STATE_WORKING")}, event_id="1"),
            sse_event(status_update("TASK_STATE_WORKING"), event_id="2"),
        ]
    )  # then a clean EOF before any final state

    def resubscribe(call: Any) -> Any:
        assert call.headers.get("last-event-id") == "2"
        return sse(
            [
                sse_event(status_update("TASK_STATE_WORKING"), event_id="2"),  # replayed: dropped
                sse_event(artifact_update("The sum is 5."), event_id="3"),
                sse_event(status_update("TASK_STATE_COMPLETED"), event_id="4"),
            ]
        )

    peer.handlers["SubscribeToTask"] = resubscribe
    with A2AClient(peer.url, reconnect_delay=0) as client:
        stream = client.stream_message("add")
        assert kinds(stream) == [
            "task:WORKING",
            "status:WORKING",
            "artifact:The sum is 5.",
            "status:COMPLETED",
        ]
    assert stream.reconnects == 1
    assert peer.rpc_calls("SubscribeToTask")[0].params["id"] == "t1"


def test_abruptly_broken_connection_resumes(peer: Peer) -> None:
    peer.handlers["SendStreamingMessage"] = lambda call: sse(
        [sse_event({"task": task_json("t1", "TASK_STATE_WORKING")})], fail_after=True
    )
    peer.handlers["SubscribeToTask"] = lambda call: sse(
        [
            sse_event({"task": task_json("t1", "TASK_STATE_WORKING")}),
            sse_event(status_update("TASK_STATE_COMPLETED")),
        ]
    )
    with A2AClient(peer.url, reconnect_delay=0) as client:
        assert kinds(client.stream_message("add")) == [
            "task:WORKING",
            "task:WORKING",
            "status:COMPLETED",
        ]


def test_resubscribe_refused_falls_back_to_get_task(peer: Peer) -> None:
    peer.handlers["SendStreamingMessage"] = lambda call: sse(
        [sse_event({"task": task_json("t1", "TASK_STATE_WORKING")})]
    )
    peer.handlers["SubscribeToTask"] = lambda call: Err(-32004, "task is terminal")
    peer.handlers["GetTask"] = lambda call: task_json("t1", output="The sum is 5.")
    with A2AClient(peer.url, reconnect_delay=0) as client:
        assert kinds(client.stream_message("add")) == ["task:WORKING", "task:COMPLETED"]


def test_reconnects_without_progress_are_bounded(peer: Peer) -> None:
    snapshot = lambda call: sse([sse_event({"task": task_json("t1", "TASK_STATE_WORKING")})])  # noqa: E731
    peer.handlers["SendStreamingMessage"] = peer.handlers["SubscribeToTask"] = snapshot
    with A2AClient(peer.url, max_reconnects=2, reconnect_delay=0) as client:
        stream = client.stream_message("add")
        with pytest.raises(TransportError, match="final state"):
            list(stream)
    assert len(peer.rpc_calls("SubscribeToTask")) == 2


def test_idle_stream_times_out(peer: Peer) -> None:
    def stall(call: Any) -> Any:
        def body() -> Iterator[bytes]:
            yield sse_event({"task": task_json("t1", "TASK_STATE_WORKING")})
            peer.gate.wait(5)

        return Response(body(), mimetype="text/event-stream")

    peer.handlers["SendStreamingMessage"] = stall
    started = time.monotonic()
    with A2AClient(peer.url, stream_idle_timeout=0.3, max_reconnects=0) as client:
        stream = client.stream_message("add")
        assert kinds([next(stream)]) == ["task:WORKING"]
        with pytest.raises(ReadTimeout):
            next(stream)
    assert time.monotonic() - started < 3


def test_stream_ends_at_interrupted_state_without_resubscribing(peer: Peer) -> None:
    peer.handlers["SendStreamingMessage"] = lambda call: sse(
        [
            sse_event({"task": task_json("t1", "TASK_STATE_WORKING")}),
            sse_event(status_update("TASK_STATE_INPUT_REQUIRED")),
        ]
    )
    with A2AClient(peer.url) as client:
        assert kinds(client.stream_message("add")) == ["task:WORKING", "status:INPUT_REQUIRED"]
    assert peer.rpc_calls("SubscribeToTask") == []


def test_0_3_final_true_stops_reading_even_if_the_server_lingers(peer: Peer) -> None:
    peer.card = card_v03

    def linger(call: Any) -> Any:
        def body() -> Iterator[bytes]:
            yield sse_event(task_json("t1", "TASK_STATE_WORKING", v03=True))
            yield sse_event(status_update("TASK_STATE_WORKING", v03=True, final=True))
            peer.gate.wait(5)

        return Response(body(), mimetype="text/event-stream")

    peer.handlers["message/stream"] = linger
    started = time.monotonic()
    with A2AClient(peer.url, stream_idle_timeout=10) as client:
        assert kinds(client.stream_message("add")) == ["task:WORKING", "status:WORKING"]
    assert time.monotonic() - started < 3


# -- errors and junk ------------------------------------------------------------------------


def test_error_event_raises_its_class(peer: Peer) -> None:
    error = b'data: {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"agent crashed"}}\n\n'
    peer.handlers["SendStreamingMessage"] = lambda call: sse(
        [sse_event({"task": task_json("t1", "TASK_STATE_WORKING")}), error]
    )
    with A2AClient(peer.url) as client:
        stream = client.stream_message("add")
        next(stream)
        with pytest.raises(InternalError, match="agent crashed"):
            next(stream)


def test_undecodable_events_are_skipped(peer: Peer) -> None:
    peer.handlers["SendStreamingMessage"] = lambda call: sse(
        [
            b"data: not json\n\n",
            b'data: {"jsonrpc":"2.0","id":1,"result":{"mystery":{}}}\n\n',
            sse_event({"task": task_json("t1", "TASK_STATE_COMPLETED")}),
        ]
    )
    with A2AClient(peer.url) as client:
        assert kinds(client.stream_message("add")) == ["task:COMPLETED"]


def test_plain_json_error_instead_of_sse_raises_at_the_call(peer: Peer) -> None:
    peer.handlers["SendStreamingMessage"] = lambda call: Err(-32004, "streaming is off")
    with A2AClient(peer.url) as client, pytest.raises(UnsupportedOperationError):
        client.stream_message("add")


def test_stream_request_headers(peer: Peer) -> None:
    peer.handlers["SubscribeToTask"] = lambda call: sse(
        [sse_event({"task": task_json("t1", "TASK_STATE_COMPLETED")})]
    )
    with A2AClient(peer.url) as client:
        events = list(client.subscribe("t1"))
    assert events[0].status.state is TaskState.COMPLETED  # type: ignore[union-attr]
    headers = peer.rpc_calls("SubscribeToTask")[0].headers
    assert headers["accept"] == "text/event-stream"
    assert "last-event-id" not in headers


def test_closing_a_stream_early_releases_it(peer: Peer) -> None:
    def endless(call: Any) -> Any:
        def body() -> Iterator[bytes]:
            yield sse_event({"task": task_json("t1", "TASK_STATE_WORKING")})
            while not peer.gate.wait(0.05):
                yield b": ping\n\n"

        return Response(body(), mimetype="text/event-stream")

    peer.handlers["SendStreamingMessage"] = endless
    with A2AClient(peer.url) as client:
        with client.stream_message("add") as stream:
            assert isinstance(next(stream), Task)
        with pytest.raises(StopIteration):
            next(stream)


def test_request_body_is_json_rpc(peer: Peer) -> None:
    peer.handlers["SendStreamingMessage"] = lambda call: sse(
        [sse_event({"task": task_json("t1", "TASK_STATE_COMPLETED")})]
    )
    with A2AClient(peer.url) as client:
        list(client.stream_message("add 2 and 3"))
    body = peer.rpc_calls("SendStreamingMessage")[0].body
    assert body["jsonrpc"] == "2.0" and isinstance(body["id"], int)
    assert body["params"]["message"]["parts"] == [{"text": "add 2 and 3"}]
