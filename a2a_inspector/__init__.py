"""The inspector page's files, and the WSGI app that serves them below a prefix.

The page is plain HTML, CSS and JavaScript modules: no build step, nothing
from another origin, no inline script or style, so it runs under a strict
Content-Security-Policy. It learns where the agent is from ``config.json``,
written by whoever serves it: the app's built-in inspector
(:mod:`a2a_wsgi._inspector`, the agent on the same origin) and ``a2a inspect``
(:mod:`a2a_client._inspect`, any agent, through a local proxy). Both serve this
one copy of the files, which is why it is a package of its own: the server and the client
both build on it and on :mod:`a2a_core`, never on each other.

Nothing here imports werkzeug, a2a_wsgi or a2a_client (``tests/core/test_boundaries.py``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from ._card_check import CARD_CHECK, card_check_answer

__all__ = ["ASSET_TYPES", "Asset", "InspectorSite", "assets", "content_security_policy"]

_JS = "text/javascript; charset=utf-8"

#: Every file of the page, and its media type.
ASSET_TYPES: Mapping[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "inspector.css": "text/css; charset=utf-8",
    "app.js": _JS,
    "agent.js": _JS,
    "card-view.js": _JS,
    "chat-view.js": _JS,
    "console-view.js": _JS,
    "dom.js": _JS,
    "net.js": _JS,
    "render.js": _JS,
    "sse.js": _JS,
    "tasks-view.js": _JS,
    "wire.js": _JS,
}

StartResponse = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Asset:
    """One file of the page, read once."""

    body: bytes
    content_type: str
    etag: str


@functools.cache
def assets() -> Mapping[str, Asset]:
    """The page's files by name (read from the package once per process)."""
    root = files(__name__)
    loaded = {}
    for name, content_type in ASSET_TYPES.items():
        body = root.joinpath(name).read_bytes()
        loaded[name] = Asset(body, content_type, f'"{hashlib.sha256(body).hexdigest()[:32]}"')
    return loaded


def content_security_policy(connect_src: Sequence[str] = ()) -> str:
    """Scripts, styles and fetches from this origin only (plus ``connect_src`` origins).

    Images may also be ``data:`` and ``blob:`` URLs: the page previews image
    parts it received and offers file parts as downloads.
    """
    connect = " ".join(["'self'", *connect_src])
    return (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        f"connect-src {connect}; object-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )


class InspectorSite:
    """A WSGI app serving the page at ``prefix`` and below, and ``config.json`` beside it.

    ``/inspector`` redirects to ``/inspector/`` so the page's relative URLs
    resolve below the prefix. Only GET and HEAD are answered, but for ``card-check`` (POST
    a card, get its schema findings: :mod:`._card_check`). Files carry an ETag and
    ``Cache-Control: no-cache``, so an upgraded package is picked up at the next load and
    an unchanged one costs a 304.
    """

    def __init__(self, config: Mapping[str, Any], *, prefix: str = "/inspector",
                 connect_src: Sequence[str] = ()) -> None:
        self.prefix = "/" + prefix.strip("/")
        self.config = json.dumps(dict(config)).encode()
        self.csp = content_security_policy(connect_src)

    def handles(self, path: str) -> bool:
        """Whether ``path`` (a PATH_INFO) is the page or one of its files."""
        return path == self.prefix or path.startswith(self.prefix + "/")

    def __call__(self, environ: Mapping[str, Any],
                 start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO") or "/")
        method = str(environ.get("REQUEST_METHOD") or "GET").upper()
        if not self.handles(path):
            return self._plain(start_response, "404 Not Found", "Not an inspector file")
        if path == f"{self.prefix}/{CARD_CHECK}":
            if method != "POST":
                return self._plain(start_response, "405 Method Not Allowed", "POST only",
                                   [("Allow", "POST")])
            status, body = card_check_answer(environ)
            return self._send(start_response, method, body, "application/json",
                              [("Cache-Control", "no-store")], status)
        if method not in ("GET", "HEAD"):
            return self._plain(start_response, "405 Method Not Allowed", "GET or HEAD only",
                               [("Allow", "GET, HEAD")])
        if path == self.prefix:
            return self._redirect(environ, start_response)
        name = path[len(self.prefix) + 1:] or "index.html"
        if name == "config.json":
            return self._send(start_response, method, self.config,
                              "application/json", [("Cache-Control", "no-store")])
        asset = assets().get(name)
        if asset is None:
            return self._plain(start_response, "404 Not Found", "Not an inspector file")
        if _matches(environ.get("HTTP_IF_NONE_MATCH"), asset.etag):
            start_response("304 Not Modified", [("ETag", asset.etag), *self._security()])
            return [b""]
        return self._send(start_response, method, asset.body, asset.content_type,
                          [("ETag", asset.etag), ("Cache-Control", "no-cache")])

    def _security(self) -> list[tuple[str, str]]:
        return [
            ("Content-Security-Policy", self.csp),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
        ]

    def _send(self, start_response: StartResponse, method: str, body: bytes,
              content_type: str, extra: list[tuple[str, str]],
              status: str = "200 OK") -> list[bytes]:
        start_response(status, [("Content-Type", content_type),
                                  ("Content-Length", str(len(body))), *extra, *self._security()])
        return [b"" if method == "HEAD" else body]

    def _plain(self, start_response: StartResponse, status: str, text: str,
               extra: Sequence[tuple[str, str]] = ()) -> list[bytes]:
        body = text.encode()
        start_response(status, [("Content-Type", "text/plain; charset=utf-8"),
                                ("Content-Length", str(len(body))), *extra, *self._security()])
        return [body]

    def _redirect(self, environ: Mapping[str, Any],
                  start_response: StartResponse) -> list[bytes]:
        location = str(environ.get("SCRIPT_NAME") or "").rstrip("/") + self.prefix + "/"
        query = environ.get("QUERY_STRING")
        if query:
            location += "?" + str(query)
        start_response("308 Permanent Redirect", [("Location", location),
                                                  ("Content-Length", "0"), *self._security()])
        return [b""]


def _matches(if_none_match: object, etag: str) -> bool:
    """``If-None-Match`` names this ETag (or ``*``); weak tags compare equal."""
    if not isinstance(if_none_match, str):
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag in tags
