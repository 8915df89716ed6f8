"""Ctrl-C and SIGTERM stop the ``a2a`` command, whatever signal disposition it inherited.

A shell starts a background job (``cmd &``, ``nohup``) with SIGINT ignored, and the
child inherits that: ``a2a inspect`` would then serve forever, deaf to the SIGINT a
supervisor sends. So the command restores Python's own SIGINT handler at start, and
treats SIGTERM (what ``kill``, systemd and test harnesses send) as the same request.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["stop_on_signals"]


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def stop_on_signals() -> None:
    """Make SIGINT and SIGTERM raise :class:`KeyboardInterrupt` in the main thread.

    Does nothing off the main thread (``signal.signal`` is refused there), e.g. when
    :func:`a2a_client.cli.main` is called from a test's worker thread.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
