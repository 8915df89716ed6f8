"""Garbage-collection timings of a benchmark server (``BENCH_GCDBG=benchmarks/gctrace``).

Every process the server starts (gunicorn's master and workers) appends one line per
collection of generation 1 or 2, and per collection that took 5 ms or more, to
``$BENCH_GCLOG`` (default ``/tmp/a2a-gc.log``)::

    <pid> t=<unix time> gen=<generation> ms=<duration> collected=<objects freed>
        tracked=<objects tracked> frozen=<count> walked=<objects in the collected generations>

(one line each; tracked and walked are -1 unless ``BENCH_GCCOUNT=1``: counting is slow).

Read it with ``benchmarks/gctrace/summary.py``.
"""

from __future__ import annotations

import gc
import os
import time

_LOG = os.environ.get("BENCH_GCLOG", "/tmp/a2a-gc.log")
_started: list[float] = [0.0]
#: BENCH_GCCOUNT=1: also count the tracked objects after each full collection (slow).
_COUNT = bool(os.environ.get("BENCH_GCCOUNT"))
_young: list[int] = [-1]


def _timed(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        if _COUNT:  # how many objects this collection is about to walk
            _young[0] = sum(len(gc.get_objects(g)) for g in range(info["generation"] + 1))
        _started[0] = time.perf_counter()
        return
    ms = (time.perf_counter() - _started[0]) * 1000
    generation = info.get("generation", 0)
    if generation == 0 and ms < 5:
        return
    tracked = len(gc.get_objects()) if generation == 2 and _COUNT else -1
    line = (f"{os.getpid()} t={time.time():.1f} gen={generation} ms={ms:.1f} "
            f"collected={info.get('collected', 0)} tracked={tracked} "
            f"frozen={gc.get_freeze_count()} walked={_young[0]}\n")
    with open(_LOG, "a") as out:
        out.write(line)


gc.callbacks.append(_timed)
