"""The ``a2a inspect`` loopback site (the page and the proxy) and the thread that serves it.

werkzeug's server is imported when the inspector starts, never with this module.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from a2a_inspector import InspectorSite

from ._cards import card_url_for
from ._inspect_proxy import (
    DEFAULT_TIMEOUT,
    MAX_CARD,
    PROXY_PREFIX,
    InspectProxy,
    StartResponse,
    read_limited,
    reply,
)
from ._inspect_targets import AgentTargets

__all__ = ["InspectApp", "InspectorHandle", "start_inspector"]


class InspectApp:
    """The loopback site: ``/inspector/`` (the page), ``/proxy/…``; ``/`` redirects to the page."""

    def __init__(self, agent_url: str, *, timeout: float = DEFAULT_TIMEOUT,
                 allow_origins: Iterable[str] = ()) -> None:
        self.agent_url = agent_url
        self.card_url = card_url_for(agent_url)
        self.allowed_hosts: set[str] = set()
        targets = AgentTargets(self.card_url, self._read_card, allow_origins=allow_origins)
        self.proxy = InspectProxy(targets, timeout=timeout)
        self.site = InspectorSite({"agentUrl": agent_url, "cardUrl": self.card_url,
                                   "proxy": PROXY_PREFIX})

    def listen_on(self, port: int) -> None:
        """Accept requests addressed to this port by a loopback name only."""
        names = ("127.0.0.1", "localhost", "[::1]")
        self.allowed_hosts = {f"{name}:{port}" for name in names}
        if port == 80:
            self.allowed_hosts.update(names)

    def _read_card(self) -> Any:
        response = self.proxy.session.get(self.card_url, headers={"Accept": "application/json",
                                                                  "Accept-Encoding": "identity"},
                                          timeout=self.proxy.timeout, allow_redirects=False,
                                          stream=True)
        try:
            response.raise_for_status()
            body = read_limited(response, MAX_CARD)  # a huge card is refused, not held
        finally:
            response.close()
        return json.loads(body)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        refusal = self._refusal(environ)
        if refusal:
            return reply(start_response, "403 Forbidden", refusal)
        path = str(environ.get("PATH_INFO") or "/")
        if path.startswith(PROXY_PREFIX):
            return self.proxy(environ, start_response)
        if self.site.handles(path):
            return self.site(environ, start_response)
        if path == "/":
            start_response("302 Found", [("Location", "/inspector/"), ("Content-Length", "0")])
            return [b""]
        return reply(start_response, "404 Not Found", "the inspector is at /inspector/")

    def _refusal(self, environ: Mapping[str, Any]) -> str | None:
        """Why a request is refused: addressed to another name, or sent by another site."""
        host = str(environ.get("HTTP_HOST") or "").lower()
        if host not in self.allowed_hosts:
            return f"this inspector answers to {sorted(self.allowed_hosts)} only"
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and origin != f"http://{host}":
            return "requests from other sites' pages are refused"
        if environ.get("HTTP_SEC_FETCH_SITE") not in (None, "same-origin", "none"):
            return "requests from other sites' pages are refused"
        return None


@dataclass
class InspectorHandle:
    """A running ``a2a inspect`` server; ``stop()`` shuts it down and frees the port."""

    url: str
    app: InspectApp = field(repr=False)
    server: Any = field(repr=False)
    thread: threading.Thread = field(repr=False)

    def stop(self) -> None:
        if self.thread.is_alive():
            self.server.shutdown()
            self.thread.join()
        self.server.server_close()

    def __enter__(self) -> InspectorHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_inspector(agent_url: str, *, port: int = 0, timeout: float = DEFAULT_TIMEOUT,
                    allow_origins: Iterable[str] = ()) -> InspectorHandle:
    """Serve the inspector for ``agent_url`` on 127.0.0.1:``port`` (0: any), in a thread.

    The proxy forwards to ``agent_url``'s origin only, and to ``allow_origins``
    (``scheme://host[:port]``) without credentials; ValueError for a refused URL.
    """
    from werkzeug.serving import make_server  # the server only when an inspector runs

    app = InspectApp(agent_url, timeout=timeout, allow_origins=allow_origins)
    server = make_server("127.0.0.1", port, app, threaded=True)
    bound = server.socket.getsockname()[1]
    app.listen_on(bound)
    thread = threading.Thread(target=server.serve_forever, name=f"a2a-inspect-{bound}",
                              kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    return InspectorHandle(f"http://127.0.0.1:{bound}/inspector/", app, server, thread)
