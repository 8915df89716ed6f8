"""What :class:`~a2a_client.A2AClient` needs from a protocol binding, and what bindings share.

Two bindings carry the same operations: JSON-RPC (:class:`~a2a_client._rpc.RPCChannel`)
and HTTP+JSON (:class:`~a2a_client._rest.RestChannel`). Each turns an operation and its
request model into HTTP, and the answer back into the operation's result model or the
core's typed :class:`~a2a_core.errors.RPCError`; a stream is an SSE reply whose events
a binding-specific decoder reads. :class:`Channel` is that contract and what both share, so the
client can hold either.
"""

from __future__ import annotations

import dataclasses
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from a2a_core.extensions import format_extensions_header, parse_extensions_header
from a2a_core.models import SendMessageRequest
from a2a_core.optable import AnyOperation, OperationSpec
from a2a_core.wire import decode_result

from ._cards import Endpoint
from ._transport import Reply, Timeout, Transport

__all__ = ["AUTH_STATUSES", "Channel", "extension_headers", "echoed", "retry_safe"]

Req = TypeVar("Req")
Res = TypeVar("Res")

#: HTTP statuses that are the transport's refusal of the credentials (401, 403): both
#: bindings raise them as HTTPStatusError, whatever error body the server wrote, so a
#: caller sees one exception (with its WWW-Authenticate) over either binding.
AUTH_STATUSES = frozenset({401, 403})

def retry_safe(op: AnyOperation, request: object) -> bool:
    """Whether sending ``request`` twice is harmless, so it is sent once more when the server
    dropped it before answering (a pooled connection closed for idleness).

    The entries say which operations are ``repeatable``: the reads, the sends (the server
    answers a repeated ``messageId`` with the task it made) and the idempotent delete; not
    CancelTask (a second cancel of a canceled task is -32002) nor a config create. A
    message continuing a task is not: the server recognises a repeat only of a message
    that creates one."""
    if not op.repeatable:
        return False
    if isinstance(request, SendMessageRequest):
        return request.message.task_id is None
    return True


class Channel(ABC):
    """One binding to one endpoint: calls, streams, and what the server echoed.

    A binding writes how one request goes out (:meth:`_result` for a call,
    :meth:`open_stream` for a stream); what both do around that is here.
    """

    def __init__(
        self, transport: Transport, endpoint: Callable[[], Endpoint], extensions: Sequence[str]
    ) -> None:
        self._transport = transport
        self._endpoint = endpoint
        self.extensions = tuple(extensions)
        self._lock = threading.Lock()
        #: ``A2A-Version`` the server echoed on its last answer (None: not sent).
        self.server_version: str | None = None
        #: Extensions the server reported active on its last answer.
        self.activated_extensions: tuple[str, ...] = ()

    def call(
        self,
        op: OperationSpec[Req, Res],
        request: Req,
        timeout: Timeout,
        check: Callable[[Any], Any] | None = None,
    ) -> Res:
        """One exchange, decoded into the operation's result model; errors raise typed.

        ``check`` is called with the result's JSON before it is decoded (a card's
        signature). A malformed result raises InvalidAgentResponseError (-32006): the
        agent's fault.
        """
        value, version = self._result(op, request, timeout)
        if check is not None:
            check(value)
        return decode_result(op, value, version)

    @abstractmethod
    def open_stream(
        self, op: AnyOperation, request: Any, timeout: Timeout,
        last_event_id: str | None = None,
    ) -> Reply:
        """An SSE reply (or one JSON answer); an error answer raises here, at the call."""

    @abstractmethod
    def _result(self, op: AnyOperation, request: Any, timeout: Timeout) -> tuple[Any, str]:
        """One exchange: the result's JSON and the version it is written in."""

    def _target(self, request: Any) -> tuple[Endpoint, Any]:
        """The endpoint (resolved now) and the request with its tenant filled from it."""
        endpoint = self._endpoint()
        if endpoint.tenant and getattr(request, "tenant", "") is None:
            request = dataclasses.replace(request, tenant=endpoint.tenant)
        return endpoint, request

    def _note_echo(self, reply: Reply) -> None:
        """Keep what the server said about version and extensions."""
        version, activated = echoed(reply)
        with self._lock:
            self.server_version = version
            self.activated_extensions = activated


def extension_headers(extensions: Sequence[str], version: str) -> dict[str, str]:
    """``A2A-Extensions`` (and 0.3's ``X-A2A-Extensions``) for the requested URIs."""
    if not extensions:
        return {}
    value = format_extensions_header(extensions)
    if version == "0.3":
        return {"A2A-Extensions": value, "X-A2A-Extensions": value}
    return {"A2A-Extensions": value}


def echoed(reply: Reply) -> tuple[str | None, tuple[str, ...]]:
    """The version and the activated extensions a reply's headers report."""
    spellings = (reply.headers.get("A2A-Extensions"), reply.headers.get("X-A2A-Extensions"))
    return reply.headers.get("A2A-Version"), parse_extensions_header([v for v in spellings if v])
