"""Real gunicorn, 4 worker processes, one SQLite file: the store is the source of truth.

Every request opens a new connection, so calls land on different workers
(each response names its worker in ``X-Worker-Pid``). The same module is the
gunicorn app: in the workers ``A2A_TEST_DB`` is set and ``app`` is built.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply

ROOT = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 1.5


class MultiprocessAgent(Agent):
    """``chunks:N`` streams N artifact chunks; ``hang`` runs until canceled;
    ``sleep:S`` replies after S seconds; anything else is echoed."""

    name = "Multiprocess Test Agent"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        kind, _, arg = (message.text or "").partition(":")
        if kind == "chunks":
            count = int(arg)
            for n in range(count):
                if context.is_cancelled():
                    return None
                context.emit_artifact(f"chunk {n}", artifact_id=f"art-{context.task_id}",
                                      append=n > 0, last_chunk=n == count - 1)
                time.sleep(0.05)
            return None
        if kind == "hang":
            deadline = time.monotonic() + 60
            while not context.is_cancelled() and time.monotonic() < deadline:
                time.sleep(0.02)
            return None
        if kind == "sleep":
            time.sleep(float(arg))
            return reply("slept")
        return reply(message.text or "")


def _build() -> Any:
    inner = A2AApp(MultiprocessAgent(), base_url="http://127.0.0.1/",
                   store=f"sqlite:///{os.environ['A2A_TEST_DB']}", heartbeat_interval=0.5,
                   runtime_options={"lease_seconds": LEASE_SECONDS, "poll_interval": 0.05})

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        def tagged(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            return start_response(status, [*headers, ("X-Worker-Pid", str(os.getpid()))], *exc)

        return inner(environ, tagged)

    return app


app = _build() if os.environ.get("A2A_TEST_DB") else None


# -- the tests (pytest side) ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import requests

    db = tmp_path_factory.mktemp("gunicorn") / "tasks.sqlite3"
    port = _free_port()
    env = {**os.environ, "A2A_TEST_DB": str(db),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "multiprocess"), str(ROOT)])}
    argv = [sys.executable, "-m", "gunicorn", "-k", "gthread", "--workers", "4",
            "--threads", "8", "--graceful-timeout", "1", "-b", f"127.0.0.1:{port}",
            "test_gunicorn_sqlite:app"]
    log = (db.parent / "gunicorn.log").open("wb")  # a file: a full pipe would stall gunicorn
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError((db.parent / "gunicorn.log").read_text())
            try:
                requests.get(url + ".well-known/agent-card.json", timeout=5)
                break
            except requests.RequestException:
                time.sleep(0.1)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()


def _peer(url: str) -> Any:
    """A fresh connection per call, so the kernel spreads calls over the workers."""
    from support.a2a_http import Peer

    class FreshPeer(Peer):
        def post(self, body: Any, *, headers: dict[str, str] | None = None) -> dict[str, Any]:
            self.session.close()
            return super().post(body, headers=headers)

    return FreshPeer(url, "1.0")


def _send(url: str, text: str) -> tuple[dict[str, Any], str]:
    peer = _peer(url)
    task = peer.send(text, blocking=False)
    return task, peer.last.headers["X-Worker-Pid"]


def _get(url: str, task_id: str) -> tuple[dict[str, Any], str]:
    peer = _peer(url)
    result = peer.rpc("get", {"id": task_id})["result"]
    return result, peer.last.headers["X-Worker-Pid"]


def _wait_state(url: str, task_id: str, states: set[str], timeout: float = 15) -> dict[str, Any]:
    from support.a2a_http import state_of

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task, _ = _get(url, task_id)
        if state_of(task) in states:
            return task
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {states}: {task['status']}")


def _spread(call: Any, times: int = 16) -> list[Any]:
    """``call()`` many times at once: concurrent connections reach several workers."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(times) as pool:
        return list(pool.map(lambda _: call(), range(times)))


pytestmark = pytest.mark.slow


def test_any_worker_gets_lists_and_follows_a_task_another_worker_runs(server: str) -> None:
    from support.a2a_http import state_of

    task, runner = _send(server, "chunks:30")
    answers = _spread(lambda: _get(server, task["id"]), 24)
    assert all(got["id"] == task["id"] for got, _ in answers)
    assert {pid for _, pid in answers} - {runner}, "every call landed on the running worker"
    listed = _peer(server).rpc("list", {})["result"]["tasks"]
    assert task["id"] in [t["id"] for t in listed]
    with _peer(server).stream("subscribe", {"id": task["id"]}) as (response, events):
        seen = [event.data["result"] for event in events]
    assert state_of(seen[-1]["statusUpdate"]) == "completed"
    assert state_of(_wait_state(server, task["id"], {"completed"})) == "completed"


