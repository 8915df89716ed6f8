"""Tracemalloc snapshots of every forked worker, for ``benchmarks/soak.py --tracemalloc DIR``.

Python imports ``sitecustomize`` at start-up when this folder is on
PYTHONPATH. With ``A2A_SOAK_TRACEMALLOC=DIR`` set, every process forked from
the one that imported it (gunicorn's workers) starts tracing its allocations
(``A2A_SOAK_TRACEMALLOC_FRAMES`` frames each, default 8) and writes a snapshot
to ``DIR/PID-SEQ.snap`` every ``A2A_SOAK_TRACEMALLOC_EVERY`` seconds (default
20). Tracing starts in the child, after the fork: what grows is what the worker
allocated while serving. ``benchmarks/memdiff.py DIR`` compares the snapshots.
"""

from __future__ import annotations

import os
import threading
import time
import tracemalloc

_FOLDER = os.environ.get("A2A_SOAK_TRACEMALLOC")


def _snapshots(folder: str, every: float) -> None:
    """Write a snapshot of this process every ``every`` seconds, numbered from 0."""
    seq = 0
    while True:
        time.sleep(every)
        snapshot = tracemalloc.take_snapshot().filter_traces(
            (tracemalloc.Filter(False, tracemalloc.__file__),))
        path = os.path.join(folder, f"{os.getpid()}-{seq:04d}.snap")
        snapshot.dump(path + ".part")
        os.replace(path + ".part", path)  # complete files only
        seq += 1


def _in_child() -> None:
    assert _FOLDER is not None
    tracemalloc.start(int(os.environ.get("A2A_SOAK_TRACEMALLOC_FRAMES", "8")))
    every = float(os.environ.get("A2A_SOAK_TRACEMALLOC_EVERY", "20"))
    threading.Thread(target=_snapshots, args=(_FOLDER, every), daemon=True,
                     name="soak-tracemalloc").start()


if _FOLDER:
    os.register_at_fork(after_in_child=_in_child)
