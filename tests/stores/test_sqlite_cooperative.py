"""Under gevent, a SQLite writer waiting for another process's lock lets the worker run on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""

WAITER = """
from gevent import monkey; monkey.patch_all()
import subprocess, sys, time
import gevent
from datetime import datetime, timezone
from a2a_core.models import Message, Part, Role, Task, TaskState, TaskStatus
from a2a_wsgi.stores import SQLiteTaskStore

path, holder = sys.argv[1], sys.argv[2]
store = SQLiteTaskStore(path, busy_timeout=10)
proc = subprocess.Popen([sys.executable, "-c", holder, path, "1.0"], stdout=subprocess.PIPE,
                        text=True)
assert proc.stdout.readline().strip() == "held"
ticks = []
def ticker():
    while True:
        ticks.append(time.monotonic())
        gevent.sleep(0.01)
gevent.spawn(ticker)
task = Task(id="tsk-1", context_id="ctx-1",
            status=TaskStatus(state=TaskState.SUBMITTED, timestamp=datetime.now(timezone.utc)))
started = time.monotonic()
store.save(task, expected_version=None)
waited = time.monotonic() - started
during = [t for t in ticks if started <= t <= started + waited]
proc.wait()
print(f"{waited:.2f} {len(during)} {store.get('tsk-1') is not None}")
"""


def test_a_lock_wait_is_a_cooperative_sleep(tmp_path: Path) -> None:
    path = tmp_path / "tasks.sqlite3"
    done = subprocess.run([sys.executable, "-c", WAITER, str(path), HOLDER],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    waited, ticks, saved = done.stdout.split()
    assert float(waited) >= 0.5  # the save really waited for the other process's lock
    # ... and the event loop kept running meanwhile (a busy wait inside SQLite's C code
    # would have frozen the ticker for the whole second).
    assert int(ticks) >= 0.5 * float(waited) / 0.01, done.stdout
    assert saved == "True"
