"""The only module that sends with ``requests``: one request in, one :class:`Reply` out
(:mod:`a2a_client._reply` reads it, within bounds, and maps requests' errors to ours).

These rules live here and nowhere else:

* **Custom headers are templates.** ``${NAME}`` placeholders are expanded from the
  environment at every request (a rotated token is picked up on the next call) and
  the expanded values are never stored, logged or put in a message.
* **Redirects are ours.** requests strips only ``Authorization`` when a redirect
  leaves the host; we turn its redirect handling off and follow redirects
  ourselves: same-origin hops keep every header, a hop to another origin carries
  only the protocol headers (no custom headers, no session headers, no session
  auth, no cookies).
* **The read timeout bounds a header block.** On the client's own session a server
  cannot trickle its headers for longer (:mod:`a2a_client._deadlines`).
* **Credentials stay home.** The client's ``auth`` (a requests ``AuthBase``) is
  applied only to a request whose origin is one of the agent's own
  (:attr:`Transport.auth_origins`), and never to a hop that leaves it.

With OpenTelemetry installed, each request is a client span (current while it
is sent, so an instrumented ``requests`` nests under it) and carries its
W3C ``traceparent``; the span ends when the answer's headers arrive.
"""

from __future__ import annotations

import http.client
import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.auth import AuthBase
from urllib3.exceptions import ConnectTimeoutError, ReadTimeoutError

from ._client_trace import client_span, otel_trace, safe_url, trace_headers, tracer
from ._deadlines import DeadlineAdapter, header_deadline
from ._errors import TransportError
from ._reply import READ_CHUNK, DeadlineExceeded, Reply, map_errors

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_MAX_BODY",
    "DeadlineExceeded",
    "READ_CHUNK",
    "Timeout",
    "Reply",
    "Transport",
    "expand_headers",
    "map_errors",
    "origin",
]

log = logging.getLogger("a2a_client")

#: (connect, read) seconds. Never None: requests' default is to wait forever.
Timeout = tuple[float, float]
DEFAULT_TIMEOUT: Timeout = (5.0, 60.0)
#: Largest non-streaming body we read (a hostile agent cannot make us buffer gigabytes).
DEFAULT_MAX_BODY = 32 * 1024 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def expand_headers(templates: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """Fill ``${NAME}`` placeholders from ``environ`` (missing names become "").

    Only the braced form is expanded (a bare ``$NAME`` stays literal), and a value that
    would contain CR, LF or NUL after expansion is refused: header injection. The error
    names the header, never its value.
    """
    out: dict[str, str] = {}
    for name, template in templates.items():
        value = _PLACEHOLDER.sub(lambda m: environ.get(m.group(1), ""), template)
        if any(c in value for c in "\r\n\0"):
            raise ValueError(f"header {name!r} contains a line break or NUL after expansion")
        out[name] = value
    return out


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the default port filled in: RFC 6454's origin."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


#: What a server closing a (pooled) connection under a request looks like, before any answer.
_DROPPED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
            ConnectionAbortedError)


def dropped_unanswered(exc: BaseException) -> bool:
    """Whether the connection broke before any response byte (not a refusal or a timeout)."""
    seen: list[BaseException] = [exc]
    for _ in range(32):  # exceptions wrap a few levels deep; never loop on a cycle
        if not seen:
            break
        item = seen.pop()
        if isinstance(item, ReadTimeoutError | ConnectTimeoutError):
            return False
        if isinstance(item, _DROPPED):
            return True
        nested = [arg for arg in item.args if isinstance(arg, BaseException)]
        nested += [n for n in (item.__cause__, getattr(item, "reason", None))
                   if isinstance(n, BaseException)]
        seen.extend(nested)
    return False


def _own_session() -> requests.Session:
    """A session whose connections bound the wait for a header block (:mod:`.deadlines`)."""
    session = requests.Session()
    for prefix in ("http://", "https://"):
        session.mount(prefix, DeadlineAdapter())
    return session


