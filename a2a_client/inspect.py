"""``a2a inspect URL``: the inspector page for any agent, served on loopback with a small proxy.

::

    a2a inspect https://agents.example.com/echo/ [--port N] [--no-open] [--timeout S]
    python -m a2a_client.inspect URL ...       (the same, without the ``a2a`` script)

A browser page cannot call an agent on another origin unless the agent
allows it (CORS), and most do not. So the page is served from
``http://127.0.0.1:PORT/inspector/`` and every call goes to
``/proxy/<scheme>/<host:port>/<path>``, which this process forwards with
``requests``: streamed (SSE passes through as it arrives), hop-by-hop
headers dropped, redirects not followed, with timeouts.

It is not an open proxy. It forwards only to the agent's own URLs: its card
URL, and the interface URLs its card lists (a JSON-RPC URL exactly, an
HTTP+JSON URL and the paths below it); the card is re-read when a target
is not on the list yet. It answers only requests addressed to itself by a
loopback name, and no request another site's page makes (``Origin`` and
``Sec-Fetch-Site``).

The page's files are :mod:`a2a_client.inspector_static`, the same ones the
server's built-in inspector serves. werkzeug's server is imported when the
inspector starts, never with this module.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
import webbrowser
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import requests
from urllib3.exceptions import HTTPError as Urllib3Error

from .cards import card_url_for
from .inspector_static import InspectorSite

__all__ = [
    "AgentTargets", "InspectApp", "InspectorHandle", "InspectProxy", "main", "start_inspector",
]

log = logging.getLogger("a2a_client.inspect")

#: Seconds to wait for the agent: to connect, and between bytes of an answer.
DEFAULT_TIMEOUT = 120.0
CONNECT_TIMEOUT = 10.0
PROXY_PREFIX = "/proxy/"
#: Request bodies the proxy forwards, at most (the agent has its own, smaller, limit).
MAX_BODY = 32 * 1024 * 1024
#: A card at most this large is read to learn its interfaces.
MAX_CARD = 1024 * 1024
#: How often a miss may trigger a re-read of the card, in seconds.
CARD_RECHECK = 2.0

_HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade",
})
#: Request headers that describe the browser's visit to the inspector, not the agent call.
_NOT_FORWARDED = frozenset({"host", "content-length", "cookie", "origin", "referer",
                            "accept-encoding"})
_RESPONSE_DROPPED = frozenset({"set-cookie", "content-length"})
#: What reading an answer's body may raise: the connection broke or went silent.
_READ_ERRORS = (requests.RequestException, Urllib3Error, OSError)

StartResponse = Callable[..., Any]


# -- which URLs the proxy may reach -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Place:
    """A URL reduced to what is compared: scheme, host, port, path."""

    scheme: str
    host: str
    port: int
    path: str


def _place(url: str) -> _Place | None:
    """The place of an http(s) URL without user info or dot segments; None otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return None
    segments = unquote(parts.path).split("/")
    if "." in segments or ".." in segments:
        return None
    default = 443 if parts.scheme == "https" else 80
    return _Place(parts.scheme, parts.hostname.lower(), port or default, parts.path or "/")


