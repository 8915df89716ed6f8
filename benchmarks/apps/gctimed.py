"""``ours.py``'s app with the garbage collector's work counted in the worker.

    python -m a2a_wsgi._cli serve benchmarks.apps.gctimed:app -k gevent --bind 127.0.0.1:8000
    curl localhost:8000/__gc              # collections, their CPU time and what they freed
    curl -X POST localhost:8000/__gc/off  # gc.disable() in the worker (POST .../on: enable)

Collections per generation, the CPU seconds they took (``time.process_time`` around each,
from ``gc.callbacks``) and the objects they freed: objects the collector frees were in
reference cycles, which reference counting alone would have freed at once. The report
ends with the worker's CPU seconds, so two reports around a wrk run give the collector's
share. With ``off`` and ``on`` around runs of the same load, the CPU per request with and
without the collector (it also costs what it evicts from the caches, which its own clock
does not see). Round 7 of issue 21 in benchmarks/README.md used it.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from .ours import app as _ours

__all__ = ["app"]

_PREFIX = "/__gc"


class _Counted:
    """What the collector did since the worker started."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self.freed = [0, 0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
            return
        generation = info["generation"]
        self.collections[generation] += 1
        self.seconds[generation] += time.process_time() - self._started
        self.freed[generation] += info["collected"]

    def report(self) -> dict[str, Any]:
        return {"collections": self.collections, "seconds": [round(s, 4) for s in self.seconds],
                "freed": self.freed, "enabled": gc.isenabled(),
                "threshold": gc.get_threshold(), "worker_cpu": time.process_time()}


COUNTED = _Counted()
gc.callbacks.append(COUNTED)


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """``/__gc`` (GET: the report; POST ``/off`` or ``/on``); everything else is ours.py's."""
    path = environ.get("PATH_INFO", "")
    if not path.startswith(_PREFIX):
        return _ours(environ, start_response)
    if environ["REQUEST_METHOD"] == "POST":
        (gc.disable if path.endswith("/off") else gc.enable)()
    body = json.dumps(COUNTED.report()).encode() + b"\n"
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]
