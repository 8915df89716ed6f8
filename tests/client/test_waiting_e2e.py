"""wait()/send_and_wait() over the real A2AApp: the path taken and the requests it costs.

Each agent here is held by a gate the test opens; a counting WSGI wrapper records every
A2A call the client makes, so the assertions are about requests and results, not time.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.wsgi_server import Served

from a2a_client import A2AClient
from a2a_client._errors import WaitTimeout
from a2a_core.models import AgentSkill, Message, Task, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.settings import CardSettings, ProtocolSettings

pytestmark = pytest.mark.slow


class Counting:
    """A WSGI wrapper that records the JSON-RPC method (or REST path) of each request."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.calls: list[str] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ["REQUEST_METHOD"] == "POST" and environ.get("PATH_INFO", "/") == "/":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            self.calls.append(str(json.loads(body).get("method")))
        elif "agent-card" not in environ.get("PATH_INFO", ""):
            self.calls.append(f'{environ["REQUEST_METHOD"]} {environ.get("PATH_INFO")}')
        return self.app(environ, start_response)


class Gated:
    """An agent that reports WORKING, then waits for the gate and answers."""

    def __init__(self, *, streaming: bool, preview: bool = False) -> None:
        self.gate = threading.Event()
        gate = self.gate

        def handle(message: Message, ctx: AgentContext) -> Any:
            ctx.emit_status(TaskState.WORKING, "thinking")
            gate.wait(10)
            return reply("done: " + message.text)

        agent = Agent.from_function(handle, name="Gated", skills=[AgentSkill(id="g", name="G")])
        self.app = A2AApp(
            agent,
            card=CardSettings(overrides={"capabilities": {"streaming": streaming}}),
            protocol=ProtocolSettings(preview_generations=preview),
        )
        self.counting = Counting(self.app)
        self.served = Served(self.counting)
        self.url = self.served.url

    def close(self) -> None:
        self.gate.set()
        self.served.stop()
        self.app.close()


@pytest.fixture
def gated() -> Iterator[Callable[..., Gated]]:
    made: list[Gated] = []

    def make(*, streaming: bool, preview: bool = False) -> Gated:
        made.append(Gated(streaming=streaming, preview=preview))
        return made[-1]

    yield make
    for agent in made:
        agent.close()


def _text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts if hasattr(p, "text"))


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_stream_path_costs_three_requests(gated: Callable[..., Gated], binding: str) -> None:
    agent = gated(streaming=True)
    seen: list[TaskState] = []
    threading.Timer(0.3, agent.gate.set).start()
    with A2AClient(agent.url, binding=binding) as client:
        result = client.send_and_wait("hi", on_update=lambda t, _e: seen.append(t.status.state))
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    assert _text(result) == "done: hi"
    assert len(agent.counting.calls) <= 3, agent.counting.calls
    assert TaskState.WORKING in seen and seen[-1] is TaskState.COMPLETED


def test_polling_path_when_the_card_does_not_stream(gated: Callable[..., Gated]) -> None:
    agent = gated(streaming=False)
    threading.Timer(0.3, agent.gate.set).start()
    with A2AClient(agent.url) as client:
        result = client.send_and_wait("hi")
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    assert _text(result) == "done: hi"
    calls = agent.counting.calls
    assert calls[0] == "SendMessage" and "SubscribeToTask" not in calls
    assert calls.count("GetTask") >= 2  # short first intervals: several polls in 0.3 s


def test_wait_by_id_reads_the_first_snapshot_from_the_stream(gated: Callable[..., Gated]) -> None:
    agent = gated(streaming=True)
    with A2AClient(agent.url) as client:
        sent = client.send_message("hi", blocking=False)
        assert isinstance(sent, Task)
        threading.Timer(0.2, agent.gate.set).start()
        result = client.wait(sent.id)
    assert result.status.state is TaskState.COMPLETED and _text(result) == "done: hi"
    assert agent.counting.calls[1:] == ["SubscribeToTask", "GetTask"]


def test_stream_path_honours_the_budget(gated: Callable[..., Gated]) -> None:
    agent = gated(streaming=True)
    with A2AClient(agent.url) as client:
        with pytest.raises(WaitTimeout) as caught:
            client.send_and_wait("hi", timeout=0.3)
    assert caught.value.task.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
    assert "GetTask" not in agent.counting.calls  # it never fell back to polling


