"""One line per failure for the ``a2a`` command: what happened, and what to try next.

The client's exceptions carry requests' and urllib3's own wording ("Max retries
exceeded with url…", "No connection adapters were found…") and, for an HTTP error,
the start of whatever body came back. A person at a shell wants the cause in their
own terms and the next step, so each failure kind gets one sentence here; the exit
code is the documented one (:mod:`a2a_client._cli_exits`).
"""

from __future__ import annotations

import json
import socket
import ssl
from http import HTTPStatus
from urllib.parse import urlsplit

from a2a_core.errors import RemoteProtocolError, RPCError

from ._cli_exits import (
    EXIT_HTTP_STATUS,
    EXIT_PROTOCOL,
    EXIT_RPC_ERROR,
    EXIT_TRANSPORT,
    EXIT_WAIT_TIMEOUT,
)
from ._errors import (
    ConnectError,
    ConnectTimeout,
    HTTPStatusError,
    ReadTimeout,
    TimeoutException,
    TransportError,
    WaitTimeout,
)

__all__ = ["describe_failure", "url_problem"]

#: At most this many characters of an error body's detail go into the line.
DETAIL_LIMIT = 120

_TOKEN_HINT = "pass --token TOKEN (or --header 'Name: value' for another scheme)"


def url_problem(url: str) -> str | None:
    """Why ``url`` is not an agent URL the command can call, or None when it is."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.hostname:
        return None
    rest = url.split("://")[-1]
    if not rest.strip("/") or (parts.scheme in ("http", "https") and not parts.hostname):
        return f"{url!r} names no host; give the agent's URL, e.g. 'http://127.0.0.1:8000/'"
    if not parts.scheme or not parts.netloc or "://" not in url:
        return f"{url!r} is not an http(s) URL; try 'http://{rest}'"
    return f"{url!r} is not an http(s) URL: the scheme must be http or https"


def describe_failure(exc: Exception, url: str, timeout: float,
                     credentials: bool = False) -> tuple[int, str] | None:
    """The exit code and the one line for ``exc``; None for an error this does not know.

    ``url`` is the one the user gave; a failure names the URL that failed instead when
    it knows it (the card may send calls elsewhere). ``credentials``: the user passed a
    token or an Authorization header, so a 401 means they were refused.
    """
    host = urlsplit(_failed_url(exc) or url).netloc or url
    if isinstance(exc, WaitTimeout):
        return EXIT_WAIT_TIMEOUT, f"{exc}; wait longer with --wait-timeout S"
    if isinstance(exc, RPCError):
        return EXIT_RPC_ERROR, f"error {exc.code}: {exc.message}"
    if isinstance(exc, HTTPStatusError):
        return EXIT_HTTP_STATUS, _http_status(exc, exc.url or url, credentials)
    if isinstance(exc, TimeoutException):
        return EXIT_TRANSPORT, _timeout(exc, host, timeout)
    if isinstance(exc, ConnectError):
        return EXIT_TRANSPORT, _connect(exc, host)
    if isinstance(exc, TransportError):
        return EXIT_TRANSPORT, f"the request to {host} failed: {_last_line(exc)}"
    if isinstance(exc, RemoteProtocolError):
        return EXIT_PROTOCOL, (f"{host} did not answer in A2A ({exc}); check that the URL is "
                               "the agent's base URL or its card URL")
    return None


def _failed_url(exc: BaseException) -> str | None:
    """The URL of the request that failed: an HTTP error's, or the requests exception's."""
    if isinstance(exc, HTTPStatusError):
        return exc.url
    for cause in _causes(exc):
        request = getattr(cause, "request", None)
        found = getattr(request, "url", None)
        if isinstance(found, str) and found:
            return found
    return None


def _http_status(exc: HTTPStatusError, url: str, credentials: bool) -> str:
    code = exc.status_code
    try:
        reason = HTTPStatus(code).phrase
    except ValueError:
        reason = "error"
    head = f"HTTP {code} {reason} from {url}"
    detail = _body_detail(exc.body, exc.headers.get("Content-Type", ""))
    head += f" ({detail})" if detail else ""
    if code == 401:
        challenge = exc.headers.get("WWW-Authenticate", "")
        scheme = challenge.split()[0] if challenge.split() else ""
        if credentials:
            return (f"{head}: the agent refused the credentials given; check the token "
                    "(expired, mistyped, or for another agent)")
        wants = f"wants {scheme} credentials" if scheme else "wants credentials"
        return f"{head}: the agent {wants}; {_TOKEN_HINT}"
    if code == 403:
        return f"{head}: the credentials were accepted but are not allowed this call"
    if code in (404, 405, 410):
        return f"{head}: check the URL (the agent's base URL, or its card URL)"
    if code == 415:
        return f"{head}: the request needs Content-Type: application/json"
    if code == 429:
        return f"{head}: the agent is rate limiting; try again later"
    if code >= 500:
        return f"{head}: the agent (or a proxy before it) failed; try again or check its logs"
    return head


def _body_detail(body: bytes, content_type: str) -> str:
    """A short reason from an error body: a JSON message field, or the start of plain text."""
    text = body.decode("utf-8", "replace").strip()
    if not text or "html" in content_type.lower() or text.startswith("<"):
        return ""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        for key in ("message", "detail", "error_description", "error", "title"):
            found = value.get(key)
            if isinstance(found, dict):
                found = found.get("message")
            if isinstance(found, str) and found.strip():
                text = found
                break
    line = " ".join(text.split())
    return line if len(line) <= DETAIL_LIMIT else line[: DETAIL_LIMIT - 1] + "…"


def _timeout(exc: TimeoutException, host: str, timeout: float) -> str:
    if isinstance(exc, ConnectTimeout):
        return (f"connecting to {host} timed out; check the host and port, or that a firewall "
                "lets it through")
    if isinstance(exc, ReadTimeout):
        return (f"{host} sent nothing for {timeout:g}s; the agent may be busy: "
                "try a larger --timeout")
    return f"the request to {host} timed out; try a larger --timeout"


def _connect(exc: ConnectError, host: str) -> str:
    causes = _causes(exc)
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return f"cannot connect to {host}: connection refused; is the agent running there?"
    if any(isinstance(c, ssl.SSLError) for c in causes):
        return (f"the TLS handshake with {host} failed ({_last_line(exc)}); check the "
                "certificate, or whether the agent speaks http rather than https")
    names = {type(c).__name__ for c in causes}
    if "NameResolutionError" in names or any(_is_gaierror(c) for c in causes):
        return f"cannot resolve the host name in {host}; check the URL"
    if any(isinstance(c, ConnectionResetError) for c in causes) or "ProtocolError" in names:
        return (f"{host} closed the connection before answering; check that the URL's "
                "scheme and port are the agent's")
    return f"cannot connect to {host}: {_last_line(exc)}"


def _is_gaierror(cause: BaseException) -> bool:
    return isinstance(cause, socket.gaierror)


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and everything it was raised from or during, urllib3's ``reason`` included."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        todo += [item.__cause__, item.__context__]
        reason = getattr(item, "reason", None)
        todo.append(reason if isinstance(reason, BaseException) else None)
        todo += [a for a in item.args if isinstance(a, BaseException)]
    return seen


def _last_line(exc: BaseException) -> str:
    """The innermost cause's message, without urllib3's pool and retry wrapping."""
    text = str(_causes(exc)[-1]) or str(exc)
    text = text.rsplit("): ", 1)[-1] if "Failed to establish" in text else text
    return " ".join(text.split())[:DETAIL_LIMIT]
