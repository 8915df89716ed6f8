"""Two separate gunicorn instances ("hosts") on two ports, sharing one PostgreSQL database.

Nothing is shared between the instances but the database: a task sent to one
is read, listed, followed, canceled and finished through the other. Each
instance runs 2 workers; each response names its instance and worker
(``X-Instance``, ``X-Worker-Pid``). The same module is the gunicorn app: in the
workers ``A2A_TEST_PG_STORE`` (a ``postgresql://…?schema=`` URL) is set and
``app`` is built. The schema is unique to the test session and dropped at the end.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from multiprocess_support import (
    APP_PATH,
    LEASE_SECONDS,
    MultiprocessAgent,
    fresh_peer,
    get,
    send,
    tagged_app,
    wait_state,
)
from support.a2a_http import state_of, texts, user_message
from support.gunicorn import WORKER_CLASSES, ServerProcess, start_gunicorn


class HostAgent(MultiprocessAgent):
    name = "Two Hosts Test Agent"


app = (tagged_app(HostAgent(), os.environ["A2A_TEST_PG_STORE"],
                  {"X-Instance": os.environ["A2A_TEST_INSTANCE"]})
       if os.environ.get("A2A_TEST_PG_STORE") else None)


# -- the servers (pytest side) --------------------------------------------------------------

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@dataclass(frozen=True)
class Hosts:
    a: str  # instance A's URL
    b: str  # instance B's URL
    schema: str


@pytest.fixture(scope="module", params=WORKER_CLASSES)
def hosts(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosts]:
    """Instances A and B on one fresh schema, under each worker model; torn down afterwards."""
    from support.postgres import drop_schema, postgres_url, schema_url, unique_schema

    from a2a_wsgi.stores._postgres import upgrade_schema

    postgres_url()  # skip (fail in CI) without the service
    schema = unique_schema()
    logs = tmp_path_factory.mktemp("two-hosts")
    started: list[ServerProcess] = []
    try:
        upgrade_schema(postgres_url(), schema=schema)  # what a deploy step would do
        for name in ("A", "B"):
            started.append(start_gunicorn(
                "test_gunicorn_postgres:app", log_path=logs / f"gunicorn-{name}.log",
                env={"A2A_TEST_PG_STORE": schema_url(schema), "A2A_TEST_INSTANCE": name},
                pythonpath=APP_PATH, workers=2, worker_class=request.param))
        deadline = time.monotonic() + 30
        for instance in started:
            instance.wait_ready(deadline)
        yield Hosts(started[0].url, started[1].url, schema)
    finally:
        for instance in started:
            instance.stop()
        drop_schema(schema)


# -- helpers ----------------------------------------------------------------------------------


def _get(url: str, task_id: str) -> tuple[dict[str, Any], str]:
    """GetTask; the task and the instance ("A" or "B") that answered."""
    return get(url, task_id, "X-Instance")


def _leases(hosts: Hosts, task_id: str) -> int:
    """How many work leases the database holds for the task (one while an agent runs it)."""
    import psycopg
    from support.postgres import postgres_url

    with psycopg.connect(postgres_url(), autocommit=True) as conn:
        found = conn.execute(f'SELECT count(*) FROM "{hosts.schema}".a2a_leases '
                             "WHERE task_id = %s", (task_id,)).fetchone()
    return int(found[0]) if found else 0


def _log_of(url: str, task_id: str) -> list[dict[str, Any]]:
    """The whole event log of a task, replayed from the start (Last-Event-ID 0)."""
    with fresh_peer(url).stream("subscribe", {"id": task_id},
                                headers={"Last-Event-ID": "0"}) as (_, events):
        return [e.data["result"] for e in events]


# -- the tests -----------------------------------------------------------------------------------


def test_send_on_one_host_then_get_list_and_subscribe_on_the_other(
        hosts: Hosts) -> None:
    a, b = hosts.a, hosts.b
    task, _ = send(a, "chunks:60")  # 3 s: long enough to subscribe while it runs
    got, instance = _get(b, task["id"])
    assert (got["id"], instance) == (task["id"], "B")
    listed = fresh_peer(b).rpc("list", {})["result"]["tasks"]
    assert task["id"] in [t["id"] for t in listed]
    with fresh_peer(b).stream("subscribe", {"id": task["id"]}) as (response, events):
        assert response.headers["X-Instance"] == "B"
        seen = [event.data["result"] for event in events]
    assert "task" in seen[0] and state_of(seen[-1]["statusUpdate"]) == "completed"
    before = [p["text"] for art in seen[0]["task"].get("artifacts", []) for p in art["parts"]]
    chunks = [s["artifactUpdate"]["artifact"]["parts"][0]["text"] for s in seen
              if "artifactUpdate" in s]
    every = [f"chunk {n}" for n in range(60)]
    assert before + chunks == every  # the snapshot, then each later chunk once
    final, _ = _get(a, task["id"])
    assert state_of(final) == "completed"
    assert [p["text"] for p in final["artifacts"][0]["parts"]] == every


def test_a_cancel_on_the_other_host_stops_the_running_agent(hosts: Hosts) -> None:
    a, b = hosts.a, hosts.b
    task, _ = send(a, "hang")
    wait_state(b, task["id"], {"working"})
    assert _leases(hosts, task["id"]) == 1  # A's worker holds it while the agent runs
    answer = fresh_peer(b).rpc("cancel", {"id": task["id"]})
    assert state_of(answer["result"]) == "canceled", answer
    deadline = time.monotonic() + 10
    while _leases(hosts, task["id"]):  # released once A's agent saw the cancel and returned
        assert time.monotonic() < deadline, "the agent on A never stopped"
        time.sleep(0.05)
    assert state_of(_get(a, task["id"])[0]) == "canceled"
    states = [state_of(e["statusUpdate"]) for e in _log_of(a, task["id"]) if "statusUpdate" in e]
    assert states[-1] == "canceled" and states.count("canceled") == 1


def test_a_dropped_stream_resumed_on_the_other_host_gets_every_event_once(
        hosts: Hosts) -> None:
    a, b = hosts.a, hosts.b
    peer = fresh_peer(a)
    first: list[Any] = []
    with peer.stream("stream", {"message": user_message("chunks:12", "1.0")}) as (_, events):
        for event in events:
            first.append(event)
            if len(first) == 4:
                break  # hang up mid-stream
    task_id = first[0].data["result"]["task"]["id"]
    with fresh_peer(b).stream("subscribe", {"id": task_id},
                              headers={"Last-Event-ID": first[-1].id}) as (response, events):
        assert response.headers["X-Instance"] == "B"
        rest = list(events)
    ids = [int(e.id) for e in first + rest]
    assert ids == list(range(ids[0], ids[0] + len(ids))), ids  # consecutive: none lost, none twice
    chunks = [e.data["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"]
              for e in first + rest if "artifactUpdate" in e.data["result"]]
    assert chunks == [f"chunk {n}" for n in range(12)]
    assert rest[-1].data["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("delay", [0.15, 0.3, 0.45])
def test_cancels_on_both_hosts_racing_a_completion_leave_one_final_state(
        hosts: Hosts, delay: float) -> None:
    a, b = hosts.a, hosts.b
    task, _ = send(a, "sleep:0.3")

    def cancel(url: str) -> dict[str, Any]:
        time.sleep(delay)
        return fresh_peer(url).rpc("cancel", {"id": task["id"]})

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(cancel, [a, b]))
    state = state_of(wait_state(b, task["id"], {"completed", "canceled"}))
    time.sleep(0.5)
    assert state_of(_get(a, task["id"])[0]) == state == state_of(_get(b, task["id"])[0])
    # One cancel wins when the task was canceled; the other answers the canceled task, or
    # -32002 when it came after the first had made the task terminal (A2A 1.0's rule).
    won = [a for a in answers if "result" in a]
    for answer in answers:
        if "result" in answer:
            assert state == "canceled" and state_of(answer["result"]) == "canceled", answer
        else:
            assert answer["error"]["code"] == -32002, answer
    assert (len(won) >= 1) == (state == "canceled"), answers
    terminal = [state_of(e["statusUpdate"]) for e in _log_of(b, task["id"])
                if "statusUpdate" in e
                and state_of(e["statusUpdate"]) in {"completed", "canceled", "failed"}]
    assert terminal == [state]


def test_kill_9_on_one_host_fails_the_task_and_the_other_host_tells_its_subscriber(
        hosts: Hosts) -> None:
    a, b = hosts.a, hosts.b
    task, victim = send(a, "hang")
    wait_state(b, task["id"], {"working"})
    heard: list[tuple[dict[str, Any], float]] = []
    opened = threading.Event()

    def subscribe() -> None:
        with fresh_peer(b).stream("subscribe", {"id": task["id"]}) as (_, events):
            assert state_of(next(events).data["result"]["task"]) == "working"
            opened.set()
            final = next(events).data["result"]["statusUpdate"]
            heard.append((final, time.monotonic()))

    thread = threading.Thread(target=subscribe)
    thread.start()
    assert opened.wait(10)
    killed_at = time.monotonic()
    os.kill(int(victim), signal.SIGKILL)
    thread.join(timeout=30)
    assert heard, "the subscriber on B heard nothing"
    final, at = heard[0]
    assert state_of(final) == "failed"
    assert "lease expired" in texts(final["status"]["message"]["parts"])[0]
    assert at - killed_at < LEASE_SECONDS + 3
    assert state_of(_get(a, task["id"])[0]) == "failed"
    assert _leases(hosts, task["id"]) == 0
