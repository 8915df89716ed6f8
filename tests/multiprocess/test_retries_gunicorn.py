"""Retried sends under real gunicorn (``-k gthread``, 16 threads): no retry holds a thread
for ever.

A retried blocking send waits only while a run of its task is active (here, or
on another worker holding a live lease), and every wait ends: when the task
settles, the run ends, the client hangs up, or ``retry_wait_timeout`` passes.
The module is the gunicorn app: in the workers ``RETRY_STORE`` names the store
(and ``RETRY_WAIT`` the wait limit); every answer names its worker in
``X-Worker-Pid``.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sqlite3
import struct
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import requests
from multiprocess_support import APP_PATH
from support.a2a_http import state_of, unwrap, user_message
from support.gunicorn import ServerProcess, start_gunicorn

from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._agent import working
from a2a_wsgi.settings import RuntimeSettings, StreamSettings


class RetryAgent(Agent):
    """``working`` leaves the task WORKING and returns; ``hang`` marks it WORKING and runs
    until canceled; anything else is echoed."""

    name = "Retry Test Agent"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        if message.text == "working":
            return working("still at it")
        if message.text == "hang":
            context.emit_status(TaskState.WORKING, "started")
            deadline = time.monotonic() + 60
            while not context.is_cancelled() and time.monotonic() < deadline:
                time.sleep(0.02)
            return None
        return reply(message.text)


def _build() -> Any:
    options: dict[str, Any] = {"lease_seconds": 1.5, "poll_interval": 0.05}
    if os.environ.get("RETRY_WAIT"):
        options["retry_wait_timeout"] = float(os.environ["RETRY_WAIT"])
    inner = A2AApp(
        RetryAgent(),
        base_url="http://127.0.0.1/",
        store=os.environ["RETRY_STORE"],
        streams=StreamSettings(heartbeat_interval=0.5),
        runtime=RuntimeSettings(**(options or {})),
    )

    def tagged_app(environ: dict[str, Any], start_response: Any) -> Any:
        def tagged(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            return start_response(status, [*headers, ("X-Worker-Pid", str(os.getpid()))], *exc)

        return inner(environ, tagged)

    return tagged_app


app = _build() if os.environ.get("RETRY_STORE") else None

pytestmark = pytest.mark.slow


# -- the tests (pytest side) ---------------------------------------------------------------


def _start(tmp_path: Path, store: str, *, workers: int = 1, threads: int = 16,
           wait: float | None = None) -> ServerProcess:
    env = {"RETRY_STORE": store, **({"RETRY_WAIT": str(wait)} if wait is not None else {})}
    server = start_gunicorn("test_retries_gunicorn:app", log_path=tmp_path / "gunicorn.log",
                            env=env, workers=workers, threads=threads, pythonpath=APP_PATH)
    try:
        server.wait_ready()
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "tasks.sqlite3"


@pytest.fixture(params=["memory", "sqlite"])
def server16(request: pytest.FixtureRequest, tmp_path: Path, db: Path) -> Iterator[str]:
    """One worker with gunicorn's 16 threads, on the memory store or a SQLite file."""
    store = "memory" if request.param == "memory" else f"sqlite:///{db}"
    with _start(tmp_path, store) as server:
        yield server.url


def _params(text: str, message_id: str) -> dict[str, Any]:
    return {"message": user_message(text, "1.0", message_id=message_id)}


def _call(url: str, method: str, params: Any, *,
          timeout: float = 10) -> tuple[dict[str, Any], float, str]:
    """One 1.0 call on a fresh connection; (its result, seconds taken, answering worker)."""
    started = time.monotonic()
    response = requests.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method,
                                        "params": params},
                             headers={"A2A-Version": "1.0", "Connection": "close"},
                             timeout=timeout)
    elapsed = time.monotonic() - started
    body = response.json()
    assert "result" in body, body
    return body["result"], elapsed, response.headers["X-Worker-Pid"]


def _send(url: str, params: dict[str, Any], *,
          timeout: float = 10) -> tuple[dict[str, Any], float, str]:
    found, elapsed, pid = _call(url, "SendMessage", params, timeout=timeout)
    return unwrap(found, "1.0"), elapsed, pid


