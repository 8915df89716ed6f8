"""JSON-RPC 2.0 over the transport: one endpoint, one dialect, typed answers.

:class:`RPCChannel` turns an operation and its request model into the chosen dialect's
method name, params and headers, and an answer back into a model, the core's typed
:class:`~a2a_core.errors.RPCError`, or :class:`~a2a_client._errors.HTTPStatusError`
(a non-2xx answer without a JSON-RPC body). A JSON-RPC error wins over the HTTP status:
some servers send it with a 4xx/5xx; except a 401 or 403, which is always an
HTTPStatusError (the same as over HTTP+JSON). Request ids are increasing integers.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

from a2a_core._jsonrpc import RPCResponse, parse_response
from a2a_core.errors import InvalidParamsError, RemoteProtocolError
from a2a_core.models import StreamEvent
from a2a_core.optable import AnyOperation
from a2a_core.wire import decode_error, decode_stream_event, encode_params

from ._cards import Endpoint
from ._channel import AUTH_STATUSES, Channel, extension_headers, retry_safe
from ._errors import HTTPStatusError
from ._transport import Reply, Timeout, Transport

__all__ = ["RPCChannel", "TimeoutLike", "as_timeout", "stream_event"]

#: A float (both phases) or (connect, read) seconds.
TimeoutLike = float | tuple[float, float]

def as_timeout(value: TimeoutLike | None, default: Timeout) -> Timeout:
    """Normalise a timeout; ``None`` means "the client's default", never "forever"."""
    if value is None:
        return default
    if isinstance(value, tuple):
        connect, read = value
    else:
        connect = read = value
    if connect is None or read is None or connect <= 0 or read <= 0:
        raise ValueError("timeouts must be positive numbers (there is no infinite wait)")
    return float(connect), float(read)


def _ok(reply: Reply) -> bool:
    return 200 <= reply.status_code < 300


class RPCChannel(Channel):
    """Sends operations to ``endpoint()`` (resolved on first use) and decodes the answers."""

    def __init__(
        self, transport: Transport, endpoint: Callable[[], Endpoint], extensions: Sequence[str]
    ) -> None:
        super().__init__(transport, endpoint, extensions)
        self._ids = itertools.count(1)

    def headers(self, version: str, accept: str) -> dict[str, str]:
        """Protocol headers: version, extensions (both spellings for 0.3), content types."""
        headers = {"Content-Type": "application/json", "Accept": accept, "A2A-Version": version}
        return {**headers, **extension_headers(self.extensions, version)}

    def _result(self, op: AnyOperation, request: Any, timeout: Timeout) -> tuple[Any, str]:
        reply, request_id, version = self._post(op, request, timeout, stream=False)
        return self._response(reply, reply.read(), request_id).result, version

    def open_stream(
        self, op: AnyOperation, request: Any, timeout: Timeout, last_event_id: str | None = None
    ) -> Reply:
        """Open an SSE answer; a JSON-RPC error or a non-2xx answer raises here, at the call."""
        reply, request_id, _ = self._post(
            op, request, timeout, stream=True, last_event_id=last_event_id
        )
        if not _ok(reply) or reply.content_type != "text/event-stream":
            # One JSON answer instead of a stream: raise its error now. A result is left
            # for the EventStream, which reads it from the kept body.
            self._response(reply, reply.read(), request_id)
            if not _ok(reply):
                raise HTTPStatusError.from_reply(reply, reply.read())
        return reply

    def _post(
        self,
        op: AnyOperation,
        request: Any,
        timeout: Timeout,
        *,
        stream: bool,
        last_event_id: str | None = None,
    ) -> tuple[Reply, int, str]:
        """Send one request; returns the unread reply, the request id and the dialect."""
        endpoint, request = self._target(request)
        request_id = next(self._ids)
        envelope = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": op.method_1_0 if endpoint.version == "1.0" else op.method_0_3,
            "params": encode_params(op, request, endpoint.version),
        }
        headers = self.headers(
            endpoint.version, "text/event-stream" if stream else "application/json"
        )
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        body = json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode()
        reply = self._transport.request(
            "POST", endpoint.url, headers=headers, timeout=timeout, body=body,
            retry=retry_safe(op, request),
        )
        self._note_echo(reply)
        return reply, request_id, endpoint.version

    def _response(self, reply: Reply, payload: bytes, request_id: int) -> RPCResponse:
        """The JSON-RPC response in ``payload``; raises its error, or HTTPStatusError
        (always for a 401 or 403: see :data:`~a2a_client._channel.AUTH_STATUSES`)."""
        if reply.status_code in AUTH_STATUSES:
            raise HTTPStatusError.from_reply(reply, payload)
        try:
            response = parse_response(payload)
        except RemoteProtocolError:
            if not _ok(reply):
                raise HTTPStatusError.from_reply(reply, payload) from None
            raise
        if response.error is not None:
            raise decode_error(response.error)
        if response.id is not None and response.id != request_id:
            raise RemoteProtocolError(f"response id {response.id!r} answers another request")
        return response


def stream_event(value: Any) -> StreamEvent:
    """One SSE event's JSON: an error raises its class; garbage is RemoteProtocolError."""
    if not isinstance(value, dict):
        raise RemoteProtocolError("stream event is not a JSON object")
    response = parse_response(value)
    if response.error is not None:
        raise decode_error(response.error)
    try:
        return decode_stream_event(response.result)
    except InvalidParamsError as exc:
        raise RemoteProtocolError(f"invalid stream event: {exc}") from exc
