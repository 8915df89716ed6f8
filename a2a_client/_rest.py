"""HTTP+JSON (REST) over the transport: the 1.0 binding's requests and answers, typed.

:class:`RestChannel` mirrors :class:`~a2a_client._rpc.RPCChannel`: the request model is
encoded into the same 1.0 params the JSON-RPC client sends, then placed on the wire by
the core's route table (:func:`a2a_core._rest.request_target`: path variables, query or
body). Answers decode into the same result models; a ``google.rpc.Status`` error body
raises the same :class:`~a2a_core.errors.RPCError` class the JSON-RPC error would
(read by its ErrorInfo reason), and a non-2xx answer without one raises
:class:`~a2a_client._errors.HTTPStatusError`. Streams are SSE of bare StreamResponse
objects, read by :func:`rest_stream_event`; an ``event: error`` holds a Status.

Decisions:

* Only 1.0 (0.3's REST is another transcoding, under ``/v1``): every request says
  ``A2A-Version: 1.0``, whatever the endpoint's version says.
* Bodies go as ``application/a2a+json`` (1.0's registered type); answers in that type
  or ``application/json`` are read alike.
* SubscribeToTask is sent as POST (the spec's table, the official SDK and the
  conformance kit); a server that answers 405 allowing only GET (the proto's
  annotation) is asked again with GET.
* GetTaskPushNotificationConfig needs the config id here: it is in the path.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode, urljoin

from a2a_core._rest import A2A_JSON, RestTarget, decode_status, parse_json, request_target
from a2a_core.errors import InvalidParamsError, ParseError, RemoteProtocolError, RPCError
from a2a_core.models import AgentCard, AgentInterface, StreamEvent
from a2a_core.optable import AnyOperation
from a2a_core.wire import decode_stream_event, encode_params

from ._cards import Endpoint
from ._channel import AUTH_STATUSES, Channel, extension_headers, retry_safe
from ._errors import HTTPStatusError
from ._transport import Reply, Timeout

__all__ = [
    "HTTP_JSON",
    "RestChannel",
    "rest_stream_event",
    "select_rest_endpoint",
    "speaks_rest",
]

#: The card's ``protocolBinding`` for this binding.
HTTP_JSON = "HTTP+JSON"
_VERSION = "1.0"
_ACCEPT_JSON = f"{A2A_JSON}, application/json"
_SSE = "text/event-stream"

class RestChannel(Channel):
    """Sends operations to the HTTP+JSON interface ``endpoint()`` (resolved on first use)."""

    def headers(self, accept: str, *, body: bool) -> dict[str, str]:
        """Protocol headers: version, extensions, content types."""
        headers = {"A2A-Version": _VERSION, "Accept": accept}
        if body:
            headers["Content-Type"] = A2A_JSON
        return {**headers, **extension_headers(self.extensions, _VERSION)}

    def _result(self, op: AnyOperation, request: Any, timeout: Timeout) -> tuple[Any, str]:
        reply = self._send(op, request, timeout, accept=_ACCEPT_JSON)
        payload = reply.read()
        if not _ok(reply):
            raise _error(reply, payload)
        return (_json(payload) if payload.strip() else None), _VERSION

    def open_stream(
        self, op: AnyOperation, request: Any, timeout: Timeout, last_event_id: str | None = None
    ) -> Reply:
        """Open an SSE answer; an error answer raises here, at the call.

        A 2xx answer that is one JSON object instead of a stream is left for the
        :class:`~a2a_client._streams.EventStream`, which reads it as the only event.
        """
        reply = self._send(op, request, timeout, accept=_SSE, last_event_id=last_event_id)
        if _only_get(reply) and any(r.method == "GET" for r in op.routes[1:]):
            reply.close()
            reply = self._send(
                op, request, timeout, accept=_SSE, last_event_id=last_event_id, method="GET"
            )
        if not _ok(reply):
            raise _error(reply, reply.read())
        return reply

    def _send(
        self,
        op: AnyOperation,
        request: Any,
        timeout: Timeout,
        *,
        accept: str,
        last_event_id: str | None = None,
        method: str | None = None,
    ) -> Reply:
        """Send one request; the reply's body is not read yet."""
        endpoint, request = self._target(request)
        target = request_target(op, encode_params(op, request, _VERSION), method=method)
        headers = self.headers(accept, body=target.body is not None)
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        body = None if target.body is None else _dumps(target.body)
        reply = self._transport.request(
            target.method, _url(endpoint.url, target), headers=headers, timeout=timeout, body=body,
            retry=retry_safe(op, request),
        )
        self._note_echo(reply)
        return reply


def rest_stream_event(value: Any) -> StreamEvent:
    """One SSE event's JSON: a StreamResponse, or a Status that raises its typed error."""
    if not isinstance(value, dict):
        raise RemoteProtocolError("stream event is not a JSON object")
    if "error" in value:
        error = decode_status(value)
        if error is None:
            raise RemoteProtocolError("stream error event is not an A2A google.rpc.Status")
        raise error
    try:
        return decode_stream_event(value)
    except InvalidParamsError as exc:
        raise RemoteProtocolError(f"invalid stream event: {exc}") from exc


def select_rest_endpoint(card: AgentCard, card_url: str | None) -> Endpoint | None:
    """The card's first HTTP+JSON interface of protocol version 1 or later, if it has one.

    Its URL is resolved against the card's own URL; its tenant is kept.
    """
    for interface in card.supported_interfaces:
        if not speaks_rest(interface):
            continue
        url = urljoin(card_url, interface.url) if card_url else interface.url
        return Endpoint(url=url, version=_VERSION, tenant=interface.tenant, binding=HTTP_JSON)
    return None


def speaks_rest(interface: AgentInterface) -> bool:
    """An HTTP+JSON interface of protocol version 1 or later (the only REST we speak)."""
    return interface.protocol_binding.upper() == HTTP_JSON and _major_1(interface.protocol_version)


def _major_1(version: str | None) -> bool:
    """``1.0``, ``1.1``, ``2.0``…: spoken as 1.0 (0.3's REST is another binding)."""
    head = (version or "").strip().split(".", 1)[0]
    return head.isdigit() and int(head) >= 1


def _url(base: str, target: RestTarget) -> str:
    """The interface URL (any path kept) + the route's path + its query."""
    url = base.rstrip("/") + target.path
    return f"{url}?{urlencode(target.query)}" if target.query else url


def _ok(reply: Reply) -> bool:
    return 200 <= reply.status_code < 300


def _only_get(reply: Reply) -> bool:
    """A 405 whose ``Allow`` names GET: a server following the proto's annotation."""
    allowed = {m.strip().upper() for m in reply.headers.get("Allow", "").split(",")}
    return reply.status_code == 405 and "GET" in allowed


def _error(reply: Reply, payload: bytes) -> RPCError | HTTPStatusError:
    """The typed error a Status body names, else the HTTP status itself (always for a 401
    or 403: see :data:`~a2a_client._channel.AUTH_STATUSES`)."""
    if reply.status_code in AUTH_STATUSES:
        return HTTPStatusError.from_reply(reply, payload)
    try:
        value = parse_json(payload) if payload.strip() else None
    except ParseError:
        value = None
    error = decode_status(value)
    if error is not None:
        return error
    return HTTPStatusError.from_reply(reply, payload)


def _json(payload: bytes) -> Any:
    """A success body under the strict reader; garbage is the peer's protocol error."""
    try:
        return parse_json(payload)
    except ParseError as exc:
        raise RemoteProtocolError(f"response is not valid JSON: {exc.message}") from None


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