def _only_task(url: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        tasks = _call(url, "ListTasks", {})[0]["tasks"]
        if tasks:
            assert len(tasks) == 1, tasks
            return dict(tasks[0])
        assert time.monotonic() < deadline, "the first send made no task"
        time.sleep(0.05)


def _raw_send(url: str, params: dict[str, Any]) -> socket.socket:
    """A SendMessage on a raw socket, its answer left unread."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                       "params": params}).encode()
    sock = socket.create_connection((host, int(port)))
    sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"A2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    return sock


def _hang_up(sock: socket.socket) -> None:
    """Close with a TCP RST, as a crashed or timed-out client does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def _card_and_task(url: str, task_id: str) -> float:
    """A card GET and a GetTask; the slower one's seconds (each must answer)."""
    started = time.monotonic()
    card = requests.get(url + ".well-known/agent-card.json", timeout=5,
                        headers={"Connection": "close"})
    assert card.status_code == 200
    task, _, _ = _call(url, "GetTask", {"id": task_id}, timeout=5)
    assert task["id"] == task_id
    return time.monotonic() - started


def test_32_concurrent_retries_of_a_send_left_working_answer_at_once(server16: str) -> None:
    params = _params("working", "left-working")
    first, _, _ = _send(server16, params)
    assert state_of(first) == "working"
    with ThreadPoolExecutor(32) as pool:
        answers = list(pool.map(lambda _: _send(server16, params, timeout=5), range(32)))
    assert [task["id"] for task, _, _ in answers] == [first["id"]] * 32
    assert {state_of(task) for task, _, _ in answers} == {"working"}
    assert max(elapsed for _, elapsed, _ in answers) < 1.0
    # Every thread is free again: a burst of card and GetTask calls all answer.
    with ThreadPoolExecutor(16) as pool:
        spent = list(pool.map(lambda _: _card_and_task(server16, first["id"]), range(16)))
    assert max(spent) < 3.0


def test_retries_whose_clients_hang_up_give_their_threads_back(tmp_path: Path, db: Path) -> None:
    """The first send holds one of the 16 threads, 15 retries wait on it and then hang up:
    a burst right after finds every one of those threads free."""
    with _start(tmp_path, f"sqlite:///{db}") as server:
        url = server.url
        params = _params("hang", "hung-up")
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(_send, url, params, timeout=30)
            task = _only_task(url)
            socks = [_raw_send(url, params) for _ in range(15)]
            readable, _, _ = select.select(socks, [], [], 1.0)
            assert readable == [], "a retry answered while its task still ran"
            for sock in socks:
                _hang_up(sock)
            time.sleep(0.6)  # at most one client poll (0.5 s) per waiting retry
            with ThreadPoolExecutor(15) as burst:
                spent = list(burst.map(lambda _: _card_and_task(url, task["id"]), range(15)))
            assert max(spent) < 2.0
            _call(url, "CancelTask", {"id": task["id"]})
            original, _, _ = first.result(timeout=15)
        assert state_of(original) == "canceled"


def _running_worker(db: Path, task_id: str) -> str:
    """The pid of the worker holding the task's lease (worker ids are host:pid:suffix)."""
    deadline = time.monotonic() + 10
    while True:
        with closing(sqlite3.connect(db)) as conn, conn:
            row = conn.execute("SELECT worker_id FROM a2a_leases WHERE task_id = ?",
                               (task_id,)).fetchone()
        if row is not None:
            return str(row[0]).split(":")[1]
        assert time.monotonic() < deadline, "the running worker holds no lease"
        time.sleep(0.05)


def test_a_retry_on_another_worker_waits_while_the_run_holds_its_lease(
        tmp_path: Path, db: Path) -> None:
    with _start(tmp_path, f"sqlite:///{db}", workers=2, threads=4, wait=1.0) as server:
        url = server.url
        params = _params("hang", "leased")
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(_send, url, params, timeout=30)
            task = _only_task(url)
            runner = _running_worker(db, task["id"])
            elsewhere: list[tuple[dict[str, Any], float, str]] = []
            for _ in range(10):  # the kernel picks the worker: try until the other one answers
                with ThreadPoolExecutor(3) as retries:
                    answers = list(retries.map(lambda _: _send(url, params), range(3)))
                for got, elapsed, _ in answers:  # on either worker: the run is active
                    assert got["id"] == task["id"] and state_of(got) == "working"
                    assert 0.9 < elapsed < 4.0
                elsewhere += [a for a in answers if a[2] != runner]
                if elsewhere:
                    break
            assert elsewhere, "every retry landed on the running worker"
            _call(url, "CancelTask", {"id": task["id"]})
            original, _, pid = first.result(timeout=15)
        assert pid == runner and state_of(original) == "canceled"
        # A repeat after the cancel is a new send (tests/wsgi/test_retries.py checks that).


def test_a_burst_against_a_held_task_does_not_starve_the_server(tmp_path: Path, db: Path) -> None:
    """Retries against a run that never settles end at the wait limit and free their threads."""
    with _start(tmp_path, f"sqlite:///{db}", wait=0.5) as server:
        url = server.url
        params = _params("hang", "limited")
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(_send, url, params, timeout=30)
            task = _only_task(url)
            with ThreadPoolExecutor(30) as retries:
                answers = list(retries.map(lambda _: _send(url, params, timeout=10), range(30)))
            assert {state_of(got) for got, _, _ in answers} == {"working"}
            assert max(elapsed for _, elapsed, _ in answers) < 3.0  # two rounds of 15 threads
            assert _card_and_task(url, task["id"]) < 1.0
            _call(url, "CancelTask", {"id": task["id"]})
            assert state_of(first.result(timeout=15)[0]) == "canceled"
