"""How an app learns its server: told, never guessed (docs/deployment.md).

A request's ``wsgi.multiprocess`` says whether other processes serve the app; the
gunicorn hook announces the worker (:func:`a2a_wsgi._process.announce`), which starts
every app of the process with the worker count and the stream places it allows.
Creating or starting an app reads no signal handler.
"""

from __future__ import annotations

import gc
import signal
import weakref
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from werkzeug.test import Client

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi import _process as process
from a2a_wsgi._process import ServerInfo
from a2a_wsgi._serve import GEVENT_GC_THRESHOLD, gunicorn_post_worker_init, settle_gc
from a2a_wsgi._store_choice import MemoryStoreInManyProcessesError
from a2a_wsgi.stores import MemoryTaskStore, SQLiteTaskStore


class Echo(Agent):
    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return reply(message.text or "")


#: Thresholds no Python has as its default (3.13's own are GEVENT_GC_THRESHOLD): set before
#: the hook runs, so "left alone" and "retuned" can be told apart on every Python.
_UNTUNED = (1234, 11, 12)
assert _UNTUNED != GEVENT_GC_THRESHOLD


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """This test's apps only (other tests' apps stay unannounced), a shared file in tmp;
    the collector as it was (the gunicorn hook freezes what exists and may retune it)."""
    monkeypatch.setattr(process, "_apps", weakref.WeakSet())
    monkeypatch.setattr(process, "_announced", None)
    monkeypatch.setenv("A2A_DB", str(tmp_path / "tasks.sqlite3"))
    monkeypatch.delenv("A2A_STORE", raising=False)
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_an_announced_worker_starts_its_apps_sized_for_it() -> None:
    app = A2AApp(Echo())
    assert app._assembly is None  # creating one starts nothing
    process.announce(ServerInfo(multiprocess=True, stream_limit=3))
    assert app._assembly is not None
    assert isinstance(app.runtime.store, SQLiteTaskStore) and app.streams.limit == 3
    app.close()


def test_an_in_memory_store_named_for_several_workers_refuses_at_the_announcement() -> None:
    app = A2AApp(Echo(), store="memory")  # held, as a module's app is
    with pytest.raises(MemoryStoreInManyProcessesError):
        process.announce(ServerInfo(multiprocess=True))
    assert app._assembly is None


def test_the_gunicorn_hook_announces_the_workers_settings() -> None:
    app = A2AApp(Echo())
    worker = SimpleNamespace(cfg=SimpleNamespace(workers=4, worker_class_str="gthread",
                                                 threads=16))
    gc.set_threshold(*_UNTUNED)  # whatever the worker had, a thread worker keeps
    previous = signal.getsignal(signal.SIGTERM)
    try:
        gunicorn_post_worker_init(worker)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert process.announced() == ServerInfo(multiprocess=True, stream_limit=12)
    assert isinstance(app.runtime.store, SQLiteTaskStore) and app.streams.limit == 12
    assert gc.get_freeze_count() > 0  # what boot made is frozen for the collector
    assert gc.get_threshold() == _UNTUNED  # threads: the thresholds are left alone
    app.close()


def test_settling_the_collector_freezes_boot_and_retunes_only_gevent_workers() -> None:
    gc.set_threshold(*_UNTUNED)
    settle_gc(cooperative_worker=False)
    assert gc.get_freeze_count() > 0 and gc.get_threshold() == _UNTUNED
    gc.unfreeze()
    settle_gc(cooperative_worker=True)
    assert gc.get_freeze_count() > 0 and gc.get_threshold() == GEVENT_GC_THRESHOLD
    cycle: list[object] = []
    cycle.append(cycle)  # made after the freeze: collected as ever
    del cycle
    assert gc.collect() >= 1


@pytest.mark.parametrize("multiprocess", [False, True])
def test_without_an_announcement_the_request_says_it(multiprocess: bool) -> None:
    app = A2AApp(Echo())
    answer = Client(app).get("/.well-known/agent-card.json",
                             environ_overrides={"wsgi.multiprocess": multiprocess})
    assert answer.status_code == 200
    kind = SQLiteTaskStore if multiprocess else MemoryTaskStore
    assert isinstance(app.runtime.store, kind) and app.streams.limit is None
    app.close()


def test_creating_and_starting_an_app_reads_no_signal_handler(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(signum: int) -> Any:
        raise AssertionError("the app looked at a signal handler")

    monkeypatch.setattr(signal, "getsignal", refuse)
    A2AApp(Echo()).start().close()
