"""F2: SIGTERM to gunicorn while SSE streams are open.

What docs/deployment.md promises: a task whose worker stops is not left WORKING
forever; its lease expires and another worker (here: a fresh process on the same
SQLite file) fails it, or re-runs it. What gunicorn promises: the master exits
within ``graceful_timeout``. What we promise: open streams end cleanly at once
(the app chains a SIGTERM handler in each worker), not cut at the timeout.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
import requests
from fault_support import LEASE_SECONDS, FaultAgent, rpc, start_server
from support.gunicorn import WORKER_CLASSES

from a2a_core._service import CallContext
from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._runtime import LOST_WORKER_REASON, Runtime
from a2a_wsgi._serve import serve, stop_streams_on_sigterm
from a2a_wsgi.settings import RuntimeSettings, StreamSettings
from a2a_wsgi.stores import SQLiteTaskStore

pytestmark = pytest.mark.slow

GRACEFUL = 2  # seconds; gunicorn takes an int
STREAMS = 8


class StreamWatch:
    """One subscriber, on its own thread: what it heard and how its stream ended."""

    def __init__(self, url: str, task_id: str) -> None:
        self.url, self.task_id = url, task_id
        self.opened = threading.Event()
        self.events: list[dict[str, Any]] = []
        self.ending: str | None = None  # "clean" (terminating chunk) or the error's name
        self.ended_at: float | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                "params": {"id": self.task_id}}
        try:
            with requests.post(self.url, json=body, stream=True, timeout=(5, 15),
                               headers={"A2A-Version": "1.0",
                                        "Accept": "text/event-stream"}) as response:
                for line in response.iter_lines(chunk_size=1, decode_unicode=True):
                    if line.startswith("data:"):
                        self.events.append(json.loads(line[5:]))
                        self.opened.set()
            self.ending = "clean"
        except requests.RequestException as exc:
            self.ending = type(exc).__name__
        finally:
            self.ended_at = time.monotonic()
            self.opened.set()


@pytest.fixture(scope="module", params=WORKER_CLASSES)
def stopped_server(request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A SQLite-backed gunicorn with a WORKING task and open streams, then SIGTERM.

    Module-scoped: one stop serves every test, and a broken set-up errors the
    passing tests too, so the xfail below cannot hide it.
    """
    tmp_path = tmp_path_factory.mktemp("sigterm")
    db = tmp_path / "tasks.sqlite3"
    server = start_server(f"sqlite:///{db}", tmp_path / "gunicorn.log", workers=2,
                          graceful_timeout=GRACEFUL, worker_class=request.param)
    try:
        server.wait_ready()
        answer, _ = rpc(server.url, "SendMessage", {
            "message": {"messageId": "m-hang", "role": "ROLE_USER", "parts": [{"text": "hang"}]},
            "configuration": {"returnImmediately": True}})
        task_id = answer["result"]["task"]["id"]
        watches = [StreamWatch(server.url, task_id) for _ in range(STREAMS)]
        assert all(w.opened.wait(10) for w in watches)
        assert all(w.events for w in watches), "a stream never sent its first event"
        signalled = time.monotonic()
        os.kill(server.proc.pid, signal.SIGTERM)  # the master, as systemd/k8s would
        try:
            server.proc.wait(timeout=GRACEFUL + 8)
        except Exception:
            pass
        exited = time.monotonic() if server.proc.poll() is not None else None
        for watch in watches:
            watch.thread.join(timeout=10)
        yield {"db": db, "task_id": task_id, "watches": watches, "signalled": signalled,
               "exited": exited, "log": server.log()}
    finally:
        server.stop()


def test_the_server_exits_within_the_graceful_timeout_and_every_stream_ends(
        stopped_server: dict[str, Any]) -> None:
    assert stopped_server["exited"] is not None, stopped_server["log"]
    took = stopped_server["exited"] - stopped_server["signalled"]
    assert took <= GRACEFUL + 1.5, f"exit took {took:.1f}s"
    for watch in stopped_server["watches"]:
        assert not watch.thread.is_alive(), "a stream outlived its server"
        assert watch.ended_at is not None
        assert watch.ended_at - stopped_server["signalled"] <= GRACEFUL + 1.5