def _interfaces(card: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(url, binding) of every interface a card lists, 1.0 and 0.3 fields alike."""
    for item in card.get("supportedInterfaces") or ():
        if isinstance(item, Mapping) and isinstance(item.get("url"), str):
            yield item["url"], str(item.get("protocolBinding") or "")
    if isinstance(card.get("url"), str):
        yield card["url"], str(card.get("preferredTransport") or "JSONRPC")
    for item in card.get("additionalInterfaces") or ():
        if isinstance(item, Mapping) and isinstance(item.get("url"), str):
            yield item["url"], str(item.get("transport") or "")


class AgentTargets:
    """The agent's own URLs: its card URL, and the JSON-RPC and HTTP+JSON URLs its card lists."""

    def __init__(self, card_url: str, read_card: Callable[[], Any]) -> None:
        place = _place(card_url)
        if place is None:
            raise ValueError(f"not an http(s) URL: {card_url!r}")
        self.card = place
        self._read_card = read_card
        self._exact: set[_Place] = set()
        self._prefixes: set[_Place] = set()
        self._checked = float("-inf")
        self._lock = threading.Lock()

    def is_card(self, url: str) -> bool:
        return _place(url) == self.card

    def allows(self, url: str) -> bool:
        """Whether ``url`` is one of the agent's; a miss re-reads the card (now and then)."""
        place = _place(url)
        if place is None:
            return False
        if self._known(place):
            return True
        with self._lock:
            if time.monotonic() - self._checked < CARD_RECHECK:
                return False
            self._checked = time.monotonic()
        try:
            self.learn(self._read_card())
        except (requests.RequestException, ValueError) as exc:
            log.info("could not re-read the card: %s", exc)
        return self._known(place)

    def learn(self, card: Any) -> None:
        """Take the interface URLs from a card (parsed JSON), read through the proxy or not."""
        if not isinstance(card, Mapping):
            return
        exact: set[_Place] = set()
        prefixes: set[_Place] = set()
        for url, binding in _interfaces(card):
            place = _place(url)
            if place is None:
                continue
            if binding == "JSONRPC":
                exact.add(_without_slash(place))
            elif binding == "HTTP+JSON":
                prefixes.add(_without_slash(place))
        with self._lock:
            self._exact, self._prefixes = exact, prefixes

    def _known(self, place: _Place) -> bool:
        if place == self.card or _without_slash(place) in self._exact:
            return True
        return any(_below(place, base) for base in self._prefixes)


def _without_slash(place: _Place) -> _Place:
    return _Place(place.scheme, place.host, place.port, place.path.rstrip("/") or "/")


def _below(place: _Place, base: _Place) -> bool:
    if (place.scheme, place.host, place.port) != (base.scheme, base.host, base.port):
        return False
    root = base.path.rstrip("/")
    return place.path.rstrip("/") == root or place.path.startswith(root + "/")


# -- the proxy ----------------------------------------------------------------------------


class InspectProxy:
    """Forwards ``/proxy/<scheme>/<host>/<path>`` to the agent, if the target is the agent's."""

    def __init__(self, targets: AgentTargets, *, timeout: float = DEFAULT_TIMEOUT,
                 session: requests.Session | None = None) -> None:
        self.targets = targets
        self.timeout = (min(CONNECT_TIMEOUT, timeout), timeout)
        self.session = session or requests.Session()
        self.session.trust_env = False  # no proxy or .netrc from the environment in between

    def __call__(self, environ: Mapping[str, Any],
                 start_response: StartResponse) -> Iterable[bytes]:
        target = proxy_target(environ)
        if target is None:
            return _text(start_response, "404 Not Found", "expected /proxy/<scheme>/<host>/<path>")
        if not self.targets.allows(target):
            return _text(start_response, "403 Forbidden",
                         f"not one of the agent's URLs (its card and interfaces): {target}")
        body, too_large = _read_body(environ)
        if too_large:
            return _text(start_response, "413 Content Too Large", "request body too large")
        method = str(environ.get("REQUEST_METHOD") or "GET").upper()
        try:
            upstream = self.session.request(
                method, target, headers=forwarded_request_headers(environ), data=body or None,
                stream=True, timeout=self.timeout, allow_redirects=False)
        except requests.Timeout as exc:
            return _text(start_response, "504 Gateway Timeout", f"the agent did not answer: {exc}")
        except requests.RequestException as exc:
            return _text(start_response, "502 Bad Gateway", f"could not reach the agent: {exc}")
        headers = forwarded_response_headers(upstream.headers.items())
        status = f"{upstream.status_code} {upstream.reason or ''}".strip()
        if self.targets.is_card(target) and upstream.status_code == 200:
            return self._card(upstream, status, headers, start_response)
        length = upstream.headers.get("Content-Length")
        if length is not None:
            headers.append(("Content-Length", length))
        start_response(status, headers)
        return _Relay(upstream)

    def _card(self, upstream: requests.Response, status: str, headers: list[tuple[str, str]],
              start_response: StartResponse) -> Iterable[bytes]:
        """A card passes whole, and the proxy learns the interfaces it lists."""
        try:
            body = upstream.raw.read(MAX_CARD + 1, decode_content=False)
        except _READ_ERRORS as exc:
            return _text(start_response, "502 Bad Gateway", f"the card could not be read: {exc}")
        finally:
            upstream.close()
        if len(body) > MAX_CARD:
            return _text(start_response, "502 Bad Gateway", f"the card is over {MAX_CARD} bytes")
        if "Content-Encoding" not in upstream.headers:
            try:
                self.targets.learn(json.loads(body))
            except ValueError:
                pass
        start_response(status, [*headers, ("Content-Length", str(len(body)))])
        return [body]


def proxy_target(environ: Mapping[str, Any]) -> str | None:
    """The agent URL a ``/proxy/<scheme>/<host>/<path>?<query>`` request names, as sent.

    Read from the raw request URI when the server gives it, so escapes in
    the path (``%2F`` in a task id) reach the agent unchanged.
    """
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if not isinstance(raw, str) or not raw.startswith("/"):
        query = environ.get("QUERY_STRING")
        raw = quote(str(environ.get("PATH_INFO") or "")) + (f"?{query}" if query else "")
    path, sep, query = raw.partition("?")
    if not path.startswith(PROXY_PREFIX):
        return None
    scheme, _, rest = path[len(PROXY_PREFIX):].partition("/")
    host, _, tail = rest.partition("/")
    if scheme not in ("http", "https") or not host:
        return None
    return f"{scheme}://{host}/{tail}{sep}{query}"


def _dropped_by_connection(value: str | None) -> set[str]:
    """Headers a ``Connection`` header names are hop-by-hop too (RFC 9110 §7.6.1)."""
    return {token.strip().lower() for token in (value or "").split(",") if token.strip()}


def forwarded_request_headers(environ: Mapping[str, Any]) -> dict[str, str]:
    """The browser's headers for the agent: no hop-by-hop, cookie, origin or fetch metadata."""
    dropped = _HOP_BY_HOP | _NOT_FORWARDED | _dropped_by_connection(environ.get("HTTP_CONNECTION"))
    headers = {"Accept-Encoding": "identity"}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:].replace("_", "-").title()
        elif key == "CONTENT_TYPE" and value:
            name = "Content-Type"
        else:
            continue
        lowered = name.lower()
        if lowered in dropped or lowered.startswith("sec-"):
            continue
        headers[name] = str(value)
    return headers