def test_a_dropped_stream_resumed_on_any_worker_gets_every_event_once(server: str) -> None:
    from support.a2a_http import user_message

    peer = _peer(server)
    first: list[Any] = []
    with peer.stream("stream", {"message": user_message("chunks:12", "1.0")}) as (_, events):
        for event in events:
            first.append(event)
            if len(first) == 4:
                break  # hang up mid-stream
    task_id = first[0].data["result"]["task"]["id"]
    streamer = peer.last.headers["X-Worker-Pid"] if peer.last is not None else None

    def resume() -> tuple[str, list[Any]]:
        with _peer(server).stream("subscribe", {"id": task_id},
                                  headers={"Last-Event-ID": first[-1].id}) as (response, events):
            return response.headers["X-Worker-Pid"], list(events)

    resumed = _spread(resume, 8)
    assert {pid for pid, _ in resumed} - {streamer}, "no resume landed on another worker"
    rest = resumed[0][1]
    assert all([e.id for e in r] == [e.id for e in rest] for _, r in resumed)
    ids = [int(e.id) for e in first + rest]
    assert ids == list(range(ids[0], ids[0] + len(ids))), ids  # consecutive: none lost, none twice
    chunks = [e.data["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"]
              for e in first + rest if "artifactUpdate" in e.data["result"]]
    assert chunks == [f"chunk {n}" for n in range(12)]
    final = rest[-1].data["result"]["statusUpdate"]["status"]["state"]
    assert final == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("delay", [0.15, 0.3, 0.45])
def test_two_cancels_racing_a_completion_leave_one_consistent_state(server: str,
                                                                    delay: float) -> None:
    from support.a2a_http import state_of

    task, _ = _send(server, "sleep:0.3")
    answers: list[dict[str, Any]] = []

    def cancel() -> None:
        time.sleep(delay)
        answers.append(_peer(server).rpc("cancel", {"id": task["id"]}))

    threads = [threading.Thread(target=cancel) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    final = _wait_state(server, task["id"], {"completed", "canceled"})
    state = state_of(final)
    time.sleep(0.5)
    assert state_of(_get(server, task["id"])[0]) == state  # nothing overwrote it later
    for answer in answers:
        if state == "canceled":
            assert state_of(answer["result"]) == "canceled", answer
        else:
            assert answer["error"]["code"] == -32002, answer
    with _peer(server).stream("subscribe", {"id": task["id"]},
                              headers={"Last-Event-ID": "0"}) as (_, events):
        log = [e.data["result"] for e in events]
    terminal = [state_of(e["statusUpdate"]) for e in log if "statusUpdate" in e
                and state_of(e["statusUpdate"]) in {"completed", "canceled", "failed"}]
    assert terminal == [state]


def test_kill_9_of_the_running_worker_fails_the_task_and_a_subscriber_hears_it(
        server: str) -> None:
    from support.a2a_http import state_of, texts

    task, victim = _send(server, "hang")
    _wait_state(server, task["id"], {"working"})
    opened, killed = threading.Barrier(9, timeout=20), threading.Event()
    heard: list[tuple[dict[str, Any], float]] = []

    def subscribe() -> None:
        with _peer(server).stream("subscribe", {"id": task["id"]}) as (response, events):
            assert state_of(next(events).data["result"]["task"]) == "working"
            opened.wait()
            if response.headers["X-Worker-Pid"] == victim:
                return  # this one dies with its worker
            assert killed.wait(20)
            final = next(events).data["result"]["statusUpdate"]
            heard.append((final, time.monotonic()))

    threads = [threading.Thread(target=subscribe) for _ in range(8)]
    for thread in threads:
        thread.start()
    opened.wait()
    killed_at = time.monotonic()
    os.kill(int(victim), signal.SIGKILL)
    killed.set()
    for thread in threads:
        thread.join(timeout=30)
    assert heard, "no subscriber was on a surviving worker"
    for final, at in heard:
        assert state_of(final) == "failed"
        assert "lease expired" in texts(final["status"]["message"]["parts"])[0]
        assert at - killed_at < LEASE_SECONDS + 3
    assert state_of(_get(server, task["id"])[0]) == "failed"
