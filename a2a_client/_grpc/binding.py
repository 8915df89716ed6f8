"""The gRPC binding as one of :class:`~a2a_client.A2AClient`'s channels (``grpc`` extra).

:class:`GrpcBinding` is a :class:`~a2a_client._channel.Channel` around a
:class:`~a2a_client.grpc_binding.GrpcChannel`, so the client calls it as it calls the
JSON-RPC and HTTP+JSON ones. A stream is a :class:`GrpcReply`: the server-streaming rpc
read as the SSE reply an :class:`~a2a_client._streams.EventStream` reads, each
``StreamResponse`` one event (its 1.0 JSON, what HTTP+JSON's events carry), so a gRPC
stream resubscribes, falls back to GetTask, checks generations and is aborted by a
waiter exactly as the HTTP ones are. A dropped connection (UNAVAILABLE) is a
:class:`~a2a_client._errors.ConnectError` there, which the stream resumes from.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf.message import Message

from a2a_core._grpc import result_value

from .._cards import Endpoint
from .._channel import Channel
from .._transport import Reply, Timeout, Transport, origin
from ..grpc_binding import GrpcChannel, status_error

__all__ = ["GrpcBinding", "GrpcReply"]

_VERSION = "1.0"


class GrpcReply(Reply):
    """A server-streaming rpc as an SSE reply (``text/event-stream``), read as it arrives.

    There is no HTTP response behind it: the base class's constructor, which takes one,
    is not run; every member a stream reads is given here.
    """

    def __init__(self, call: Iterator[Message], first: Sequence[Message]) -> None:
        self._call = call
        self._first = list(first)
        self._body = None
        self._max_body = 0
        self.status_code = 200
        self.headers = {"Content-Type": "text/event-stream"}
        self.url = ""
        self._cancelled = False

    def iter_bytes(self) -> Iterator[bytes]:
        """One SSE event per message; a failed rpc raises its typed error."""
        try:
            for message in itertools.chain(self._first, self._call):
                data = json.dumps(result_value(message), separators=(",", ":"))
                yield b"data: " + data.encode() + b"\n\n"
        except grpc.RpcError as exc:
            if self._cancelled and exc.code() == grpc.StatusCode.CANCELLED:
                return  # we ended it (close, abort): the reader decides what that means
            raise status_error(exc) from None

    def read(self) -> bytes:
        """The whole stream (a stream is read incrementally; this is for completeness)."""
        return b"".join(self.iter_bytes())

    def close(self) -> None:
        """Cancel the rpc (idempotent)."""
        self._cancelled = True
        cancel = getattr(self._call, "cancel", None)
        if cancel is not None:
            cancel()

    abort = close  # cancelling wakes a reader blocked on the next message


class GrpcBinding(Channel):
    """Calls and streams over gRPC to ``endpoint()``, with the client's credentials (only
    to the agent's own origins, as over HTTP), extensions and custom headers."""

    def __init__(self, transport: Transport, endpoint: Callable[[], Endpoint],
                 extensions: Sequence[str],
                 headers: Callable[[], Mapping[str, str]] | None = None) -> None:
        super().__init__(transport, endpoint, extensions)
        self.grpc = GrpcChannel(endpoint, extensions, auth_for=self._auth_for, headers=headers)

    def _auth_for(self, url: str) -> Any:
        """The client's credentials if ``url`` (``http(s)://host:port/``) is on one of the
        agent's origins (the transport's rule), else None."""
        auth = self._transport.auth
        return auth if auth is not None and origin(url) in self._transport.auth_origins \
            else None

    def _result(self, op: Any, request: Any, timeout: Timeout) -> tuple[Any, str]:
        try:
            return self.grpc.result(op, request, timeout), _VERSION
        finally:
            self._copy_echo()

    def open_stream(self, op: Any, request: Any, timeout: Timeout,
                    last_event_id: str | None = None) -> Reply:
        """The rpc as a :class:`GrpcReply` (no SSE ids over gRPC: ``last_event_id`` is
        always None here); an error before the first event raises now."""
        try:
            call, first = self.grpc.open_call(op, request)
        finally:
            self._copy_echo()
        return GrpcReply(call, first)

    def _copy_echo(self) -> None:
        with self._lock:
            self.server_version = self.grpc.server_version
            self.activated_extensions = self.grpc.activated_extensions

    def close(self) -> None:
        """Close the gRPC channels (idempotent)."""
        self.grpc.close()
