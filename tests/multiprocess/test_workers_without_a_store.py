"""Plain ``gunicorn -w 4`` with no store named: the workers share tasks, or refuse to boot.

The module is the gunicorn app. ``A2A_TEST_STORE`` unset: no store is named,
so the app chooses the shared SQLite file (``$A2A_DB`` puts it in a temporary
folder here, not in the checkout); ``A2A_TEST_STORE=memory``: an in-memory
store named for four workers, which must not boot.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from multiprocess_support import APP_PATH, MultiprocessAgent, fresh_peer, get, send, wait_state
from support.a2a_http import state_of
from support.gunicorn import WORKER_CLASSES, start_gunicorn

from a2a_wsgi import A2AApp
from a2a_wsgi.settings import StreamSettings

_inner = A2AApp(
    MultiprocessAgent(),
    store=os.environ.get("A2A_TEST_STORE"),
    streams=StreamSettings(heartbeat_interval=0.5),
)


def app(environ: dict[str, Any], start_response: Any) -> Any:
    """The app, each answer naming the worker that gave it."""
    def tagged(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
        return start_response(status, [*headers, ("X-Worker-Pid", str(os.getpid()))], *exc)

    return _inner(environ, tagged)


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=WORKER_CLASSES)
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = tmp_path_factory.mktemp("no-store")
    with start_gunicorn("test_workers_without_a_store:app", log_path=folder / "gunicorn.log",
                        env={"A2A_DB": str(folder / "tasks.sqlite3")}, workers=4,
                        pythonpath=APP_PATH, worker_class=request.param) as gunicorn:
        gunicorn.wait_ready()
        yield gunicorn


def _from_every_worker(call: Any, runner: str, rounds: int = 40, parallel: int = 16) -> list[Any]:
    """``call()`` from many connections at once until a worker other than ``runner`` answered."""
    answers: list[Any] = []
    for _ in range(rounds):
        with ThreadPoolExecutor(parallel) as pool:
            answers += list(pool.map(lambda _: call(), range(16)))
        if {pid for _, pid in answers} - {runner}:
            return answers
    raise AssertionError(f"every call landed on worker {runner}")


def test_every_worker_gets_lists_subscribes_and_cancels_one_task(server: Any) -> None:
    task, runner = send(server.url, "hang")
    answers = _from_every_worker(lambda: get(server.url, task["id"]), runner)
    assert all(got["id"] == task["id"] for got, _ in answers)  # no -32001 from any worker

    def listed() -> tuple[list[str], str]:
        peer = fresh_peer(server.url)
        result = peer.rpc("list", {})["result"]
        return [t["id"] for t in result["tasks"]], peer.last.headers["X-Worker-Pid"]

    assert all(task["id"] in ids for ids, _ in _from_every_worker(listed, runner))

    def first_event() -> tuple[dict[str, Any], str]:
        for _ in range(100):
            peer = fresh_peer(server.url)
            with peer.stream("subscribe", {"id": task["id"]}) as (response, events):
                if response.status_code == 503:  # every stream place taken: come back
                    assert response.headers["Retry-After"]
                    time.sleep(0.2)
                    continue
                return next(events).data["result"], response.headers["X-Worker-Pid"]
        raise AssertionError("no stream place came free")

    # A worker of 8 threads keeps 2 for short requests; a hung-up stream frees its place
    # within a second, so a client that comes back on 503 is served.
    subscribed = _from_every_worker(first_event, runner, rounds=20, parallel=4)
    assert all(result["task"]["id"] == task["id"] for result, _ in subscribed)

    canceled = fresh_peer(server.url).rpc("cancel", {"id": task["id"]})
    assert state_of(canceled["result"]) == "canceled", canceled
    assert state_of(wait_state(server.url, task["id"], {"canceled"})) == "canceled"
    assert "sharing the SQLite file" in server.log()


def test_an_in_memory_store_for_four_workers_refuses_to_boot(tmp_path: Path) -> None:
    with start_gunicorn("test_workers_without_a_store:app", log_path=tmp_path / "gunicorn.log",
                        env={"A2A_TEST_STORE": "memory"}, workers=4,
                        pythonpath=APP_PATH) as gunicorn:
        deadline = time.monotonic() + 60
        while gunicorn.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert gunicorn.proc.poll() is not None, "gunicorn kept running on an in-memory store"
        log = gunicorn.log()
    assert "several worker processes" in log and "A2A_STORE=sqlite://" in log
    with pytest.raises(requests.ConnectionError):
        requests.get(gunicorn.url, timeout=2)
