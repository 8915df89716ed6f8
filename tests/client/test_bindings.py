"""Choosing the binding: JSON-RPC or HTTP+JSON, from the card's order or the caller's.

Then the same client operations over both bindings against the real A2AApp (every
operation, typed errors, a resumed stream), and the ``a2a --binding`` option.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a_client import A2AClient
from a2a_client._bindings import as_bindings, choose_endpoint
from a2a_client._cards import Endpoint
from a2a_core.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.models import (
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    PushNotificationConfig,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_wsgi import A2AApp, Agent, AgentContext, input_required, message, reply, serve
from a2a_wsgi.settings import CardSettings, ProtocolSettings

CARD_URL = "http://card.example/.well-known/agent-card.json"
A2A = Path(sys.executable).with_name("a2a")


def _card(*interfaces: tuple[str, str, str]) -> AgentCard:
    return AgentCard(name="a", supported_interfaces=[
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for url, binding, version in interfaces])


RPC10 = ("http://h/rpc", "JSONRPC", "1.0")
RPC03 = ("http://h/rpc", "JSONRPC", "0.3")
REST10 = ("http://h/rest", "HTTP+JSON", "1.0")
REST03 = ("http://h/v1", "HTTP+JSON", "0.3")
GRPC = ("http://h/grpc", "GRPC", "1.0")


@pytest.mark.parametrize(("interfaces", "version", "binding", "expected"), [
    # auto: the card's order, within the preferred version
    ((RPC10, RPC03, REST10), "auto", "auto", ("http://h/rpc", "1.0", "JSONRPC")),
    ((REST10, RPC10, RPC03), "auto", "auto", ("http://h/rest", "1.0", "HTTP+JSON")),
    ((GRPC, REST10, RPC10), "auto", "auto", ("http://h/rest", "1.0", "HTTP+JSON")),
    # auto never picks gRPC, even as the only 1.0 interface: 0.3 JSON-RPC then
    ((GRPC, RPC03), "auto", "auto", ("http://h/rpc", "0.3", "JSONRPC")),
    # 1.0 wins over the card's order: a 0.3 interface listed first does not
    ((RPC03, REST10), "auto", "auto", ("http://h/rest", "1.0", "HTTP+JSON")),
    # 0.3 REST is not spoken; the 0.3 JSON-RPC interface is
    ((REST03, RPC03), "auto", "auto", ("http://h/rpc", "0.3", "JSONRPC")),
    ((REST10, RPC03), "0.3", "auto", ("http://h/rpc", "0.3", "JSONRPC")),
    # one binding pinned
    ((RPC10, REST10), "auto", "HTTP+JSON", ("http://h/rest", "1.0", "HTTP+JSON")),
    ((REST10, RPC10), "auto", "jsonrpc", ("http://h/rpc", "1.0", "JSONRPC")),
    ((REST10, RPC10), "1.0", "http+json", ("http://h/rest", "1.0", "HTTP+JSON")),
    ((RPC10, GRPC), "auto", "grpc", ("http://h/grpc", "1.0", "GRPC")),
    # the caller's order
    ((RPC10, REST10), "auto", ("HTTP+JSON", "JSONRPC"), ("http://h/rest", "1.0", "HTTP+JSON")),
    ((RPC10,), "auto", ("HTTP+JSON", "JSONRPC"), ("http://h/rpc", "1.0", "JSONRPC")),
    ((REST10, RPC10), "auto", ("JSONRPC", "HTTP+JSON"), ("http://h/rpc", "1.0", "JSONRPC")),
    ((RPC03, REST10), "auto", ("JSONRPC", "HTTP+JSON"), ("http://h/rest", "1.0", "HTTP+JSON")),
    ((RPC10, GRPC), "auto", ("GRPC", "JSONRPC"), ("http://h/grpc", "1.0", "GRPC")),
    ((RPC03, GRPC), "auto", ("GRPC", "JSONRPC"), ("http://h/grpc", "1.0", "GRPC")),
    ((RPC10,), "auto", ("GRPC", "JSONRPC"), ("http://h/rpc", "1.0", "JSONRPC")),
    # relative URLs resolve against the card's
    ((("/rest", "HTTP+JSON", "1.0"),), "auto", "auto",
     ("http://card.example/rest", "1.0", "HTTP+JSON")),
    # nothing spoken: the JSON-RPC rules (the card URL's origin, 0.3)
    ((), "auto", "auto", ("http://card.example", "0.3", "JSONRPC")),
])
def test_choose_endpoint(interfaces: Any, version: str, binding: Any,
                         expected: tuple[str, str, str]) -> None:
    chosen = choose_endpoint(_card(*interfaces), CARD_URL, version,
                             as_bindings(binding, version))
    assert (chosen.url, chosen.version, chosen.binding) == expected


def test_http_json_pinned_on_a_card_without_it_says_so() -> None:
    with pytest.raises(ValueError, match="no HTTP\\+JSON interface"):
        choose_endpoint(_card(RPC10, REST03), CARD_URL, "auto", ("HTTP+JSON",))
    with pytest.raises(ValueError, match="no GRPC interface"):
        choose_endpoint(_card(RPC10, REST10), CARD_URL, "auto", ("GRPC",))


@pytest.mark.parametrize(("binding", "version"), [
    ("SOAP", "auto"), ((), "auto"), ("HTTP+JSON", "0.3"), ("GRPC", "0.3")])
def test_bad_binding_options_are_refused_at_construction(binding: Any, version: str) -> None:
    with pytest.raises(ValueError):
        A2AClient("http://127.0.0.1:9", binding=binding, version=version)


def test_a_pinned_rest_endpoint_needs_no_card() -> None:
    client = A2AClient("http://127.0.0.1:9", endpoint="http://127.0.0.1:9/api",
                       binding="HTTP+JSON")
    assert client.endpoint == Endpoint(url="http://127.0.0.1:9/api", version="1.0",
                                       binding="HTTP+JSON")


def test_a_pinned_grpc_endpoint_needs_no_card() -> None:
    client = A2AClient("http://127.0.0.1:9", endpoint="127.0.0.1:10", binding="grpc")
    assert client.endpoint == Endpoint(url="127.0.0.1:10", version="1.0", binding="GRPC")


# -- both bindings against the real server ------------------------------------------------


def _agent(msg: Message, ctx: AgentContext) -> Any:
    text = msg.text
    if text == "hold":
        ctx.emit_status(TaskState.WORKING, "holding")
        deadline = time.monotonic() + 10
        while not ctx.is_cancelled() and time.monotonic() < deadline:
            time.sleep(0.01)
        return None
    if text == "ask":
        return input_required("Which one?")
    if text == "direct":
        return message("a direct answer")
    return reply(f"echo: {text}")


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    app = A2AApp(
        Agent.from_function(_agent, name="Both", skills=[AgentSkill(id="b", name="b")]),
        card=CardSettings(
            overrides={"capabilities": {"push_notifications": True}},
            extended_card=lambda ctx: AgentCard(name="Both (extended)"),
        ),
    )
    handle = serve(app)
    yield handle.url
    handle.stop()
    app.close()


BINDINGS = ["JSONRPC", "HTTP+JSON"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_every_operation_over_either_binding(agent_url: str, binding: str) -> None:
    with A2AClient(agent_url, binding=binding) as client:
        assert client.binding == binding and client.version == "1.0"
        done = client.send_message("hello")
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        assert client.server_version == "1.0"
        assert isinstance(client.send_message("direct"), Message)
        got = client.get_task(done.id, history_length=1)
        assert got.id == done.id and len(got.history) == 1
        asked = client.send_and_wait("ask")
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        listed = list(client.list_tasks(context_id=asked.context_id, include_artifacts=True))
        assert [t.id for t in listed] == [asked.id]
        completed = list(client.list_tasks(status=TaskState.COMPLETED, page_size=1))
        assert done.id in {t.id for t in completed}

        held = client.send_message("hold", blocking=False)
        assert isinstance(held, Task)
        config = client.create_task_push_notification_config(
            held.id, PushNotificationConfig(url="https://hooks.example/a2a", id="cfg-1"))
        assert client.get_task_push_notification_config(held.id, "cfg-1") == config
        assert client.list_task_push_notification_configs(held.id) == [config]
        client.delete_task_push_notification_config(held.id, "cfg-1")
        assert client.list_task_push_notification_configs(held.id) == []
        with client.subscribe(held.id) as stream:
            first = next(stream)
            assert isinstance(first, Task) and first.id == held.id
            assert client.cancel_task(held.id).status.state is TaskState.CANCELED
            last = list(stream)[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.CANCELED

        events = list(client.stream_message("streamed"))
        assert isinstance(events[0], Task)
        assert isinstance(events[-1], TaskStatusUpdateEvent)
        assert events[-1].status.state is TaskState.COMPLETED

        assert client.get_extended_card().name == "Both (extended)"


@pytest.mark.parametrize("binding", BINDINGS)
def test_typed_errors_over_either_binding(agent_url: str, binding: str) -> None:
    with A2AClient(agent_url, binding=binding) as client:
        with pytest.raises(TaskNotFoundError):
            client.get_task("tsk-missing")
        done = client.send_message("x")
        assert isinstance(done, Task)
        with pytest.raises(TaskNotCancelableError):
            client.cancel_task(done.id)
        with pytest.raises(TaskNotFoundError):
            client.stream_message("more", task_id="tsk-missing")
        with pytest.raises(UnsupportedOperationError, match="terminal"):
            client.subscribe(done.id)


def test_auto_follows_the_card_order() -> None:
    agent = Agent.from_function(_agent, name="Rest first", skills=[AgentSkill(id="b", name="b")])
    app = A2AApp(agent, protocol=ProtocolSettings(bindings=("HTTP+JSON", "JSONRPC")))
    handle = serve(app)
    try:
        with A2AClient(handle.url) as client:
            assert client.binding == "HTTP+JSON"
            assert client.endpoint.url == handle.url + "/rest"
            assert isinstance(client.send_message("hi"), Task)
        with A2AClient(handle.url, binding=("JSONRPC", "HTTP+JSON")) as client:
            assert client.binding == "JSONRPC"
        with A2AClient(handle.url, version="0.3") as client:
            assert client.binding == "JSONRPC" and client.version == "0.3"
    finally:
        handle.stop()
        app.close()


def test_extended_card_off_is_unsupported_over_rest() -> None:
    app = A2AApp(Agent.from_function(_agent, name="Plain", skills=[AgentSkill(id="b", name="b")]))
    handle = serve(app)
    try:
        with A2AClient(handle.url, binding="HTTP+JSON") as client:
            with pytest.raises(UnsupportedOperationError):
                client.get_extended_card()
    finally:
        handle.stop()
        app.close()


# -- a REST stream that drops resumes with Last-Event-ID -----------------------------------


class CutFirstRestStream:
    """The real A2AApp behind a fault: the first ``message:stream`` loses its connection
    after ``keep`` events; every ``:subscribe`` request's Last-Event-ID is recorded."""

    def __init__(self, app: Callable[..., Any], keep: int) -> None:
        self.app = app
        self.keep = keep
        self.cut = False
        self.resumed_with: list[tuple[str, str | None]] = []
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ["PATH_INFO"]
        if path.endswith(":subscribe"):
            with self._lock:
                self.resumed_with.append((environ["REQUEST_METHOD"],
                                          environ.get("HTTP_LAST_EVENT_ID")))
        if self.cut or not path.endswith("message:stream"):
            return self.app(environ, start_response)
        self.cut = True
        return self._truncated(self.app(environ, start_response))

    def _truncated(self, chunks: Any) -> Iterator[bytes]:
        sent = 0
        try:
            for chunk in chunks:
                if b"data:" in chunk:
                    if sent == self.keep:
                        raise ConnectionAbortedError("cut")
                    sent += 1
                yield chunk
        finally:
            getattr(chunks, "close", lambda: None)()


