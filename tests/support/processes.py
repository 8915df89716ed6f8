"""Stop a child process for certain: the signal a test means, then SIGKILL after a grace period.

A test started under ``nohup`` hands its children SIGINT ignored, so "send SIGINT and
wait" can wait forever; every test that starts a process stops it with :func:`stop`
in a ``finally``, and no child outlives the test whatever it did with the signal.
"""

from __future__ import annotations

import signal
import subprocess
from typing import AnyStr

__all__ = ["stop"]


def stop(proc: subprocess.Popen[AnyStr], sig: int = signal.SIGTERM,
         grace: float = 10.0) -> tuple[AnyStr | None, AnyStr | None]:
    """Send ``sig``, wait ``grace`` seconds, then SIGKILL; returns the rest of stdout/stderr."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()
