"""The task store a benchmark server runs on, chosen by name (``BENCH_STORE``).

``memory`` is the default in-memory store; ``sqlite`` and ``postgres`` are
the durable stores of issue 5, opened through :func:`a2a_wsgi.stores.open_store`
with ``BENCH_STORE_URL`` (``run.py`` sets it: a file under its temporary
directory, or a PostgreSQL schema of its own that it drops afterwards).
``BENCH_STORE_OPTIONS`` (JSON) is passed to the store's constructor, for
experiments such as ``{"max_idle": 16}``.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Any

__all__ = ["make_store", "store_available"]

#: The module each durable store lives in.
_MODULES = {"sqlite": "a2a_wsgi.stores._sqlite", "postgres": "a2a_wsgi.stores._postgres"}


def store_available(kind: str) -> bool:
    """Whether this checkout has ``kind`` (the stores landed after the server did)."""
    if kind == "memory":
        return True
    try:
        importlib.import_module(_MODULES[kind])
        importlib.import_module("a2a_wsgi.stores").open_store  # noqa: B018
    except (ImportError, AttributeError, KeyError):
        return False
    return True


def make_store(kind: str) -> Any:
    """A fresh store of ``kind``; None means A2AApp's default (memory)."""
    if kind == "memory":
        return None
    from a2a_wsgi.stores import open_store

    options = json.loads(os.environ.get("BENCH_STORE_OPTIONS") or "{}")
    return open_store(os.environ["BENCH_STORE_URL"], **options)
