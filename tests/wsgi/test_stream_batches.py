"""Events already at hand when a stream wakes leave in one write, with the same bytes.

A stream reads its task's log in batches: when the agent committed several events
before the stream woke, they go out as one HTTP chunk (one socket write, one pass
through the iterator layers) instead of one each. Nothing waits for a batch to fill:
an event alone is written at once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.a2a_http import served, user_message

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, stream

WAIT = 10.0


class Gated(Agent):
    """Streams five chunks, then waits for the test before ending the task."""

    name = "Gated"

    def __init__(self) -> None:
        self.emitted = threading.Event()
        self.gate = threading.Event()

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        return stream(self._chunks())

    def _chunks(self) -> Iterator[str]:
        for index in range(5):
            yield f"chunk {index}"
        # four are committed: each chunk is held until the next shows it is not the last
        self.emitted.set()
        self.gate.wait(WAIT)


def _events(chunk: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: "):]) for line in chunk.decode().split("\n")
            if line.startswith("data: ")]


# Slow: it needs the stream to stay asleep while the agent commits five updates in a row,
# which a loaded machine does not promise (the stream may wake between two of them); it
# runs once, in the full suite, not in the parallel not-slow runs of every Python.
@pytest.mark.slow
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
def test_events_committed_before_the_stream_wakes_leave_in_one_chunk(binding: str) -> None:
    agent = Gated()
    with served(A2AApp(agent)) as handle:
        message = user_message("go", "1.0")
        if binding == "jsonrpc":
            url, body = handle.url, {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                                     "params": {"message": message}}
        else:
            url, body = handle.url.rstrip("/") + "/rest/message:stream", {"message": message}
        with requests.post(url, json=body, headers={"A2A-Version": "1.0"}, stream=True,
                           timeout=WAIT) as response:
            assert response.status_code == 200
            chunks = response.raw.read_chunked()
            first = _events(next(chunks))
            assert len(first) == 1  # the task, alone: nothing else was at hand
            assert agent.emitted.wait(WAIT)
            batch = _events(next(chunks))
            agent.gate.set()
            rest = [event for chunk in chunks for event in _events(chunk)]

    def result(event: dict[str, Any]) -> dict[str, Any]:
        return event["result"] if binding == "jsonrpc" else event

    # the WORKING update and four chunks were committed before the stream woke
    assert [next(iter(result(e))) for e in batch] == ["statusUpdate"] + ["artifactUpdate"] * 4
    texts = [result(e)["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in batch[1:]]
    assert texts == [f"chunk {index}" for index in range(4)]
    assert result(rest[-1])["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(first) + len(batch) + len(rest) == 8