def forwarded_response_headers(items: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The agent's headers for the browser: no hop-by-hop, no cookie, no length (set apart)."""
    pairs = list(items)
    connection = next((value for name, value in pairs if name.lower() == "connection"), None)
    dropped = _HOP_BY_HOP | _RESPONSE_DROPPED | _dropped_by_connection(connection)
    return [(name, value) for name, value in pairs if name.lower() not in dropped]


class _Relay:
    """The agent's body, passed on as it arrives (SSE included); close() hangs up upstream."""

    def __init__(self, upstream: requests.Response) -> None:
        self.upstream = upstream

    def __iter__(self) -> Iterator[bytes]:
        try:
            while True:
                chunk = _read_some(self.upstream)
                if not chunk:
                    return
                yield chunk
        except _READ_ERRORS as exc:
            log.info("the agent's answer broke off: %s", exc)
        finally:
            self.upstream.close()

    def close(self) -> None:
        self.upstream.close()


def _read_some(upstream: requests.Response, size: int = 65536) -> bytes:
    """What has arrived of the body, undecoded (up to ``size``); b"" at its end."""
    raw = upstream.raw
    read1 = getattr(raw, "read1", None)
    if read1 is not None:
        return bytes(read1(size, decode_content=False))
    return bytes(raw.read(size, decode_content=False))


def _read_body(environ: Mapping[str, Any]) -> tuple[bytes, bool]:
    stream = environ.get("wsgi.input")
    if stream is None:
        return b"", False
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return b"", False
    if length > MAX_BODY:
        return b"", True
    if length:
        return stream.read(length), False
    if environ.get("wsgi.input_terminated"):
        data = stream.read(MAX_BODY + 1)
        return (b"", True) if len(data) > MAX_BODY else (data, False)
    return b"", False


def _text(start_response: StartResponse, status: str, text: str) -> list[bytes]:
    body = text.encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"),
                            ("Content-Length", str(len(body))), ("X-A2A-Inspect", "proxy")])
    return [body]


