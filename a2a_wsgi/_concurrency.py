"""Which concurrency model this process runs: OS threads, or gevent's greenlets.

Under gunicorn's gevent worker the standard library is monkey-patched before
the app is imported, so ``threading``, ``time.sleep``, sockets and ``requests``
cooperate on one event loop. The library adapts where that matters: a
greenlet is cheap, so the agent pool is sized for thousands of runs, and a
wait inside C code (SQLite's busy handler) would stall every request of the
worker, so such waits are made in Python instead.
"""

from __future__ import annotations

import sys

__all__ = ["cooperative", "default_agent_workers", "THREAD_AGENT_WORKERS",
           "GREENLET_AGENT_WORKERS"]

#: Agents running at once for non-blocking and streaming sends, per process.
THREAD_AGENT_WORKERS = 8
GREENLET_AGENT_WORKERS = 1024


def cooperative() -> bool:
    """True when gevent has patched ``threading`` (a gevent worker, or a patched script)."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is None:
        return False
    try:
        return bool(monkey.is_module_patched("threading"))
    except Exception:  # a gevent too old or too new to ask: assume threads
        return False


def default_agent_workers() -> int:
    """The agent pool's size when the deployment names none."""
    return GREENLET_AGENT_WORKERS if cooperative() else THREAD_AGENT_WORKERS