class Transport:
    """Sends requests through a borrowed or owned :class:`requests.Session`.

    :param session: the caller's session (its adapters, ``auth``, proxies, cookies are
        used for same-origin requests); never closed by us. ``None`` makes a private one.
    :param headers: custom header *templates* (``${NAME}`` expanded per request).
    :param environ: where ``${NAME}`` is looked up; ``os.environ`` at call time by default.
    :param auth: credentials for the agent, sent only to ``auth_origins``.
    :param auth_origins: URLs (or origins) whose origin may receive ``auth``.
    """

    def __init__(
        self,
        session: requests.Session | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
        max_redirects: int = 5,
        max_body: int = DEFAULT_MAX_BODY,
        auth: AuthBase | None = None,
        auth_origins: Iterable[str] = (),
    ) -> None:
        self._owned = session is None
        self._session = session if session is not None else _own_session()
        self._templates = dict(headers or {})
        self._environ = environ
        self.max_redirects = max_redirects
        self.max_body = max_body
        self.auth = auth
        #: The origins ``auth`` is sent to: (scheme, host, port) as :func:`origin` gives.
        self.auth_origins: set[tuple[str, str, int | None]] = set()
        for url in auth_origins:
            self.trust(url)
        self._warned: set[tuple[str, str, int | None]] = set()

    def __repr__(self) -> str:
        # Header names only: values may be secrets, even before expansion.
        return f"Transport(headers={sorted(self._templates)}, auth={type(self.auth).__name__})"

    def trust(self, url: str) -> None:
        """Let ``url``'s origin receive the client's ``auth``."""
        self.auth_origins.add(origin(url))

    def _auth_for(self, url: str) -> AuthBase | None:
        """The client's auth if ``url`` is on one of the agent's origins, else None."""
        if self.auth is None:
            return None
        where = origin(url)
        if where in self.auth_origins:
            return self.auth
        if where not in self._warned:
            self._warned.add(where)
            log.warning("credentials not sent to %s://%s:%s: not one of the agent's origins "
                        "(add it with auth_origins=)", *where)
        return None

    def close(self) -> None:
        """Close the session if we made it."""
        if self._owned:
            self._session.close()

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        timeout: Timeout,
        body: bytes | None = None,
        retry: bool | None = None,
    ) -> Reply:
        """Send one request (following redirects by our rules); the body is not read yet.

        ``headers`` are the protocol headers (A2A-Version, Content-Type…), sent on every
        hop; the custom headers go only to the origin of ``url``. ``retry``: whether a
        repeat is harmless (None: for GET and HEAD), so a request the server dropped
        before answering (a pooled connection it closed for idleness) is sent once more.
        """
        again = method in ("GET", "HEAD") if retry is None else retry
        if tracer is None:
            return self._request(method, url, headers, timeout, body, again)
        with client_span(method, url, body) as span:
            # A trace the caller names in its own headers is theirs to carry: ours does
            # not replace it.
            own = {name.lower() for name in self._templates}
            traced = {**headers, **{name: value for name, value in trace_headers(span).items()
                                    if name not in own}}
            reply = self._request(method, url, traced, timeout, body, again)
            span.set_attribute("http.response.status_code", reply.status_code)
            if reply.status_code >= 400:
                span.set_status(otel_trace.Status(otel_trace.StatusCode.ERROR,
                                                  f"HTTP {reply.status_code}"))
            return reply

    def _request(self, method: str, url: str, headers: Mapping[str, str], timeout: Timeout,
                 body: bytes | None, retry: bool = False) -> Reply:
        custom = expand_headers(
            self._templates, os.environ if self._environ is None else self._environ
        )
        home = origin(url)
        auth = self._auth_for(url)
        for _ in range(self.max_redirects + 1):
            hop_auth = auth if origin(url) == home else None
            response = self._send(
                method, url, headers, custom, body, timeout, origin(url) == home, hop_auth, retry
            )
            location = response.headers.get("Location")
            if response.status_code not in _REDIRECTS or not location:
                return Reply(response, self.max_body, timeout[1])
            response.close()
            log.debug("redirect %s -> %s", response.status_code, safe_url(location))
            url = urljoin(response.url or url, location)
            if response.status_code == 303:
                method, body = "GET", None
        raise TransportError(f"more than {self.max_redirects} redirects")

    def _send(
        self,
        method: str,
        url: str,
        protocol: Mapping[str, str],
        custom: Mapping[str, str],
        body: bytes | None,
        timeout: Timeout,
        same_origin: bool,
        auth: AuthBase | None,
        retry: bool = False,
    ) -> requests.Response:
        """One hop. Another origin gets a bare prepared request: no session state at all.

        ``auth``, when given, replaces the session's own for this hop. With ``retry``, a
        request the server dropped before any byte of an answer is sent once more.
        """
        log.debug("%s %s", method, safe_url(url))
        options: dict[str, Any] = {"timeout": timeout, "stream": True, "allow_redirects": False}

        def hop() -> requests.Response:
            if same_origin:
                return self._session.request(
                    method, url, data=body, headers={**custom, **protocol}, auth=auth, **options
                )
            bare = requests.Request(method, url, data=body, headers=dict(protocol)).prepare()
            return self._session.send(bare, **options)

        with map_errors(), header_deadline(timeout[1]):
            try:
                return hop()
            except requests.exceptions.ConnectionError as exc:
                if not retry or not dropped_unanswered(exc):
                    raise
                log.debug("%s %s dropped before an answer (%s); sent once more",
                          method, safe_url(url), exc)
                return hop()