# -- the local site -----------------------------------------------------------------------


class InspectApp:
    """The loopback site: ``/inspector/`` (the page), ``/proxy/…``; ``/`` redirects to the page."""

    def __init__(self, agent_url: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.agent_url = agent_url
        self.card_url = card_url_for(agent_url)
        self.allowed_hosts: set[str] = set()
        self.proxy = InspectProxy(AgentTargets(self.card_url, self._read_card), timeout=timeout)
        self.site = InspectorSite({"agentUrl": agent_url, "cardUrl": self.card_url,
                                   "proxy": PROXY_PREFIX})

    def listen_on(self, port: int) -> None:
        """Accept requests addressed to this port by a loopback name only."""
        names = ("127.0.0.1", "localhost", "[::1]")
        self.allowed_hosts = {f"{name}:{port}" for name in names}
        if port == 80:
            self.allowed_hosts.update(names)

    def _read_card(self) -> Any:
        response = self.proxy.session.get(self.card_url, headers={"Accept": "application/json"},
                                          timeout=self.proxy.timeout, allow_redirects=False)
        response.raise_for_status()
        return response.json()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        refusal = self._refusal(environ)
        if refusal:
            return _text(start_response, "403 Forbidden", refusal)
        path = str(environ.get("PATH_INFO") or "/")
        if path.startswith(PROXY_PREFIX):
            return self.proxy(environ, start_response)
        if self.site.handles(path):
            return self.site(environ, start_response)
        if path == "/":
            start_response("302 Found", [("Location", "/inspector/"), ("Content-Length", "0")])
            return [b""]
        return _text(start_response, "404 Not Found", "the inspector is at /inspector/")

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


def start_inspector(agent_url: str, *, port: int = 0,
                    timeout: float = DEFAULT_TIMEOUT) -> InspectorHandle:
    """Serve the inspector for ``agent_url`` on 127.0.0.1:``port`` (0: any), in a thread."""
    from werkzeug.serving import make_server  # the server only when an inspector runs

    app = InspectApp(agent_url, timeout=timeout)
    server = make_server("127.0.0.1", port, app, threaded=True)
    bound = server.socket.getsockname()[1]
    app.listen_on(bound)
    thread = threading.Thread(target=server.serve_forever, name=f"a2a-inspect-{bound}",
                              kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    return InspectorHandle(f"http://127.0.0.1:{bound}/inspector/", app, server, thread)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="a2a inspect",
        description="Open the A2A inspector page for an agent (served on loopback, with a proxy).")
    parser.add_argument("url", help="the agent's base URL, or its card URL (…/agent-card.json)")
    parser.add_argument("--port", type=int, default=0, help="local port (default: any free one)")
    parser.add_argument("--no-open", action="store_true", help="do not open a browser")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds to wait for the agent (default {DEFAULT_TIMEOUT:g})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``a2a inspect``: serve until Ctrl-C; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    parts = urlsplit(args.url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        print(f"a2a inspect: not an http(s) URL: {args.url!r}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535 or args.timeout <= 0:
        print("a2a inspect: --port must be 0-65535 and --timeout positive", file=sys.stderr)
        return 2
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    try:
        handle = start_inspector(args.url, port=args.port, timeout=args.timeout)
    except OSError as exc:
        print(f"a2a inspect: cannot listen on port {args.port}: {exc}", file=sys.stderr)
        return 5
    print(f"A2A inspector for {args.url} at {handle.url} (Ctrl-C stops it)", flush=True)
    if not args.no_open:
        webbrowser.open(handle.url)
    try:
        while handle.thread.is_alive():
            handle.thread.join(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        handle.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
