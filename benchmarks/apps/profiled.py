"""``ours.py``'s app with a sampling profiler in the worker, for finding where time goes.

    python -m a2a_wsgi._cli serve benchmarks.apps.profiled:app -k gevent --bind 127.0.0.1:8000
    curl -X POST localhost:8000/__sampler/start      # ... load ...
    curl -X POST localhost:8000/__sampler/stop       # the report, as text

py-spy cannot attach on this machine, and cProfile's call accounting is
confused by greenlet switches; a SIGPROF timer that records the interrupted
Python stack is neither. ``ITIMER_PROF`` counts this process's CPU time, so
an idle worker takes no samples. It sees the main thread only: right for the
gevent worker (every greenlet runs there), not for gthread's worker threads.
"""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any

from .ours import app as _ours

__all__ = ["Sampler", "app"]

_PREFIX = "/__sampler/"


class Sampler:
    """Stacks of the main thread, sampled every ``interval`` seconds of CPU time."""

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.stacks: Counter[tuple[str, ...]] = Counter()

    def start(self) -> None:
        self.stacks.clear()
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, signal.SIG_IGN)

    def _sample(self, signum: int, frame: FrameType | None) -> None:
        stack: list[str] = []
        while frame is not None and len(stack) < 60:
            code = frame.f_code
            stack.append(f"{_short(code.co_filename)}:{code.co_name}")
            frame = frame.f_back
        self.stacks[tuple(stack)] += 1

    def report(self, top: int = 40) -> str:
        """Self time (the innermost frame) and inclusive time per function, in % of samples."""
        total = sum(self.stacks.values()) or 1
        own: Counter[str] = Counter()
        inclusive: Counter[str] = Counter()
        for stack, count in self.stacks.items():
            if stack:
                own[stack[0]] += count
            for name in set(stack):
                inclusive[name] += count
        lines = [f"{total} samples of {self.interval * 1000:g} ms CPU", "", "self:"]
        lines += [f"{100 * n / total:6.1f}%  {name}" for name, n in own.most_common(top)]
        lines += ["", "inclusive:"]
        lines += [f"{100 * n / total:6.1f}%  {name}" for name, n in inclusive.most_common(top)]
        return "\n".join(lines) + "\n"


def _short(path: str) -> str:
    """A path from the package or library root on, so the report stays readable."""
    for marker in ("site-packages/", "/lib/python3", "/work/main/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


SAMPLER = Sampler()


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """``/__sampler/start`` and ``/__sampler/stop`` (POST); everything else is ours.py's."""
    path = environ.get("PATH_INFO", "")
    if not path.startswith(_PREFIX) or environ["REQUEST_METHOD"] != "POST":
        return _ours(environ, start_response)
    if path == _PREFIX + "start":
        SAMPLER.start()
        body = b"started\n"
    else:
        SAMPLER.stop()
        body = SAMPLER.report().encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
