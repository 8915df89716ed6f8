"""What :class:`~a2a_client.A2AClient` needs from a protocol binding, and what bindings share.

Two bindings carry the same operations: JSON-RPC (:class:`~a2a_client.rpc.RPCChannel`)
and HTTP+JSON (:class:`~a2a_client.rest.RestChannel`). Each turns an operation and its
request model into HTTP, and the answer back into the operation's result model or the
core's typed :class:`~a2a_core.errors.RPCError`; a stream is an SSE reply whose events
a binding-specific decoder reads. :class:`Channel` is that contract, so the client can
hold either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from a2a_core.extensions import format_extensions_header, parse_extensions_header
from a2a_core.methods import Operation

from .transport import Reply, Timeout

__all__ = ["AUTH_STATUSES", "RETRY_SAFE", "Channel", "extension_headers", "echoed",
           "retry_safe"]

#: HTTP statuses that are the transport's refusal of the credentials (401, 403): both
#: bindings raise them as HTTPStatusError, whatever error body the server wrote, so a
#: caller sees one exception (with its WWW-Authenticate) over either binding.
AUTH_STATUSES = frozenset({401, 403})

#: Operations a repeat cannot harm, sent once more when the server dropped the request
#: before answering (a pooled connection closed for idleness): the reads, the sends (the
#: server answers a repeated ``messageId`` with the task it made, when the message names no
#: task: see :func:`retry_safe`) and the idempotent delete. Not CancelTask (a second cancel
#: of a canceled task is -32002) nor a config create.
RETRY_SAFE = frozenset({
    Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE, Operation.GET_TASK,
    Operation.LIST_TASKS, Operation.SUBSCRIBE_TO_TASK, Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    Operation.GET_EXTENDED_AGENT_CARD,
})
_SENDS = frozenset({Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE})


def retry_safe(op: Operation, request: Any) -> bool:
    """Whether sending ``request`` twice is harmless. A message continuing a task is not:
    the server recognises a repeat only of a message that creates one."""
    if op not in RETRY_SAFE:
        return False
    if op in _SENDS:
        message = getattr(request, "message", None)
        return message is not None and getattr(message, "task_id", None) is None
    return True


class Channel(Protocol):
    """One binding to one endpoint: calls, streams, and what the server echoed."""

    @property
    def server_version(self) -> str | None:
        """``A2A-Version`` the server echoed on its last answer (None: not sent)."""
        ...

    @property
    def activated_extensions(self) -> tuple[str, ...]:
        """Extensions the server reported active on its last answer."""
        ...

    def call(
        self,
        op: Operation,
        request: Any,
        timeout: Timeout,
        check: Callable[[Any], Any] | None = None,
    ) -> Any:
        """One exchange, decoded into the operation's result model; errors raise typed.

        ``check`` is called with the result's JSON before it is decoded.
        """
        ...

    def open_stream(
        self, op: Operation, request: Any, timeout: Timeout, last_event_id: str | None = None
    ) -> Reply:
        """An SSE reply (or one JSON answer); an error answer raises here, at the call."""
        ...


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