def test_stream_path_stops_on_cancel(gated: Callable[..., Gated]) -> None:
    agent = gated(streaming=True)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    with A2AClient(agent.url) as client:
        result = client.send_and_wait("hi", cancel=cancel, timeout=30)
    assert isinstance(result, Task) and not result.status.state.is_terminal


def test_a_stream_failure_falls_back_to_polling(gated: Callable[..., Gated]) -> None:
    agent = gated(streaming=True)
    inner = agent.counting.app

    def refuse_streams(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(body)
        if body and json.loads(body).get("method") == "SubscribeToTask":
            start_response("502 Bad Gateway", [("Content-Type", "text/plain")])
            return [b"no streams through this proxy"]
        return inner(environ, start_response)

    agent.counting.app = refuse_streams
    threading.Timer(0.3, agent.gate.set).start()
    with A2AClient(agent.url) as client:
        result = client.send_and_wait("hi")
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    assert "SubscribeToTask" in agent.counting.calls and "GetTask" in agent.counting.calls


def test_an_instant_agent_costs_one_request_when_the_send_is_settled() -> None:
    app = A2AApp(Agent.from_function(lambda m, c: reply("at once"), name="Instant"))
    counting = Counting(app)
    served = Served(counting)
    try:
        with A2AClient(served.url) as client:
            for _ in range(3):
                result = client.send_and_wait("hi")
                assert isinstance(result, (Task, Message))
    finally:
        served.stop()
        app.close()
    # Whatever path each wait took, it ended settled and never polled more than once.
    assert counting.calls.count("SendMessage") == 3
    assert counting.calls.count("GetTask") <= 3


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_long_poll_path_costs_three_requests(gated: Callable[..., Gated], binding: str) -> None:
    agent = gated(streaming=True, preview=True)  # long-poll is preferred to the stream
    seen: list[tuple[TaskState, int | None]] = []
    threading.Timer(0.3, agent.gate.set).start()
    with A2AClient(agent.url, binding=binding) as client:
        result = client.send_and_wait(
            "hi", on_update=lambda t, _e: seen.append((t.status.state, t.generation)))
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    assert _text(result) == "done: hi" and result.generation is not None
    calls = agent.counting.calls
    # The send, then one held read per generation the task moves through after the client
    # first reads it: COMPLETED, and WORKING too when the agent's thread commits it after
    # that read (a loaded machine); never a polling loop, never a stream.
    assert len(calls) <= 4 and not any("ubscribe" in call for call in calls), calls
    assert len(calls) - 1 <= len({g for _, g in seen if g is not None}) + 1, (calls, seen)
    generations = [g for _, g in seen if g is not None]
    assert generations == sorted(generations) and seen[-1][0] is TaskState.COMPLETED


def test_long_poll_path_honours_the_budget(gated: Callable[..., Gated]) -> None:
    agent = gated(streaming=False, preview=True)
    with A2AClient(agent.url) as client:
        with pytest.raises(WaitTimeout) as caught:
            client.send_and_wait("hi", timeout=0.5)
    assert not caught.value.task.status.state.is_terminal
    assert len(agent.counting.calls) <= 4  # send, the generation, one held read cut short


def test_an_instant_agent_on_a2a_wsgi_costs_the_three_requests_docs_client_md_names() -> None:
    """Our server acknowledges a non-blocking send before the agent runs, so the send is
    never settled: docs/client.md must not promise one request for an instant agent."""
    app = A2AApp(Agent.from_function(lambda m, c: reply("at once"), name="Instant"))
    counting = Counting(app)
    served = Served(counting)
    try:
        with A2AClient(served.url) as client:
            result = client.send_and_wait("hi")
            assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    finally:
        served.stop()
        app.close()
    assert counting.calls == ["SendMessage", "SubscribeToTask", "GetTask"]

    page = (Path(__file__).resolve().parents[2] / "docs" / "client.md").read_text()
    paragraph = page[page.index("`send_and_wait()` sends without blocking"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    assert "an agent that answers immediately costs one request" not in paragraph
    assert "even an agent that answers immediately costs three: `SendMessage`, " \
           "`SubscribeToTask`" in " ".join(paragraph.split())
    assert "the `GetTask` that fetches the settled task" in " ".join(paragraph.split())