def test_a_dropped_rest_stream_resumes_with_last_event_id() -> None:
    def words(msg: Message, ctx: AgentContext) -> Any:
        ctx.emit_status(TaskState.WORKING)
        artifact_id = None
        for word in ("one", "two", "three", "four"):
            time.sleep(0.05)
            artifact_id = ctx.emit_artifact(word, artifact_id=artifact_id,
                                            append=artifact_id is not None)
        return None

    app = A2AApp(Agent.from_function(words, name="Words", skills=[AgentSkill(id="w", name="w")]))
    cut = CutFirstRestStream(app, keep=2)
    faulty = serve(cut)
    app.base_url = faulty.url + "/"
    try:
        with A2AClient(faulty.url, binding="HTTP+JSON", reconnect_delay=0) as client:
            stream = client.stream_message("go")
            events = list(stream)
    finally:
        faulty.stop()
        app.close()
    assert cut.cut and stream.reconnects == 1
    ((method, sent_id),) = cut.resumed_with
    assert method == "POST" and sent_id is not None and sent_id.isdigit()
    assert stream.last_event_id is not None and int(stream.last_event_id) > int(sent_id)
    words_seen = [p.text for e in events if isinstance(e, TaskArtifactUpdateEvent)  # type: ignore[union-attr]
                  for p in e.artifact.parts]
    assert words_seen == ["one", "two", "three", "four"]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED


# -- the command line ---------------------------------------------------------------------


def _a2a(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(A2A), *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "http+json", "auto"])
def test_cli_binding_option(agent_url: str, binding: str) -> None:
    sent = _a2a("send", agent_url, "from the shell", "--binding", binding, "--json")
    assert sent.returncode == 0, sent.stderr
    task = json.loads(sent.stdout)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    got = _a2a("get", agent_url, task["id"], "--binding", binding, "--json")
    assert json.loads(got.stdout)["id"] == task["id"]
    streamed = _a2a("send", agent_url, "streamed", "--stream", "--binding", binding, "--json")
    lines = [json.loads(line) for line in io.StringIO(streamed.stdout)]
    assert "task" in lines[0] and lines[-1]["statusUpdate"]["status"]["state"] == \
        "TASK_STATE_COMPLETED"


def test_cli_unknown_binding_is_a_usage_error(agent_url: str) -> None:
    result = _a2a("card", agent_url, "--binding", "soap")
    assert result.returncode == 2 and "binding" in result.stderr
