"""The suite's root: its presence puts ``tests/`` on ``sys.path``, so test modules in any
folder import the shared helpers as ``support.*``."""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from types import FrameType

import pytest

#: How long threads a test left behind may take to end once the session is over.
_STRAY_GRACE = float(os.environ.get("A2A_TEST_STRAY_GRACE", "30"))

_exitstatus = 0


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _exitstatus
    _exitstatus = int(exitstatus)


def _idle_pool_worker(frame: FrameType | None) -> bool:
    """A thread pool's worker waiting for work (by its stack): the interpreter's exit hook
    ends it."""
    in_pool = False
    while frame is not None:
        if frame.f_code.co_filename.endswith(os.path.join("concurrent", "futures", "thread.py")):
            if frame.f_code.co_name == "run":  # _WorkItem.run: busy with a submitted call
                return False
            in_pool = True
        frame = frame.f_back
    return in_pool


def _strays() -> list[tuple[threading.Thread, FrameType | None]]:
    """Live non-daemon threads the interpreter would wait for at exit, for ever if blocked,
    each with its current frame."""
    frames = sys._current_frames()
    found = []
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1)
        if (thread is not threading.main_thread() and not thread.daemon and thread.is_alive()
                and not _idle_pool_worker(frame)):
            found.append((thread, frame))
    return found


def pytest_unconfigure(config: pytest.Config) -> None:
    """Fail loudly, with their stacks, on threads that would hold the interpreter's exit.

    A test that leaves a non-daemon thread blocked (an agent waiting for a cancel that will
    never come) would otherwise keep pytest from exiting after its summary, for as long as
    CI lets it run.
    """
    deadline = time.monotonic() + _STRAY_GRACE
    while _strays() and time.monotonic() < deadline:
        time.sleep(0.2)
    strays = _strays()
    if not strays:
        return
    lines = [f"\n{len(strays)} non-daemon thread(s) still running {_STRAY_GRACE:.0f} s after "
             "the session; a test left them blocked:\n"]
    for thread, frame in strays:
        lines.append(f"--- {thread.name} ---\n")
        if frame is not None:
            lines.extend(traceback.format_stack(frame))
    sys.stdout.flush()
    sys.stderr.write("".join(lines))
    sys.stderr.flush()
    os._exit(_exitstatus or 3)
