"""The client's own error family, beside the core's :class:`~a2a_core.errors.RPCError` tree.

::

    A2AError                       a2a_core.errors: ``except A2AError`` catches all we raise
    ├── RPCError …                 a JSON-RPC error answer (the same classes as the server's)
    ├── RemoteProtocolError        the agent answered, but not with valid A2A (bad JSON, bad SSE)
    └── ClientError                this module
        ├── TransportError         the HTTP exchange failed (raised ``from`` the requests error)
        │   ├── ConnectError       DNS, refused, TLS, reset before a response
        │   └── TimeoutException   a default or explicit timeout expired
        │       ├── ConnectTimeout
        │       └── ReadTimeout    includes a stream that stayed idle too long
        ├── HTTPStatusError        non-2xx without a JSON-RPC body (status_code, headers, body, url)
        └── WaitTimeout            wait()/send_and_wait() ran out of budget (the last task in .task)

Names follow httpx (``TimeoutException`` does not shadow the builtin ``TimeoutError``).
Messages never contain request header values: those may hold expanded secrets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from a2a_core.errors import A2AError
from a2a_core.models import Task

from ._client_trace import safe_url

__all__ = [
    "ClientError",
    "TransportError",
    "ConnectError",
    "TimeoutException",
    "ConnectTimeout",
    "ReadTimeout",
    "HTTPStatusError",
    "WaitTimeout",
]


class ClientError(A2AError):
    """Root of the errors only the client raises."""


class TransportError(ClientError):
    """The HTTP exchange failed; ``__cause__`` is the requests exception."""


class ConnectError(TransportError):
    """No connection could be made, or it broke before a response arrived."""


class TimeoutException(TransportError):
    """A timeout expired. We always set one, so this replaces an infinite hang."""


class ConnectTimeout(TimeoutException):
    """Connecting took longer than the connect timeout."""


class ReadTimeout(TimeoutException):
    """The server sent nothing for longer than the read (or stream idle) timeout."""


class _Answer(Protocol):
    """What :meth:`HTTPStatusError.from_reply` reads of a transport reply."""

    status_code: int
    headers: Mapping[str, str]
    url: str


class HTTPStatusError(ClientError):
    """A non-2xx answer that is not a JSON-RPC response (a proxy page, a 401, a 404…)."""

    #: At most this many bytes of the body are kept in the message.
    MESSAGE_BODY_LIMIT = 200

    def __init__(self, status_code: int, headers: Mapping[str, str], body: bytes,
                 url: str | None = None) -> None:
        self.status_code = status_code
        self.headers = dict(headers)
        self.body = body
        #: The URL that answered (after redirects; no query or credentials): a card may send
        #: the calls to another URL than the one the caller gave.
        self.url = url
        text = body[: self.MESSAGE_BODY_LIMIT].decode("utf-8", "replace")
        super().__init__(f"HTTP {status_code}: {text}")

    @classmethod
    def from_reply(cls, reply: _Answer, body: bytes) -> HTTPStatusError:
        """The error for ``reply``, naming the URL that answered (no query, no userinfo)."""
        return cls(reply.status_code, reply.headers, body, url=safe_url(reply.url))


class WaitTimeout(ClientError):
    """Polling hit its overall budget before a terminal or interrupted state.

    ``task`` is the last snapshot seen, so the caller can decide to cancel it or keep waiting.
    """

    def __init__(self, task: Task, elapsed: float) -> None:
        self.task = task
        self.elapsed = elapsed
        super().__init__(f"task {task.id} still {task.status.state.value} after {elapsed:.1f}s")