def test_the_interrupted_task_is_recovered_through_its_lease(
        stopped_server: dict[str, Any]) -> None:
    runtime = Runtime(FaultAgent(),
                      RuntimeSettings(lease_seconds=LEASE_SECONDS, poll_interval=0.05),
                      store=SQLiteTaskStore(stopped_server["db"]))
    try:
        call = CallContext(version="1.0")
        task_id = stopped_server["task_id"]
        assert runtime.get_task(task_id, call).status.state is TaskState.WORKING
        runtime.start_keeper()
        deadline = time.monotonic() + LEASE_SECONDS + 5
        while (task := runtime.get_task(task_id, call)).status.state is TaskState.WORKING:
            assert time.monotonic() < deadline, "the stopped server's task stayed WORKING"
            time.sleep(0.05)
        assert task.status.state is TaskState.FAILED
        assert task.status.message is not None
        assert LOST_WORKER_REASON in task.status.message.parts[0].text  # type: ignore[union-attr]
        assert task.status.timestamp is not None
        assert task.status.timestamp <= datetime.now(timezone.utc)
    finally:
        runtime.close(wait=True)


def test_streams_end_with_a_final_event_or_a_clean_close(
        stopped_server: dict[str, Any]) -> None:
    endings = [w.ending for w in stopped_server["watches"]]
    assert endings == ["clean"] * STREAMS, endings
    for watch in stopped_server["watches"]:  # ended by the stop, not by the timeout
        assert watch.ended_at is not None
        assert watch.ended_at - stopped_server["signalled"] < GRACEFUL


def _hanging_task(url: str) -> str:
    answer, _ = rpc(url, "SendMessage", {
        "message": {"messageId": "m-hang", "role": "ROLE_USER", "parts": [{"text": "hang"}]},
        "configuration": {"returnImmediately": True}})
    return str(answer["result"]["task"]["id"])


def _streaming_send(url: str) -> StreamWatch:
    """A SendStreamingMessage of a hanging task, watched like a subscription."""
    watch = StreamWatch.__new__(StreamWatch)
    watch.url, watch.task_id = url, ""
    watch.opened, watch.events = threading.Event(), []
    watch.ending, watch.ended_at = None, None
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": "m-hang-s", "role": "ROLE_USER", "parts": [{"text": "hang"}]}}}

    def run() -> None:
        try:
            with requests.post(url, json=body, stream=True, timeout=(5, 15),
                               headers={"A2A-Version": "1.0",
                                        "Accept": "text/event-stream"}) as response:
                for line in response.iter_lines(chunk_size=1, decode_unicode=True):
                    if line.startswith("data:"):
                        watch.events.append(json.loads(line[5:]))
                        watch.opened.set()
            watch.ending = "clean"
        except requests.RequestException as exc:
            watch.ending = type(exc).__name__
        finally:
            watch.ended_at = time.monotonic()
            watch.opened.set()

    watch.thread = threading.Thread(target=run, daemon=True)
    watch.thread.start()
    return watch


class StartThenWait(Agent):
    """Emits one artifact (a stream's first event), then works until released."""

    name = "Start Then Wait"

    def __init__(self) -> None:
        self.release = threading.Event()

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        context.emit_artifact("started")
        self.release.wait(30)
        return reply("released")


@pytest.fixture()
def quiet_app() -> Iterator[tuple[Any, str]]:
    """An in-process app whose streams, once started, would only carry heartbeats (every 30 s)."""
    agent = StartThenWait()
    app = A2AApp(
        agent,
        base_url="http://127.0.0.1/",
        store="memory",
        streams=StreamSettings(heartbeat_interval=30.0),
    )
    handle = serve(app)
    try:
        yield app, handle.url + "/"
    finally:
        agent.release.set()
        app.close()
        handle.stop()


def _stop_ends_streams(url: str, stop: Any) -> list[StreamWatch]:
    watches = [StreamWatch(url, _hanging_task(url)), _streaming_send(url)]
    assert all(w.opened.wait(10) for w in watches)
    assert all(w.events for w in watches)
    stopped = time.monotonic()
    stop()
    for watch in watches:
        watch.thread.join(timeout=10)
        assert watch.ending == "clean", watch.ending
        assert watch.ended_at is not None and watch.ended_at - stopped < 5, "heartbeat is 30 s"
    return watches


def test_closing_the_app_ends_its_streams_cleanly(quiet_app: tuple[Any, str]) -> None:
    app, url = quiet_app
    _stop_ends_streams(url, app.close)
    assert app.runtime.stopping


def test_the_chained_sigterm_handler_ends_streams_then_runs_the_previous_one(
        quiet_app: tuple[Any, str]) -> None:
    app, url = quiet_app
    heard: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: heard.append(signum))
    try:
        assert stop_streams_on_sigterm()
        assert stop_streams_on_sigterm()  # idempotent: chained once
        _stop_ends_streams(url, lambda: os.kill(os.getpid(), signal.SIGTERM))
        assert heard == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_creating_an_app_leaves_sigterm_alone() -> None:
    """Only the gunicorn hook chains onto SIGTERM; an app never looks at the handler."""
    before = signal.getsignal(signal.SIGTERM)
    A2AApp(FaultAgent()).start().close()
    assert signal.getsignal(signal.SIGTERM) is before
