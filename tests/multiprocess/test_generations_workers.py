"""Task generations (the dev-1.1 preview) counted across processes that share a store.

Real gunicorn: 2 instances ("hosts") of 2 workers each, on one SQLite file and on one
PostgreSQL schema. Every call opens a new connection, so the changes
of one task are written by different processes; the generation must still grow by
exactly one per change, and a long-poll held by one process must be answered when
another one changes the task. The same module is the gunicorn app: in the workers
``A2A_TEST_GEN_STORE`` is set and ``app`` is built.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from multiprocess_support import APP_PATH, fresh_peer, tagged_app
from support.a2a_http import state_of, user_message
from support.gunicorn import WORKER_CLASSES, ServerProcess, start_gunicorn

from a2a_core._generations import GENERATIONS_EXTENSION_URI
from a2a_core.models import Message
from a2a_wsgi import Agent, AgentContext, input_required, reply

PREVIEW = {"A2A-Extensions": GENERATIONS_EXTENSION_URI}
#: 50 turns of two changes each (WORKING, then INPUT_REQUIRED): 100 changes.
TURNS = 50


class TurnsAgent(Agent):
    """Asks for more until told ``stop``."""

    name = "Generations Test Agent"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return reply("bye") if message.text == "stop" else input_required("more?")


app = (tagged_app(TurnsAgent(), os.environ["A2A_TEST_GEN_STORE"],
                  {"X-Instance": os.environ["A2A_TEST_INSTANCE"]}, preview_generations=True)
       if os.environ.get("A2A_TEST_GEN_STORE") else None)

pytestmark = pytest.mark.slow


@contextmanager
def _two_instances(store: str, logs: Path, worker_class: str = "gthread") -> Iterator[list[str]]:
    """2 gunicorn instances ("A" and "B") of 2 workers each on one store: their URLs.

    Two instances, not one of 4 workers, because which of one master's workers accepts
    a connection is the kernel's choice (a busy gevent worker may take them all)."""
    started: list[ServerProcess] = []
    try:
        for name in ("A", "B"):
            started.append(start_gunicorn(
                "test_generations_workers:app", log_path=logs / f"gunicorn-{name}.log",
                env={"A2A_TEST_GEN_STORE": store, "A2A_TEST_INSTANCE": name},
                workers=2, pythonpath=APP_PATH, worker_class=worker_class))
        for instance in started:
            instance.wait_ready()
        yield [s.url for s in started]
    finally:
        for instance in started:
            instance.stop()


@pytest.fixture(scope="module", params=WORKER_CLASSES)
def sqlite_workers(request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """4 workers on one file, under each worker model (a hold must yield under gevent)."""
    logs = tmp_path_factory.mktemp("generations")
    with _two_instances(f"sqlite:///{logs / 'tasks.sqlite3'}", logs, request.param) as urls:
        yield urls


@pytest.fixture(scope="module")
def postgres_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    from support.postgres import drop_schema, postgres_url, schema_url, unique_schema

    from a2a_wsgi.stores._postgres import upgrade_schema

    postgres_url()  # skip (fail in CI) without the service
    schema = unique_schema()
    try:
        upgrade_schema(postgres_url(), schema=schema)
        with _two_instances(schema_url(schema),
                            tmp_path_factory.mktemp("generations-hosts")) as urls:
            yield urls
    finally:
        drop_schema(schema)


def _send(url: str, text: str, task_id: str | None = None) -> tuple[dict[str, Any], str]:
    """A blocking send with the preview; the task and which process answered."""
    peer = fresh_peer(url)
    answer = peer.rpc("send", {"message": user_message(text, "1.0", task_id=task_id)},
                      headers=PREVIEW)
    assert "result" in answer, answer
    headers = peer.last.headers
    return answer["result"]["task"], f'{headers["X-Instance"]}/{headers["X-Worker-Pid"]}'


def _get(url: str, task_id: str, **params: Any) -> dict[str, Any]:
    answer = fresh_peer(url).rpc("get", {"id": task_id, **params}, headers=PREVIEW)
    assert "result" in answer, answer
    return dict(answer["result"])


def _log_generations(url: str, task_id: str) -> list[int]:
    """The generation of every status and artifact update in the task's whole event log."""
    with fresh_peer(url).stream("subscribe", {"id": task_id},
                                headers={"Last-Event-ID": "0", **PREVIEW}) as (_, events):
        results = [e.data["result"] for e in events]
    return [int(r[m]["generation"]) for r in results
            for m in ("statusUpdate", "artifactUpdate") if m in r]


def _hundred_changes(urls: list[str]) -> None:
    task, writer = _send(urls[0], "hello")
    writers = {writer}
    generation = int(task["generation"])
    for turn in range(TURNS):
        task, writer = _send(urls[turn % len(urls)], "more", task["id"])
        writers.add(writer)
        assert state_of(task) == "input-required"
        assert int(task["generation"]) == generation + 2  # WORKING, then INPUT_REQUIRED
        generation = int(task["generation"])
        other = _get(urls[(turn + 1) % len(urls)], task["id"])
        assert int(other["generation"]) == generation  # every process reads the same count
    final, _ = _send(urls[-1], "stop", task["id"])
    assert state_of(final) == "completed"
    logged = _log_generations(urls[0], task["id"])
    assert logged == list(range(logged[0], logged[0] + len(logged)))  # no gap, no repeat
    assert logged[-1] == int(final["generation"]) and len(logged) >= 2 * TURNS
    assert len(writers) > 1, f"every send landed on one process: {writers}"


def _long_poll_across(urls: list[str]) -> None:
    task, _ = _send(urls[0], "hello")
    held: dict[str, Any] = {}

    def long_poll() -> None:
        held.update(_get(urls[-1], task["id"], currentGeneration=task["generation"]))

    poller = threading.Thread(target=long_poll)
    poller.start()
    poller.join(0.5)
    assert poller.is_alive(), "the long-poll answered before the task changed"
    _send(urls[0], "more", task["id"])
    poller.join(15)
    assert not poller.is_alive() and int(held["generation"]) > int(task["generation"])


def test_sqlite_four_workers_count_every_change_once(sqlite_workers: list[str]) -> None:
    _hundred_changes(sqlite_workers)


def test_sqlite_a_long_poll_is_answered_by_another_workers_change(
        sqlite_workers: list[str]) -> None:
    _long_poll_across(sqlite_workers)


@pytest.mark.postgres
def test_postgres_two_hosts_count_every_change_once(postgres_hosts: list[str]) -> None:
    _hundred_changes(postgres_hosts)


@pytest.mark.postgres
def test_postgres_a_long_poll_is_answered_by_the_other_hosts_change(
        postgres_hosts: list[str]) -> None:
    _long_poll_across(postgres_hosts)


def test_a_hold_yields_to_other_requests_of_a_single_gevent_worker(
        tmp_path: Any) -> None:
    """One gevent worker: the change that ends the hold is served by the very process
    holding it, so a hold that blocked the hub would never end."""
    db = tmp_path / "tasks.sqlite3"
    with start_gunicorn("test_generations_workers:app", log_path=tmp_path / "gunicorn.log",
                        env={"A2A_TEST_GEN_STORE": f"sqlite:///{db}", "A2A_TEST_INSTANCE": "A"},
                        workers=1, pythonpath=APP_PATH, worker_class="gevent") as gunicorn:
        gunicorn.wait_ready()
        _long_poll_across([gunicorn.url])
