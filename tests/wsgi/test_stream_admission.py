"""Open streams cannot make a worker deaf: past the limit a stream is refused with 503."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from support.a2a_http import Peer, served
from support.gunicorn import ROOT, start_gunicorn

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext
from a2a_wsgi._admission import StreamPlaces, default_stream_limit, reserve_for
from a2a_wsgi.settings import LimitSettings, StreamSettings


class Hold(Agent):
    """Keeps every task WORKING until it is canceled."""

    name = "Hold"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        while not context.is_cancelled():
            time.sleep(0.02)
        return None


#: The gunicorn app of the last test (imported by its workers).
app = A2AApp(Hold(), streams=StreamSettings(heartbeat_interval=0.5))


def test_places_count_and_refuse_past_the_limit() -> None:
    places = StreamPlaces(2, retry_after=3)
    assert places.admit() and places.admit() and not places.admit()
    places.release()
    assert places.open == 1 and places.admit()
    unlimited = StreamPlaces(None)
    assert all(unlimited.admit() for _ in range(1000))


@pytest.mark.parametrize("worker_class, threads, connections, limit", [
    ("gthread", 16, 1000, 12),
    ("gthread", 4, 1000, 2),
    ("sync", 1, 1000, 1),
    ("gevent", 1, 12000, 11880),
    ("gevent", 1, 100, 84),
])
def test_the_default_limit_keeps_a_reserve_for_short_requests(
        worker_class: str, threads: int, connections: int, limit: int) -> None:
    assert default_stream_limit(worker_class, threads=threads, connections=connections) == limit
    assert reserve_for(16) == 4 and reserve_for(3) == 2


def _open(peer: Peer, task_id: str) -> tuple[requests.Response, Any]:
    """A subscribe stream left open; (response, its event iterator)."""
    context = peer.stream("subscribe", {"id": task_id})
    response, events = context.__enter__()
    return response, (context, events)


@pytest.fixture()
def limited() -> Iterator[tuple[str, str]]:
    held = A2AApp(
        Hold(),
        limits=LimitSettings(max_streams=2),
        streams=StreamSettings(heartbeat_interval=0.5),
    )
    with served(held) as handle:
        task = Peer(handle.url).send("hold", blocking=False)
        yield handle.url, task["id"]
        Peer(handle.url).rpc("cancel", {"id": task["id"]})


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_a_stream_past_the_limit_is_refused_at_once_and_short_calls_still_answer(
        limited: tuple[str, str], version: str) -> None:
    url, task_id = limited
    opened = [_open(Peer(url, version), task_id) for _ in range(2)]
    assert all(r.status_code == 200 for r, _ in opened)
    peer = Peer(url, version)
    body = {"jsonrpc": "2.0", "id": 1, "method": peer.method("subscribe"),
            "params": {"id": task_id}}
    started = time.monotonic()
    busy = requests.post(url + "/", json=body, headers={"A2A-Version": version}, timeout=5)
    assert time.monotonic() - started < 2
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "5"
    error = busy.json()["error"]
    assert error["code"] == -32603 and "busy" in error["message"]
    assert "result" in peer.rpc("get", {"id": task_id})  # the worker is not deaf
    for _, (context, _events) in opened:
        context.__exit__(None, None, None)  # hang up
    deadline = time.monotonic() + 2  # a hung-up stream gives its place back within 2 s
    while True:
        response, (context, events) = _open(Peer(url, version), task_id)
        if response.status_code == 200:
            assert next(events).data["result"]
            context.__exit__(None, None, None)
            break
        assert time.monotonic() < deadline, "the hung-up streams kept their places"
        time.sleep(0.1)


def test_the_rest_binding_refuses_the_same_way(limited: tuple[str, str]) -> None:
    url, task_id = limited
    opened = [_open(Peer(url), task_id) for _ in range(2)]
    refused = requests.get(f"{url}/rest/tasks/{task_id}:subscribe", timeout=5,
                           headers={"A2A-Version": "1.0"})
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
    assert refused.json()["error"]["status"] == "INTERNAL"
    for _, (context, _events) in opened:
        context.__exit__(None, None, None)


@pytest.mark.slow
def test_forty_streams_on_a_sixteen_thread_gunicorn_leave_it_answering(tmp_path: Path) -> None:
    """The measured failure: 40 subscribers to one WORKING task made GetTask time out."""
    with start_gunicorn("test_stream_admission:app", log_path=tmp_path / "gunicorn.log",
                        threads=16, pythonpath=[Path(__file__).parent, ROOT / "tests"]) as gunicorn:
        gunicorn.wait_ready()
        task = Peer(gunicorn.url).send("hold", blocking=False)
        statuses: list[int] = []
        streams: list[requests.Response] = []
        lock = threading.Lock()

        def subscribe() -> None:
            body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                    "params": {"id": task["id"]}}
            response = requests.post(gunicorn.url, json=body, stream=True, timeout=10,
                                     headers={"A2A-Version": "1.0"})
            with lock:
                statuses.append(response.status_code)
                streams.append(response)

        threads = [threading.Thread(target=subscribe) for _ in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(15)
        assert sorted(set(statuses)) == [200, 503] and statuses.count(200) == 12, statuses
        for _ in range(20):
            started = time.monotonic()
            assert "result" in Peer(gunicorn.url).rpc("get", {"id": task["id"]})
            assert time.monotonic() - started < 1
        for response in streams:
            response.close()
        Peer(gunicorn.url).rpc("cancel", {"id": task["id"]})
