"""examples/celery_agent.py served for real: ``a2a serve … --workers 2`` queues, a Celery
worker (prefork, RabbitMQ) runs the agent; every operation over both bindings, 0.3 and 1.0."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
from celery_support import Stack, need_broker, until
from werkzeug.serving import make_server

from a2a_client import A2AClient
from a2a_core.models import (
    PushNotificationConfig,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_wsgi.stores import SQLiteTaskStore

pytestmark = pytest.mark.celery

#: (protocol version, binding) pairs the client speaks: 0.3 is JSON-RPC only.
DIALECTS = [("0.3", "JSONRPC"), ("1.0", "JSONRPC"), ("1.0", "HTTP+JSON")]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    need_broker()
    running = Stack(tmp_path_factory.mktemp("work-tier"), extra_env={"A2A_PUSH_LOOPBACK": "1"})
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(params=DIALECTS, ids=[f"{v}-{b}" for v, b in DIALECTS])
def client(request: pytest.FixtureRequest, stack: Stack) -> Iterator[A2AClient]:
    version, binding = request.param
    with A2AClient(stack.url, version=version, binding=binding, timeout=60) as made:
        yield made


def _text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts if isinstance(p, TextPart))


def test_blocking_send_answers_the_completed_task_and_lists_it(client: A2AClient) -> None:
    task = client.send_message("hello from the web tier")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert _text(task) == "hello from the web tier"
    if client.version == "1.0":
        listed = {t.id: t.status.state for t in client.list_tasks(context_id=task.context_id)}
        assert listed == {task.id: TaskState.COMPLETED}


def test_stream_carries_each_chunk_then_completed(client: A2AClient) -> None:
    events = list(client.stream_message("stream 3"))
    first = events[0]
    assert isinstance(first, Task) and first.status.state is TaskState.SUBMITTED
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert [p.text for c in chunks for p in c.artifact.parts
            if isinstance(p, TextPart)] == ["chunk 0", "chunk 1", "chunk 2"]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED
    assert client.get_task(first.id).status.state is TaskState.COMPLETED


def test_non_blocking_send_then_resubscribe_until_completed(client: A2AClient) -> None:
    task = client.send_message("slow 1500", blocking=False)
    assert isinstance(task, Task) and task.status.state is TaskState.SUBMITTED
    events = list(client.subscribe(task.id))
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED
    assert _text(client.get_task(task.id)) == "slow 1500"


@pytest.mark.parametrize("version, binding", DIALECTS, ids=[f"{v}-{b}" for v, b in DIALECTS])
def test_resubscribe_with_last_event_id_replays_what_came_after(stack: Stack, version: str,
                                                               binding: str) -> None:
    with A2AClient(stack.url, version=version, binding=binding, timeout=60) as client:
        task = client.send_message("stream 2")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    resume = {"Last-Event-ID": "1"}
    if binding == "HTTP+JSON":
        answer = requests.get(f"{stack.url}rest/tasks/{task.id}:subscribe", timeout=30,
                              stream=True, headers={"A2A-Version": "1.0", **resume})
    else:
        method = "SubscribeToTask" if version == "1.0" else "tasks/resubscribe"
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": task.id}}
        answer = requests.post(stack.url, json=body, timeout=30, stream=True,
                               headers={"A2A-Version": version, **resume})
    assert answer.status_code == 200
    lines = list(answer.iter_lines(decode_unicode=True))
    ids = [line.split(":", 1)[1].strip() for line in lines if line.startswith("id:")]
    assert ids and ids[0] == "2" and ids == sorted(ids, key=int), lines  # WORKING (#1) skipped
    assert "chunk 1" in "".join(lines)


def test_cancel_reaches_the_running_agent_through_the_store(client: A2AClient,
                                                            stack: Stack) -> None:
    task = client.send_message("hold", blocking=False)
    assert isinstance(task, Task)
    assert until(lambda: client.get_task(task.id).status.state is TaskState.WORKING, 20)
    store = SQLiteTaskStore(str(stack.db))
    try:
        lease = store.get_lease(task.id)
        assert lease is not None and not lease.worker_id.startswith("queued:")  # a worker's
        canceled = client.cancel_task(task.id)
        assert canceled.status.state is TaskState.CANCELED
        # The worker's keeper sees the stored CANCELED within its poll interval (0.5 s)
        # and sets the agent's `cancelled`; the agent returns and its run ends, giving the
        # lease back: all within the 1 s.
        assert until(lambda: store.get_lease(task.id) is None, 1.0, step=0.02), stack.logs()
    finally:
        store.close()
    assert client.get_task(task.id).status.state is TaskState.CANCELED


def test_input_required_then_the_answer_completes_the_task(client: A2AClient) -> None:
    task = client.send_message("ask")
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    done = client.send_message("the answer", task_id=task.id, context_id=task.context_id)
    assert isinstance(done, Task) and done.id == task.id
    assert done.status.state is TaskState.COMPLETED
    assert _text(done) == "the answer"


class _Webhook:
    """A loopback webhook receiver in a thread: the bodies it was POSTed."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.traceparents: list[str] = []
        self._lock = threading.Lock()
        self.server = make_server("127.0.0.1", 0, self._app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        with self._lock:
            self.bodies.append(json.loads(environ["wsgi.input"].read(length)))
            self.traceparents.append(environ.get("HTTP_TRACEPARENT", ""))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    def states(self) -> list[str]:
        with self._lock:
            text = json.dumps(self.bodies)
        return [s for s in ("completed", "COMPLETED") if s in text]


#: The caller's trace: the run on the worker joins it, so its webhook POSTs name it.
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.mark.parametrize("version, binding", DIALECTS, ids=[f"{v}-{b}" for v, b in DIALECTS])
def test_push_delivery_of_a_run_on_the_worker(stack: Stack, version: str,
                                              binding: str) -> None:
    hook = _Webhook()
    trace = {"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"}
    try:
        with A2AClient(stack.url, version=version, binding=binding, timeout=60,
                       headers=trace) as client:
            task = client.send_message(
                "slow 300", blocking=False,
                push_notification_config=PushNotificationConfig(url=hook.url, token="tok"))
            assert isinstance(task, Task)
            assert until(lambda: bool(hook.states()), 20), stack.logs()
            assert client.get_task(task.id).status.state is TaskState.COMPLETED
            assert hook.traceparents and all(TRACE_ID in t for t in hook.traceparents)
    finally:
        hook.server.shutdown()


def test_a_retried_send_answers_the_same_task_and_runs_once(stack: Stack) -> None:
    """Idempotent sends: the same request (same messageId) sent again, while its run is
    queued or running and after it ended, answers the one task it made."""
    message = {"messageId": f"retried-{id(stack)}-{time.monotonic_ns()}", "role": "ROLE_USER",
               "parts": [{"text": "slow 800"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": message, "configuration": {"blocking": False}}}
    first = requests.post(stack.url, json=body, headers={"A2A-Version": "1.0"}, timeout=30)
    again = requests.post(stack.url, json=body, headers={"A2A-Version": "1.0"}, timeout=30)
    task_id = first.json()["result"]["task"]["id"]
    assert again.json()["result"]["task"]["id"] == task_id
    with A2AClient(stack.url, version="1.0", binding="JSONRPC", timeout=30) as client:
        assert until(lambda: client.get_task(task_id).status.state is TaskState.COMPLETED, 20)
        last = requests.post(stack.url, json=body, headers={"A2A-Version": "1.0"}, timeout=30)
        assert last.json()["result"]["task"]["id"] == task_id
        assert len(client.get_task(task_id).artifacts) == 1
