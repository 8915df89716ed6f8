"""Real gunicorn, 4 worker processes, one SQLite file: the store is the source of truth.

Each response names its worker in ``X-Worker-Pid``. Where a test needs a given worker
to answer, it calls through a keep-alive connection that worker accepted
(``peers_by_worker``); elsewhere every request opens a new connection. The same module
is the gunicorn app: in the workers ``A2A_TEST_DB`` is set and ``app`` is built.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from multiprocess_support import (
    APP_PATH,
    LEASE_SECONDS,
    PINNED_KEEPALIVE,
    MultiprocessAgent,
    fresh_peer,
    get,
    peers_by_worker,
    send,
    tagged_app,
    wait_state,
    worker_of,
)
from support.a2a_http import Peer, state_of, texts, user_message
from support.gunicorn import WORKER_CLASSES, start_gunicorn

app = (tagged_app(MultiprocessAgent(), f"sqlite:///{os.environ['A2A_TEST_DB']}", {})
       if os.environ.get("A2A_TEST_DB") else None)


# -- the tests (pytest side) ---------------------------------------------------------------


@pytest.fixture(scope="module", params=WORKER_CLASSES)
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("gunicorn") / "tasks.sqlite3"
    with start_gunicorn("test_gunicorn_sqlite:app", log_path=db.parent / "gunicorn.log",
                        env={"A2A_TEST_DB": str(db)}, workers=WORKERS,
                        pythonpath=APP_PATH, worker_class=request.param,
                        keepalive=PINNED_KEEPALIVE) as gunicorn:
        gunicorn.wait_ready()
        yield gunicorn.url


WORKERS = 4


def _answered_by(peer: Peer, pid: str) -> None:
    """``peer``'s last call was answered on its pinned connection, by worker ``pid``."""
    assert worker_of(peer) == pid, f"the connection to worker {pid} was not kept alive"


pytestmark = pytest.mark.slow


def test_any_worker_gets_lists_and_follows_a_task_another_worker_runs(server: str) -> None:
    peers = peers_by_worker(server, WORKERS)
    task, runner = send(server, "chunks:60")
    others = {pid: peer for pid, peer in peers.items() if pid != runner}
    assert len(others) == WORKERS - 1, (runner, sorted(peers))
    for pid, peer in others.items():  # every worker but the runner answers GetTask
        got = peer.rpc("get", {"id": task["id"]})
        assert got["result"]["id"] == task["id"], got
        _answered_by(peer, pid)
    (list_pid, lister), (follow_pid, follower) = list(others.items())[:2]
    listed = lister.rpc("list", {})["result"]["tasks"]
    _answered_by(lister, list_pid)
    assert task["id"] in [t["id"] for t in listed]
    # From the first event: on a slow machine the task may already be done, and a
    # subscriber with a cursor still gets the whole log, ending at the final state.
    with follower.stream("subscribe", {"id": task["id"]},
                         headers={"Last-Event-ID": "0"}) as (response, events):
        assert response.headers["X-Worker-Pid"] == follow_pid
        seen = [event.data["result"] for event in events]
    chunks = [r for r in seen if "artifactUpdate" in r]
    assert len(chunks) == 60
    assert state_of(seen[-1]["statusUpdate"]) == "completed"
    assert state_of(wait_state(server, task["id"], {"completed"})) == "completed"


def test_a_dropped_stream_resumed_on_any_worker_gets_every_event_once(server: str) -> None:
    peers = peers_by_worker(server, WORKERS)
    peer = fresh_peer(server)
    first: list[Any] = []
    with peer.stream("stream", {"message": user_message("chunks:12", "1.0")}) as (response,
                                                                                 events):
        streamer = response.headers["X-Worker-Pid"]
        for event in events:
            first.append(event)
            if len(first) == 4:
                break  # hang up mid-stream
    task_id = first[0].data["result"]["task"]["id"]

    def resume(pid: str, resumer: Peer) -> list[Any]:
        resumed_from = {"Last-Event-ID": first[-1].id}
        with resumer.stream("subscribe", {"id": task_id},
                            headers=resumed_from) as (response, events):
            assert response.headers["X-Worker-Pid"] == pid
            return list(events)

    # Once on every worker, the streamer's included, at once: with the first stream perhaps
    # still held, the streamer's worker holds two streams, within its stream places.
    assert streamer in peers, (streamer, sorted(peers))
    with ThreadPoolExecutor(len(peers)) as pool:
        resumed = list(pool.map(resume, peers, peers.values()))
    rest = resumed[0]
    assert all([e.id for e in r] == [e.id for e in rest] for r in resumed)
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
    task, _ = send(server, "sleep:0.3")
    answers: list[dict[str, Any]] = []

    def cancel() -> None:
        time.sleep(delay)
        answers.append(fresh_peer(server).rpc("cancel", {"id": task["id"]}))

    threads = [threading.Thread(target=cancel) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    final = wait_state(server, task["id"], {"completed", "canceled"})
    state = state_of(final)
    time.sleep(0.5)
    assert state_of(get(server, task["id"])[0]) == state  # nothing overwrote it later
    # One cancel wins when the task was canceled; the other answers the canceled task, or
    # -32002 when it came after the first had made the task terminal (A2A 1.0's rule).
    won = [a for a in answers if "result" in a]
    for answer in answers:
        if "result" in answer:
            assert state == "canceled" and state_of(answer["result"]) == "canceled", answer
        else:
            assert answer["error"]["code"] == -32002, answer
    assert (len(won) >= 1) == (state == "canceled"), answers
    with fresh_peer(server).stream("subscribe", {"id": task["id"]},
                                   headers={"Last-Event-ID": "0"}) as (_, events):
        log = [e.data["result"] for e in events]
    terminal = [state_of(e["statusUpdate"]) for e in log if "statusUpdate" in e
                and state_of(e["statusUpdate"]) in {"completed", "canceled", "failed"}]
    assert terminal == [state]


def test_kill_9_of_the_running_worker_fails_the_task_and_a_subscriber_hears_it(
        server: str) -> None:
    peers = peers_by_worker(server, WORKERS)
    task, victim = send(server, "hang")
    assert victim in peers, (victim, sorted(peers))
    wait_state(server, task["id"], {"working"})
    opened, killed = threading.Barrier(len(peers) + 1, timeout=20), threading.Event()
    heard: dict[str, tuple[dict[str, Any], float]] = {}

    def subscribe(pid: str, subscriber: Peer) -> None:
        with subscriber.stream("subscribe", {"id": task["id"]}) as (response, events):
            assert response.headers["X-Worker-Pid"] == pid
            assert state_of(next(events).data["result"]["task"]) == "working"
            opened.wait()
            if pid == victim:
                return  # this one dies with its worker
            assert killed.wait(20)
            final = next(events).data["result"]["statusUpdate"]
            heard[pid] = (final, time.monotonic())

    # A subscriber on every worker: the victim's, and each survivor's
    threads = [threading.Thread(target=subscribe, args=item) for item in peers.items()]
    for thread in threads:
        thread.start()
    opened.wait()
    killed_at = time.monotonic()
    os.kill(int(victim), signal.SIGKILL)
    killed.set()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(heard) == sorted(set(peers) - {victim}), "a survivor's subscriber heard nothing"
    for final, at in heard.values():
        assert state_of(final) == "failed"
        assert "lease expired" in texts(final["status"]["message"]["parts"])[0]
        assert at - killed_at < LEASE_SECONDS + 3
    assert state_of(get(server, task["id"])[0]) == "failed"
