"""Streams that prove completeness with task generations (the dev-1.1 preview).

A scripted peer sends a stream with a repeated and a skipped generation; the real app
(preview on) sends one without. The client asks for the preview with ``extensions=``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from client_peers import Peer, sse, sse_event, status_json, task_json

from a2a_client import A2AClient
from a2a_core._generations import GENERATIONS_EXTENSION_URI as URI
from a2a_core.models import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, serve
from a2a_wsgi.settings import ProtocolSettings


def _status(state: str, generation: int) -> dict[str, Any]:
    return {"statusUpdate": {"taskId": "t1", "contextId": "ctx-1",
                             "status": status_json(state), "generation": str(generation)}}


def _artifact(text: str, generation: int) -> dict[str, Any]:
    return {"artifactUpdate": {"taskId": "t1", "contextId": "ctx-1", "generation": generation,
                               "artifact": {"artifactId": "a", "parts": [{"text": text}]}}}


def test_a_repeat_is_dropped_and_a_gap_is_filled_by_one_get_task(peer: Peer) -> None:
    first = {"task": {**task_json("t1", "TASK_STATE_SUBMITTED"), "generation": "1"}}
    events = [first, _status("TASK_STATE_WORKING", 2), _status("TASK_STATE_WORKING", 2),
              _artifact("a", 3), _artifact("lost", 4), _status("TASK_STATE_COMPLETED", 6)]
    del events[4]  # generation 4 never arrives, 5 was never sent: a gap of two
    peer.handlers["SendStreamingMessage"] = lambda call: sse(sse_event(e) for e in events)
    fetched = {**task_json("t1", "TASK_STATE_COMPLETED", output="all"), "generation": "6"}
    peer.handlers["GetTask"] = lambda call: fetched
    with A2AClient(peer.url, extensions=[URI]) as client:
        stream = client.stream_message("hi")
        seen = list(stream)
    shapes = [(type(e).__name__, getattr(e, "generation", None)) for e in seen]
    assert shapes == [("Task", 1), ("TaskStatusUpdateEvent", 2),
                      ("TaskArtifactUpdateEvent", 3), ("Task", 6)]
    assert stream.gaps == 1 and len(peer.rpc_calls("GetTask")) == 1
    last = seen[-1]
    assert isinstance(last, Task) and last.status.state is TaskState.COMPLETED


def test_without_generations_nothing_is_checked(peer: Peer) -> None:
    events = [{"task": task_json("t1", "TASK_STATE_SUBMITTED")},
              {"statusUpdate": {"taskId": "t1", "contextId": "ctx-1",
                                "status": status_json("TASK_STATE_COMPLETED")}}]
    peer.handlers["SendStreamingMessage"] = lambda call: sse(sse_event(e) for e in events)
    with A2AClient(peer.url) as client:
        stream = client.stream_message("hi")
        assert len(list(stream)) == 2 and stream.gaps == 0
    assert not peer.rpc_calls("GetTask")


@pytest.fixture(scope="module")
def preview_url() -> Iterator[str]:
    def handle(message: Message, ctx: AgentContext) -> Any:
        for n in range(20):
            ctx.emit_artifact(f"c{n}", artifact_id="a", append=n > 0)
        return reply("done")

    app = A2AApp(
        Agent.from_function(handle, name="Chunks"),
        protocol=ProtocolSettings(preview_generations=True),
    )
    handle_ = serve(app)
    yield handle_.url
    handle_.stop()
    app.close()


@pytest.mark.slow
def test_the_real_app_streams_every_generation_in_order(preview_url: str) -> None:
    with A2AClient(preview_url, extensions=[URI]) as client:
        stream = client.stream_message("go")
        seen = list(stream)
    updates = [e.generation for e in seen
               if isinstance(e, (TaskStatusUpdateEvent, TaskArtifactUpdateEvent))]
    assert len(updates) >= 21 and stream.gaps == 0
    assert updates == list(range(updates[0], updates[0] + len(updates)))
    with A2AClient(preview_url) as plain:  # not asked for: no generations at all
        assert all(getattr(e, "generation", None) is None for e in plain.stream_message("go"))
