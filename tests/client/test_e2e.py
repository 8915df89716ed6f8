"""The client against the real A2AApp over real HTTP, every operation, both versions."""

from __future__ import annotations

import io
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from a2a_client import A2AClient, agent, agent_tools
from a2a_core.errors import TaskNotCancelableError, TaskNotFoundError
from a2a_core.models import (
    AgentCard,
    AgentSkill,
    Message,
    PushNotificationConfig,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, serve
from a2a_wsgi.settings import CardSettings

VERSIONS = ["0.3", "1.0"]


class Gate:
    """Holds slow tasks until released."""

    def __init__(self) -> None:
        self.event = threading.Event()


@pytest.fixture(scope="module")
def slow() -> Iterator[tuple[str, Gate]]:
    gate = Gate()

    def handle(message: Message, ctx: AgentContext) -> Any:
        ctx.emit_status(TaskState.WORKING, "thinking")
        gate.event.wait(10)
        return None if ctx.is_cancelled() else reply("done: " + message.text)

    slow_agent = Agent.from_function(handle, name="Slow", skills=[AgentSkill(id="s", name="Slow")])
    app = A2AApp(
        slow_agent,
        card=CardSettings(
            overrides={"capabilities": {"push_notifications": True, "streaming": True}},
            extended_card=lambda ctx: AgentCard(name="Slow (extended)"),
        ),
    )
    handle_ = serve(app)
    yield handle_.url, gate
    gate.event.set()
    handle_.stop()
    app.close()


def artifact_text(task: Task) -> str:
    return "\n".join(p.text for a in task.artifacts for p in a.parts if isinstance(p, TextPart))


@pytest.mark.parametrize("version", VERSIONS)
def test_card_and_304(calc_url: str, version: str) -> None:
    statuses: list[int] = []
    session = requests.Session()
    session.hooks["response"].append(lambda r, *args, **kwargs: statuses.append(r.status_code))
    with A2AClient(calc_url, version=version, session=session) as client:
        card = client.get_card()
        assert card.name == "Calc Agent" and card.skills[0].id == "calc"
        assert client.get_card(refresh=True) == card
        assert client.version == version
    assert statuses == [200, 304]
    session.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_send_blocking_get_and_echo(calc_url: str, version: str) -> None:
    with A2AClient(calc_url, version=version) as client:
        task = client.send_message("add 2 and 3")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert artifact_text(task) == "The sum is 5."
        assert client.server_version == version
        fetched = client.get_task(task.id, history_length=0)
        assert fetched.id == task.id and fetched.history == ()
        with pytest.raises(TaskNotFoundError):
            client.get_task("tsk-does-not-exist")


@pytest.mark.parametrize("version", VERSIONS)
def test_send_and_wait_then_input_required_continuation(calc_url: str, version: str) -> None:
    with A2AClient(calc_url, version=version) as client:
        done = client.send_and_wait("add 2 and 3", poll_every=0.02, timeout=10)
        assert isinstance(done, Task) and artifact_text(done) == "The sum is 5."
        asked = client.send_and_wait("add some numbers", poll_every=0.02, timeout=10)
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        assert asked.status.message is not None and "numbers" in asked.status.message.text
        answered = client.send_message("2 and 3", task_id=asked.id, context_id=asked.context_id)
        assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED


@pytest.mark.parametrize("version", VERSIONS)
def test_stream(calc_url: str, version: str) -> None:
    with A2AClient(calc_url, version=version) as client:
        events = list(client.stream_message("add 2 and 3"))
    assert isinstance(events[0], Task)
    assert any(
        isinstance(e, TaskArtifactUpdateEvent)
        and e.artifact.parts[0] == TextPart(text="The sum is 5.")
        for e in events
    )
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED


@pytest.mark.parametrize("version", VERSIONS)
def test_list_tasks_across_pages(calc_url: str, version: str) -> None:
    context = f"ctx-{uuid.uuid4()}"
    with A2AClient(calc_url, version=version) as client:
        ids = {client.send_message(f"add {n} and 1", context_id=context).id for n in range(3)}  # type: ignore[union-attr]
        listed = list(client.list_tasks(context_id=context, page_size=1))
    assert {t.id for t in listed} == ids and len(listed) == 3


@pytest.mark.parametrize("version", VERSIONS)
def test_cancel_subscribe_push_and_extended_card(slow: tuple[str, Gate], version: str) -> None:
    url, gate = slow
    gate.event.clear()
    with A2AClient(url, version=version) as client:
        first = client.send_message("one", blocking=False)
        assert isinstance(first, Task)
        assert client.cancel_task(first.id).status.state is TaskState.CANCELED

        second = client.send_message("two", blocking=False)
        assert isinstance(second, Task)
        config = client.create_task_push_notification_config(
            second.id, PushNotificationConfig(url="https://hooks.example.invalid/a2a", token="tok")
        )
        config_id = config.push_notification_config.id
        assert config_id and config.task_id == second.id
        assert client.get_task_push_notification_config(second.id, config_id) == config
        assert client.list_task_push_notification_configs(second.id) == [config]
        client.delete_task_push_notification_config(second.id, config_id)
        assert client.list_task_push_notification_configs(second.id) == []

        with client.subscribe(second.id) as stream:
            snapshot = next(stream)
            assert isinstance(snapshot, Task) and snapshot.id == second.id
            gate.event.set()
            rest = list(stream)
        final = rest[-1]
        assert (
            isinstance(final, TaskStatusUpdateEvent) and final.status.state is TaskState.COMPLETED
        )
        with pytest.raises(TaskNotCancelableError):
            client.cancel_task(second.id)

        assert client.get_extended_card().name == "Slow (extended)"
        assert client.card.name == "Slow (extended)"  # replaces the public card for the session


def test_seed_example_served_agent_as_tools(calc_url: str) -> None:
    tools = agent_tools(agent(calc_url + "/.well-known/agent-card.json", poll_every=20))
    assert [t.name for t in tools] == ["Calc_Agent_calc"]
    result = tools[0].execute({"task": "add 2 and 3"})
    assert (result.output, result.is_error) == ("The sum is 5.", False)
    assert result.metadata is not None and result.metadata["state"] == "completed"
    assert result.metadata["agent"] == "Calc Agent" and result.metadata["taskId"]


class CutFirstStream:
    """Real A2AApp behind a fault: the first SendStreamingMessage loses its connection
    after ``keep`` events (the app's iterator is closed, as a dropped client would)."""

    def __init__(self, app: Any, keep: int) -> None:
        self.app = app
        self.keep = keep
        self.cut = False

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(body)
        if self.cut or b"SendStreamingMessage" not in body:
            return self.app(environ, start_response)
        self.cut = True
        return self._truncated(self.app(environ, start_response))

    def _truncated(self, chunks: Any) -> Iterator[bytes]:
        sent = 0
        try:
            for chunk in chunks:
                if b"data:" in chunk:
                    if sent == self.keep:
                        raise ConnectionAbortedError("cut")  # the connection breaks here
                    sent += 1
                yield chunk
        finally:
            getattr(chunks, "close", lambda: None)()


def test_dropped_stream_against_the_real_server_loses_no_event() -> None:
    def streaming(message: Message, ctx: AgentContext) -> Any:
        # The agent works on its own thread (not driven by the SSE reader), so the
        # task goes on while the client is away: a2a_wsgi stops a stream(...) agent
        # whose reader disconnects, which would leave nothing to resume.
        ctx.emit_status(TaskState.WORKING)
        artifact_id = None
        for word in ("one", "two", "three", "four"):
            time.sleep(0.05)
            artifact_id = ctx.emit_artifact(
                word, artifact_id=artifact_id, append=artifact_id is not None
            )
        return None

    app = A2AApp(Agent.from_function(streaming, name="Words"))
    plain = serve(app)
    cut_app = CutFirstStream(app, keep=2)
    faulty = serve(cut_app)
    app.base_url = faulty.url + "/"
    try:
        with A2AClient(faulty.url, version="1.0", reconnect_delay=0) as client:
            resumed = client.stream_message("go")
            events = list(resumed)
        with A2AClient(plain.url, version="1.0") as client:
            reference = list(client.stream_message("go"))
    finally:
        faulty.stop()
        plain.stop()
        app.close()
    assert cut_app.cut and resumed.reconnects == 1 and resumed.last_event_id is not None

    def shape(evs: list[Any]) -> list[str]:
        return [
            type(e).__name__
            + (f":{e.artifact.parts[0].text}" if isinstance(e, TaskArtifactUpdateEvent) else "")  # type: ignore[union-attr]
            for e in evs
        ]

    assert shape(events) == shape(reference)
    assert [w for w in shape(events) if ":" in w] == [
        "TaskArtifactUpdateEvent:one",
        "TaskArtifactUpdateEvent:two",
        "TaskArtifactUpdateEvent:three",
        "TaskArtifactUpdateEvent:four",
    ]
