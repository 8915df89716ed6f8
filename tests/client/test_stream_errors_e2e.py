"""The client against the real A2AApp: a streaming call the server refuses raises at the call.

The server answers such a call with a plain JSON-RPC error (not a stream), so
the typed error is raised by ``subscribe``/``stream_message`` themselves, before
any event is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.a2a_http import served

from a2a_client import A2AClient
from a2a_core.errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError
from a2a_core.models import Message, Role, Task, TextPart
from a2a_wsgi import A2AApp, Agent, input_required, reply
from a2a_wsgi.settings import StreamSettings

VERSIONS = ["0.3", "1.0"]


class Asks(Agent):
    """``ask`` waits for input; anything else completes at once."""

    name = "Asks"
    description = "Completes, or asks for more"

    def handle_message(self, message: Message, context: Any) -> Any:
        return input_required("more?") if message.text == "ask" else reply("done")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(A2AApp(Asks(), streams=StreamSettings(resubscribe_timeout=0.3))) as handle:
        yield handle.url


@pytest.mark.parametrize("version", VERSIONS)
def test_subscribing_to_an_unknown_task_raises_at_the_call(url: str, version: str) -> None:
    with A2AClient(url, version=version) as client, pytest.raises(TaskNotFoundError):
        client.subscribe("tsk-nope")


@pytest.mark.parametrize("version", VERSIONS)
def test_subscribing_to_a_finished_task_raises_at_the_call(url: str, version: str) -> None:
    with A2AClient(url, version=version) as client:
        done = client.send_message("hello")
        assert isinstance(done, Task)
        with pytest.raises(UnsupportedOperationError):
            client.subscribe(done.id)


@pytest.mark.parametrize("version", VERSIONS)
def test_streaming_to_an_unknown_or_finished_task_raises_at_the_call(
        url: str, version: str) -> None:
    with A2AClient(url, version=version) as client:
        with pytest.raises(TaskNotFoundError):
            client.stream_message("more", task_id="tsk-nope")
        done = client.send_message("hello")
        assert isinstance(done, Task)
        with pytest.raises(UnsupportedOperationError):
            client.stream_message("more", task_id=done.id)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_message_the_server_refuses_raises_invalid_params(url: str, version: str) -> None:
    crowded = Message(message_id="m-crowded", role=Role.USER, parts=(TextPart(text="x"),) * 300)
    with A2AClient(url, version=version) as client, pytest.raises(InvalidParamsError):
        client.stream_message(crowded)  # more parts than the server accepts


@pytest.mark.parametrize("version", VERSIONS)
def test_an_accepted_stream_still_streams(url: str, version: str) -> None:
    with A2AClient(url, version=version) as client:
        waiting = client.send_message("ask")
        assert isinstance(waiting, Task)
        with client.stream_message("ask", task_id=waiting.id) as events:
            first = next(events)
        assert isinstance(first, Task) and first.id == waiting.id
