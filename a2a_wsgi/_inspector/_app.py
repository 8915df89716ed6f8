"""The inspector page as a WSGI app, and the per-request entry point A2AApp calls."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from a2a_inspector import InspectorSite

from ._access import may_inspect

__all__ = ["INSPECTOR_PATH", "inspector_app", "inspector_mount", "inspector_response"]

#: Where the page lives, below the app's mount point.
INSPECTOR_PATH = "/inspector"

StartResponse = Callable[..., Any]

_REFUSED = (
    b"The inspector answers requests from this machine (to a loopback address, with no "
    b"proxy in between) and requests a middleware authenticated (a2a_wsgi.put_identity)."
)


def inspector_app(agent_base_url: str | None = None) -> InspectorSite:
    """The page at ``/inspector`` and below, for the agent at ``agent_base_url``.

    None means the mount the page is served under (``<mount>/inspector/``
    talks to ``<mount>/``), on the page's own origin. An absolute URL on
    another origin is added to the page's ``connect-src``; that agent must
    then allow the page's origin (CORS), or use ``a2a inspect`` instead.
    The app serves whoever reaches it: :func:`inspector_response` adds the
    access check.
    """
    connect = []
    if agent_base_url:
        parts = urlsplit(agent_base_url)
        if parts.scheme in ("http", "https") and parts.netloc:
            connect.append(f"{parts.scheme}://{parts.netloc}")
    config = {"agentUrl": agent_base_url, "cardUrl": None, "proxy": None}
    return InspectorSite(config, prefix=INSPECTOR_PATH, connect_src=connect)


@functools.cache
def _same_origin_site() -> InspectorSite:
    return inspector_app()


def inspector_response(environ: dict[str, Any], start_response: StartResponse,
                       site: InspectorSite | None = None) -> Iterable[bytes] | None:
    """The inspector's answer to this request, or None when the path is not the inspector's.

    A request for ``/inspector`` or below (PATH_INFO, so below the mount) is
    served by ``site`` (default: the page for the agent at the mount), or
    refused with 403 unless :func:`~a2a_wsgi._inspector.may_inspect` allows it.
    """
    site = site or _same_origin_site()
    if not site.handles(str(environ.get("PATH_INFO") or "")):
        return None
    if not may_inspect(environ):
        start_response("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8"),
                                         ("Content-Length", str(len(_REFUSED)))])
        return [_REFUSED]
    return site(environ, start_response)


def inspector_mount(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """The page as :class:`~a2a_wsgi._app.A2AApp` mounts it: the route table gave it the
    request (``/inspector`` and below), so any other path is not found."""
    page = inspector_response(environ, start_response)
    if page is not None:
        return page
    start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8"),
                                     ("Content-Length", "9")])
    return [b"Not Found"]
