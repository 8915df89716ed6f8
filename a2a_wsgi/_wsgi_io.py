"""Between a WSGI environ and the core's HttpRequest/HttpResponse.

The body is read here, so an over-long chunked body is refused rather than
silently truncated; a streamed response body is wrapped so the server's
``close()`` (on a disconnect too) stops the producer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl

from a2a_core._closing import ClosingIterator
from a2a_core._http import Headers, HttpResponse

__all__ = [
    "StartResponse",
    "card_query",
    "plain",
    "read_body",
    "request_headers",
    "respond",
]

StartResponse = Callable[..., Any]
_READ_SIZE = 65536
#: How much of a refused body is read and dropped, so the connection can serve the next
#: request: a server answers keep-alive, and an unread body left on the socket would be
#: taken for the next request's start (or make the server close under the client's feet).
DRAIN_BYTES = 16 * 1024 * 1024


def card_query(environ: Mapping[str, Any]) -> dict[str, str]:
    """A card GET's query (``?A2A-Version=1.0``); the usual GET has none to parse."""
    query = environ.get("QUERY_STRING")
    return dict(parse_qsl(query)) if query else {}


def respond(response: HttpResponse, method: str,
             start_response: StartResponse) -> Iterable[bytes]:
    """Write ``response``: a whole body with its length, a stream closing its producer.

    A known length spares the server chunked framing (and the client a guess); not on
    HEAD, whose body is not sent, nor on 304, whose length would have to be the 200's
    (RFC 9110 §8.6).
    """
    status, body = response.status, response.body
    if isinstance(body, bytes):
        if method == "HEAD" or status == 304:
            start_response(_STATUS_LINES.get(status) or _status_line(status),
                           list(response.headers))
            return [b""]
        start_response(_STATUS_LINES.get(status) or _status_line(status),
                       [*response.headers, ("Content-Length", str(len(body)))])
        return [body]
    start_response(_status_line(status), list(response.headers))
    if isinstance(body, ClosingIterator):
        return body  # closes its producer already (a wrapper less per held stream)
    return ClosingIterator(body)

def read_body(environ: Mapping[str, Any], limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of body, and whether there was more.

    A declared Content-Length over the limit is refused, and read and dropped
    when it is at most :data:`DRAIN_BYTES`. Without one (chunked), the stream
    is read up to limit + 1 bytes only when the server says it terminates
    (``wsgi.input_terminated``), and the rest of a refused one read and dropped
    up to :data:`DRAIN_BYTES`; reading it otherwise could block forever, so
    such a body is taken as empty.
    """
    stream = environ.get("wsgi.input")
    declared = environ.get("CONTENT_LENGTH") or ""
    if stream is None:
        return b"", False
    if declared.strip():
        try:
            length = int(declared)
        except ValueError:
            return b"", False
        if length > limit:
            if length <= DRAIN_BYTES:
                _drop(stream, length)
            return b"", True
        return _read_up_to(stream, length), False
    if not environ.get("wsgi.input_terminated"):
        return b"", False
    data = _read_up_to(stream, limit + 1)
    if len(data) > limit:
        _drop(stream, DRAIN_BYTES)
        return b"", True
    return data, False


def _drop(stream: Any, size: int) -> None:
    """Read and forget up to ``size`` bytes (EOF first, in the usual case)."""
    remaining = size
    try:
        while remaining > 0:
            chunk = stream.read(min(remaining, _READ_SIZE))
            if not chunk:
                return
            remaining -= len(chunk)
    except Exception:  # the client went away, or the server's reader refused the framing
        return


def _read_up_to(stream: Any, size: int) -> bytes:
    """Read until ``size`` bytes or EOF (``read(n)`` may return less than n)."""
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = stream.read(min(remaining, _READ_SIZE))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def request_headers(environ: Mapping[str, Any]) -> Headers:
    """Request headers back from their CGI spelling (HTTP_ACCEPT -> Accept)."""
    # Built as Headers holds them (lower-case name -> values), in one pass.
    items: dict[str, list[str]] = {}
    for key, value in environ.items():
        if key[:5] == "HTTP_":  # (a slice, not startswith: the environ has many keys)
            name = key[5:].replace("_", "-").lower()
            if name in items:  # (two spellings of one name: kept in order, as Headers does)
                items[name].append(str(value))
            else:
                items[name] = [str(value)]
    for key, name in _CGI_HEADERS:
        if key in environ and environ[key]:
            items.setdefault(name, []).append(str(environ[key]))
    return Headers.of_lowercase(items)


#: The request headers CGI names without HTTP_, and their names.
_CGI_HEADERS = (("CONTENT_TYPE", "content-type"), ("CONTENT_LENGTH", "content-length"))

def plain(status: int, text: str, start_response: StartResponse) -> list[bytes]:
    body = text.encode()
    start_response(_status_line(status), [("Content-Type", "text/plain; charset=utf-8"),
                                          ("Content-Length", str(len(body)))])
    return [body]


def _status_line(status: int) -> str:
    line = _STATUS_LINES.get(status)
    return line if line is not None else f"{status} Unknown"


#: "200 OK" and the like, for every status HTTPStatus knows (worked out once).
_STATUS_LINES: dict[int, str] = {s.value: f"{s.value} {s.phrase}" for s in HTTPStatus}
