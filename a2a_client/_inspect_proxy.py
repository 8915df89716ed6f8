"""The ``a2a inspect`` proxy: ``/proxy/<scheme>/<host>/<path>`` forwarded to the agent.

Streamed (SSE passes through as it arrives), hop-by-hop headers dropped,
redirects not followed, with timeouts; only to the URLs
:class:`~a2a_client._inspect_targets.AgentTargets` allows, never to a
link-local or metadata address, and with credentials only to the origin the
user typed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import requests
from urllib3.exceptions import HTTPError as Urllib3Error

from ._inspect_addresses import CheckedAdapter
from ._inspect_targets import AgentTargets

__all__ = [
    "CONNECT_TIMEOUT", "DEFAULT_TIMEOUT", "MAX_BODY", "MAX_CARD", "PROXY_PREFIX", "InspectProxy",
    "StartResponse", "forwarded_request_headers", "forwarded_response_headers", "proxy_target",
    "read_limited", "reply",
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

_HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade",
})
#: Request headers that describe the browser's visit to the inspector, not the agent call.
_NOT_FORWARDED = frozenset({"host", "content-length", "cookie", "origin", "referer",
                            "accept-encoding"})
_RESPONSE_DROPPED = frozenset({"set-cookie", "content-length"})
#: What goes to an origin allowed by flag: the protocol's own headers, no credential of any kind.
_TO_OTHER_ORIGINS = frozenset({"accept", "accept-encoding", "accept-language", "content-type",
                               "a2a-version", "a2a-extensions", "x-a2a-extensions",
                               "last-event-id", "if-none-match", "if-modified-since",
                               "cache-control", "user-agent"})
#: What reading an answer's body may raise: the connection broke or went silent.
_READ_ERRORS = (requests.RequestException, Urllib3Error, OSError)

StartResponse = Callable[..., Any]


class InspectProxy:
    """Forwards ``/proxy/<scheme>/<host>/<path>`` to the agent, if the target is the agent's."""

    def __init__(self, targets: AgentTargets, *, timeout: float = DEFAULT_TIMEOUT,
                 session: requests.Session | None = None) -> None:
        self.targets = targets
        self.timeout = (min(CONNECT_TIMEOUT, timeout), timeout)
        self.session = session or requests.Session()
        self.session.trust_env = False  # no proxy or .netrc from the environment in between
        for prefix in ("http://", "https://"):  # every connection judged by the peer it reached
            self.session.mount(prefix, CheckedAdapter())

    def __call__(self, environ: Mapping[str, Any],
                 start_response: StartResponse) -> Iterable[bytes]:
        target = proxy_target(environ)
        if target is None:
            return reply(start_response, "404 Not Found", "expected /proxy/<scheme>/<host>/<path>")
        refusal = self.targets.refusal(target)
        if refusal is not None:
            return reply(start_response, "403 Forbidden", refusal)
        body, too_large = _read_body(environ)
        if too_large:
            return reply(start_response, "413 Content Too Large", "request body too large")
        method = str(environ.get("REQUEST_METHOD") or "GET").upper()
        try:
            upstream = self.session.request(
                method, target, data=body or None,
                headers=forwarded_request_headers(
                    environ, credentials=self.targets.is_typed_origin(target)),
                stream=True, timeout=self.timeout, allow_redirects=False)
        except requests.Timeout as exc:
            return reply(start_response, "504 Gateway Timeout", f"the agent did not answer: {exc}")
        except requests.RequestException as exc:
            return reply(start_response, "502 Bad Gateway", f"could not reach the agent: {exc}")
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
            body = read_limited(upstream, MAX_CARD)
        except _READ_ERRORS as exc:
            return reply(start_response, "502 Bad Gateway", f"the card could not be read: {exc}")
        except ValueError as exc:
            return reply(start_response, "502 Bad Gateway", str(exc))
        if "Content-Encoding" not in upstream.headers:
            try:
                self.targets.learn(json.loads(body))
            except ValueError:
                pass
        start_response(status, [*headers, ("Content-Length", str(len(body)))])
        return [body]


def read_limited(upstream: requests.Response, limit: int) -> bytes:
    """The whole body, undecoded, if it is at most ``limit`` bytes; ValueError if larger."""
    try:
        body = upstream.raw.read(limit + 1, decode_content=False)
    finally:
        upstream.close()
    if len(body) > limit:
        raise ValueError(f"the card is over {limit} bytes")
    return bytes(body)


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


def forwarded_request_headers(environ: Mapping[str, Any], *,
                              credentials: bool = True) -> dict[str, str]:
    """The browser's headers for the agent: no hop-by-hop, cookie, origin or fetch metadata.

    Without ``credentials`` (another origin than the one typed), only the
    protocol's own headers: an ``Authorization`` or API key typed into the
    page is for the agent the user named.
    """
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
        if not credentials and lowered not in _TO_OTHER_ORIGINS:
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


def reply(start_response: StartResponse, status: str, text: str) -> list[bytes]:
    body = text.encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"),
                            ("Content-Length", str(len(body))), ("X-A2A-Inspect", "proxy")])
    return [body]
