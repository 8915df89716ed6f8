"""Which task store an app runs on, decided when it starts.

Worker processes that each keep tasks in memory lose them: a task created in
one worker is "not found" in the next. So a store is chosen knowing whether
the server runs several processes (WSGI's ``wsgi.multiprocess``, or
gunicorn's worker count):

- a store the deployment named (``store=``, else ``$A2A_STORE``) is used as
  named, except that an in-memory store in several processes is refused with
  a message that says what to set;
- with none named, one process keeps tasks in memory and several share the
  embedded SQLite file (``$A2A_DB``, else ``./a2a-tasks.sqlite3``), as
  ``a2a serve --workers N`` always did.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from .stores._base import TaskStore

__all__ = ["StoreSpec", "MemoryStoreInManyProcessesError", "MissingExtraError", "choose_store"]

log = logging.getLogger("a2a_wsgi.store")

#: A store instance, or a URL ``open_store`` understands.
StoreSpec = TaskStore | str

_MEMORY = frozenset({"memory", "memory://"})


class MemoryStoreInManyProcessesError(RuntimeError):
    """An in-memory store was named for a server that runs several worker processes."""

    def __init__(self) -> None:
        super().__init__(
            "This server runs several worker processes, and the app's task store is in memory: "
            "each worker would keep its own tasks and answer 'task not found' for the others'. "
            "Share one store: A2AApp(store='sqlite://') or A2A_STORE=sqlite:// (one host), "
            "A2AApp(store='postgresql://...') or A2A_STORE=postgresql://... (many hosts); "
            "or run one worker (gunicorn --workers 1)."
        )


class MissingExtraError(ImportError):
    """The store named needs an optional dependency (a2a-wsgi's ``extra``) not installed here.

    An ImportError, so code that expected the bare one still catches it; its message
    says what to install (``a2a serve`` prints it as its one line).
    """

    def __init__(self, store: str, extra: str, cause: ImportError) -> None:
        super().__init__(f"the {store} task store needs the {extra!r} extra, which is not "
                         f"installed here ({cause}): pip install 'a2a-wsgi[{extra}]'",
                         name=cause.name)
        self.extra = extra


def choose_store(named: StoreSpec | None, *, multiprocess: bool,
                 environ: Mapping[str, str] = os.environ) -> StoreSpec:
    """The store to open: ``named``, else ``$A2A_STORE``, else memory or SQLite (see above)."""
    spec = named if named is not None else (environ.get("A2A_STORE") or None)
    if spec is None:
        if not multiprocess:
            return "memory"
        from .stores._sqlite import default_sqlite_path  # the SQLite store only when chosen

        log.warning("several worker processes and no task store named: sharing the SQLite "
                    "file %s (set A2A_STORE or store= to choose)", default_sqlite_path())
        return "sqlite://"
    if multiprocess and _is_memory(spec):
        raise MemoryStoreInManyProcessesError()
    return spec


def _is_memory(spec: StoreSpec) -> bool:
    if isinstance(spec, str):
        return spec in _MEMORY
    from .stores._memory import MemoryTaskStore

    return isinstance(spec, MemoryTaskStore)
