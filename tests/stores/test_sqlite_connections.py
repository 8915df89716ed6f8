"""SQLite connections are bounded by work in flight: threads and greenlets give theirs back."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from a2a_wsgi.stores import SQLiteTaskStore
from a2a_wsgi.stores._sqlite.connections import IDLE_CONNECTIONS


def _descriptors_on(path: Path) -> int:
    """Descriptors of this process open on the database file or its WAL."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        count += target.startswith(str(path))
    return count


def test_ended_threads_give_their_connections_back(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    store = SQLiteTaskStore(str(path))
    try:
        for _ in range(3):
            threads = [threading.Thread(target=store.list) for _ in range(30)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            del threads
            # what stays open is the idle pool (plus this thread's, once it has used one)
            assert store._connections.open_count() <= IDLE_CONNECTIONS + 1
        before = _descriptors_on(path)
        for _ in range(200):  # one thread after another: each reuses an idle connection
            thread = threading.Thread(target=store.list)
            thread.start()
            thread.join()
        assert _descriptors_on(path) <= before
    finally:
        store.close()
    assert store._connections.open_count() == 0


def test_a_thread_keeps_one_connection(tmp_path: Path) -> None:
    store = SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))
    try:
        first = store._connections.get()
        store.list()
        assert store._connections.get() is first
    finally:
        store.close()


GREENLETS = """
from gevent import monkey; monkey.patch_all()
import os, sys
import gevent
from a2a_wsgi.stores import SQLiteTaskStore

path = sys.argv[1]
store = SQLiteTaskStore(path)

def work():
    store.get("tsk-none")
    gevent.sleep(0.001)
    store.list()

def descriptors():
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith(path)
        except OSError:
            pass
    return count

rounds = []
for _ in range(6):
    gevent.joinall([gevent.spawn(work) for _ in range(50)])
    rounds.append((store._connections.open_count(), descriptors()))
print(rounds)
"""


def test_ended_greenlets_give_their_connections_back(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    done = subprocess.run([sys.executable, "-c", GREENLETS, str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rounds = eval(done.stdout)  # a list of (open connections, descriptors) tuples
    # 300 greenlets in all, 50 at a time: open connections stay at the idle pool (plus the
    # main greenlet's, which made the schema, and the last greenlet's, not yet collected)...
    assert all(open_now <= IDLE_CONNECTIONS + 2 for open_now, _ in rounds), rounds
    # ... and descriptors at what 50 at once needed (SQLite keeps a closed connection's
    # descriptor for reuse while others hold locks on the file), not 2 per greenlet ever run.
    assert rounds[-1][1] <= rounds[0][1], rounds
    assert rounds[-1][1] < 2 * 50 + 10, rounds


_CLOSE_UNDER_A_READER = """
import sys, threading, time
from a2a_wsgi.stores import SQLiteTaskStore
store = SQLiteTaskStore(sys.argv[1])
ended = []
def read():
    try:
        while True:
            store.list()
    except RuntimeError as exc:
        ended.append(str(exc))
readers = [threading.Thread(target=read) for _ in range(4)]
for t in readers:
    t.start()
time.sleep(0.3)
store.close()
for t in readers:
    t.join(10)
print(ended)
"""


def test_closing_the_store_under_busy_threads_ends_them_with_an_error(tmp_path: Path) -> None:
    # Closing a connection another thread is using crashes the process (SIGBUS or SIGSEGV
    # in sqlite3), so this runs in a child: each reader's next use raises instead.
    done = subprocess.run([sys.executable, "-c", _CLOSE_UNDER_A_READER,
                           str(tmp_path / "tasks.sqlite3")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(["the store is closed"] * 4)
