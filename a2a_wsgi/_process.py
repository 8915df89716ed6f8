"""What the server tells the apps of this process before they serve.

An app does not guess its server. A WSGI server says per request whether
other processes serve the same app (``environ["wsgi.multiprocess"]``, PEP 3333:
gunicorn sets it when ``--workers`` is above 1); the gunicorn hook
:func:`a2a_wsgi._serve.gunicorn_post_worker_init` (which ``a2a serve``,
:func:`~a2a_wsgi._serve.run_gunicorn` and ``gunicorn -c
python:a2a_wsgi.gunicorn_config`` install) says it once, at worker boot, with
:func:`announce`: the worker count and the stream places its worker class
allows. Announcing starts every app of the process then, so a worker boots
ready (or refuses to boot) before its first request. ``docs/deployment.md``,
"How the app learns its server", has the table.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Protocol

__all__ = ["ServerInfo", "announce", "announced", "register", "registered"]


@dataclass(frozen=True, kw_only=True)
class ServerInfo:
    """This process as its server describes it."""

    #: Other processes serve the same apps (several gunicorn workers).
    multiprocess: bool = False
    #: Streams this process may hold open, sized for its worker (None: no limit).
    stream_limit: int | None = None
    #: The server lets the app take a held stream's connection over (gunicorn's gevent
    #: worker calling an A2AApp itself): held streams park (:mod:`a2a_wsgi._parking`)
    #: instead of keeping a greenlet each.
    parks_streams: bool = False


class _Startable(Protocol):
    def start(self) -> object: ...


_announced: ServerInfo | None = None
_apps: weakref.WeakSet[_Startable] = weakref.WeakSet()


def register(app: _Startable) -> None:
    """Have ``app`` started when the server announces itself (A2AApp registers itself)."""
    _apps.add(app)


def registered() -> list[object]:
    """The apps of this process that :func:`announce` would start (``a2a serve``'s
    start-up check opens their stores)."""
    return list(_apps)


def announced() -> ServerInfo | None:
    """What the server announced for this process (None: nothing yet)."""
    return _announced


def announce(info: ServerInfo) -> None:
    """Record ``info`` for this process and start every registered app with it.

    An app that cannot start (an in-memory store named for several processes)
    raises here, so the worker fails to boot.
    """
    global _announced
    _announced = info
    for app in list(_apps):
        app.start()
