"""A2A 1.0 over gRPC for the client: the same operations, models and errors (``grpc`` extra).

:class:`GrpcChannel` is the third binding beside :class:`~a2a_client._rpc.RPCChannel` and
:class:`~a2a_client._rest.RestChannel`: a request model is encoded into the 1.0 params the
other bindings send, and those become the rpc's request message (ProtoJSON is the 1.0 JSON
shape, :mod:`a2a_core._grpc`); the response message is read back into the operation's
result model by the same codec. Streams are server-streaming rpcs
(:class:`GrpcEventStream`).

Errors: a status whose ``grpc-status-details-bin`` names an A2A reason raises that
:class:`~a2a_core.errors.RPCError` class, as over JSON-RPC and HTTP+JSON; UNAUTHENTICATED
and PERMISSION_DENIED raise :class:`~a2a_client._errors.HTTPStatusError` 401 and 403 (what
the HTTP bindings raise for a refused credential), UNAVAILABLE a
:class:`~a2a_client._errors.ConnectError`, DEADLINE_EXCEEDED a
:class:`~a2a_client._errors.ReadTimeout`; any other status a :class:`GrpcStatusError`.

Interface URLs: ``host:port``, ``grpc://host:port`` and ``http://host:port`` are spoken
in cleartext (h2c); ``grpcs://`` and ``https://`` over TLS (:func:`grpc_target`). Which
interface of a card: :func:`select_grpc_endpoint`.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message
from requests import Request
from requests.auth import AuthBase

from a2a_core._grpc import (
    GrpcMethod,
    decode_status_details,
    grpc_method,
    request_message,
    result_value,
)
from a2a_core.errors import InvalidParamsError, RemoteProtocolError, RPCError
from a2a_core.extensions import parse_extensions_header
from a2a_core.models import Message as A2AMessage
from a2a_core.models import StreamEvent, SubscribeToTaskRequest, Task, TaskStatusUpdateEvent
from a2a_core.optable import AnyOperation, Operation, OperationSpec
from a2a_core.wire import decode_result, decode_stream_event, encode_params

from ._cards import Endpoint
from ._channel import extension_headers
from ._errors import ClientError, ConnectError, HTTPStatusError, ReadTimeout
from ._grpc import GRPC, grpc_http_url, grpc_target, select_grpc_endpoint, speaks_grpc

__all__ = ["GRPC", "GrpcChannel", "GrpcEventStream", "GrpcStatusError", "grpc_target",
           "select_grpc_endpoint", "speaks_grpc", "status_error"]

Req = TypeVar("Req")
Res = TypeVar("Res")

_VERSION = "1.0"


class GrpcStatusError(ClientError):
    """A gRPC status that carries no A2A error (another service, a proxy, an unknown rpc)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"gRPC {code.name}: {details}")
        self.code = code
        self.details = details


class GrpcChannel:
    """Sends operations to the gRPC interface ``endpoint()`` (resolved on first use).

    The same ``call`` as :class:`~a2a_client._channel.Channel`; a stream is :meth:`stream`.

    :param auth: the client's credentials (a requests ``AuthBase``: its ``Authorization``
        header goes as ``authorization`` metadata), sent to every interface.
    :param auth_for: instead, the credentials for one interface, given its URL as
        ``http(s)://host:port/`` (None: send none there): how a client keeps them to the
        agent's own origins.
    :param headers: more metadata (custom headers, lower-cased), or a callable giving it
        at each call (templates expanded then).
    :param credentials: TLS credentials for ``grpcs://`` (None: the system roots).
    """

    def __init__(
        self,
        endpoint: Callable[[], Endpoint],
        extensions: Sequence[str] = (),
        *,
        auth: AuthBase | None = None,
        auth_for: Callable[[str], AuthBase | None] | None = None,
        headers: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self._endpoint = endpoint
        self.extensions = tuple(extensions)
        self._auth_for = auth_for if auth_for is not None else (lambda url: auth)
        self._headers = headers if callable(headers) else (lambda: headers or {})
        self._credentials = credentials
        self._lock = threading.Lock()
        self._channels: dict[tuple[str, bool], grpc.Channel] = {}
        #: ``a2a-version`` the server echoed on its last answer (None: not sent).
        self.server_version: str | None = None
        #: Extensions the server reported active on its last answer.
        self.activated_extensions: tuple[str, ...] = ()

    # -- calls ----------------------------------------------------------------------------

    def call(
        self,
        op: OperationSpec[Req, Res],
        request: Req,
        timeout: tuple[float, float],
        check: Callable[[Any], Any] | None = None,
    ) -> Res:
        """One unary rpc, decoded into the operation's result model; errors raise typed."""
        value = self.result(op, request, timeout)
        if check is not None:
            check(value)
        return decode_result(op, value, _VERSION)

    def result(self, op: AnyOperation, request: Any, timeout: tuple[float, float]) -> Any:
        """One unary rpc's result as its 1.0 JSON value (not decoded yet)."""
        method, message, metadata, channel = self._prepare(op, request)
        rpc = channel.unary_unary(method.path, request_serializer=_serialize,
                                  response_deserializer=method.response.FromString)
        try:
            response, call = rpc.with_call(message, timeout=sum(timeout), metadata=metadata)
        except grpc.RpcError as exc:
            raise status_error(exc) from None
        self._note_echo(call.initial_metadata())
        return result_value(response)

    def stream(
        self, op: AnyOperation, request: Any, *, max_reconnects: int = 3
    ) -> GrpcEventStream:
        """A server-streaming rpc's events; errors before the first event raise here."""
        tenant = getattr(request, "tenant", None)

        def reopen(task_id: str) -> Iterator[Message]:
            return self._open(Operation.SUBSCRIBE_TO_TASK,
                              SubscribeToTaskRequest(id=task_id, tenant=tenant))

        return GrpcEventStream(self._open(op, request), reopen, max_reconnects=max_reconnects)

    def open_call(self, op: AnyOperation, request: Any) -> tuple[Iterator[Message], list[Message]]:
        """A server-streaming rpc and its first message (none: it ended at once), read now
        so that an error before the first event (task not found, 401) raises here."""
        call = self._open(op, request)
        return call, _first(call)

    def _open(self, op: AnyOperation, request: Any) -> Iterator[Message]:
        method, message, metadata, channel = self._prepare(op, request)
        rpc = channel.unary_stream(method.path, request_serializer=_serialize,
                                   response_deserializer=method.response.FromString)
        call: Iterator[Message] = rpc(message, metadata=metadata)
        self._note_echo(call.initial_metadata())  # type: ignore[attr-defined]
        return call

    def _prepare(
        self, op: AnyOperation, request: Any
    ) -> tuple[GrpcMethod, Message, tuple[tuple[str, str], ...], grpc.Channel]:
        method = grpc_method(op)  # (the entry names its service; the proto, the messages)
        if method is None:
            raise InvalidParamsError(f"{op.name} is not an rpc of the {op.grpc_service} service")
        endpoint = self._endpoint()
        if endpoint.tenant and getattr(request, "tenant", "") is None:
            request = dataclasses.replace(request, tenant=endpoint.tenant)
        message = request_message(method, encode_params(op, request, _VERSION))
        return method, message, self._metadata(endpoint.url), self._channel(endpoint.url)

    def _metadata(self, url: str) -> tuple[tuple[str, str], ...]:
        pairs = {**{k.lower(): v for k, v in self._headers().items()}, "a2a-version": _VERSION,
                 **{k.lower(): v for k, v in extension_headers(self.extensions, _VERSION).items()}}
        http_url = _as_http(url)
        auth = self._auth_for(http_url)
        if auth is not None:
            prepared = auth(Request("POST", http_url).prepare())
            if prepared.headers.get("Authorization"):
                pairs["authorization"] = prepared.headers["Authorization"]
        return tuple(pairs.items())

    def _channel(self, url: str) -> grpc.Channel:
        key = grpc_target(url)
        with self._lock:
            channel = self._channels.get(key)
            if channel is None:
                target, tls = key
                channel = grpc.secure_channel(
                    target, self._credentials or grpc.ssl_channel_credentials()) if tls \
                    else grpc.insecure_channel(target)
                self._channels[key] = channel
            return channel

    def _note_echo(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> None:
        values = {key: value for key, value in metadata or () if isinstance(value, str)}
        with self._lock:
            self.server_version = values.get("a2a-version")
            self.activated_extensions = parse_extensions_header(
                [values["a2a-extensions"]] if "a2a-extensions" in values else [])

    def close(self) -> None:
        """Close every gRPC channel this binding opened (idempotent)."""
        with self._lock:
            channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            channel.close()


class GrpcEventStream(Iterator[StreamEvent]):
    """Typed events of a server-streaming rpc; ``close()`` (or ``with``) cancels it.

    A stream the server ends (or the connection drops, UNAVAILABLE) before the task
    reached a terminal or interrupted state is resubscribed with SubscribeToTask, at most
    ``max_reconnects`` times in a row without an event between.
    """

    def __init__(self, call: Iterator[Message], reopen: Callable[[str], Iterator[Message]],
                 *, max_reconnects: int = 3, reconnect_delay: float = 0.5) -> None:
        self._call = call
        self._reopen = reopen
        self.max_reconnects = max_reconnects
        self.reconnect_delay = reconnect_delay
        #: Read now, so that an error before the first event (task not found, 401) raises
        #: at the call, as over the HTTP bindings.
        self._first = _first(call)
        #: The task this stream is about, once an event named it.
        self.task_id: str | None = None
        #: How many times this stream resubscribed.
        self.reconnects = 0
        self._events = self._run()

    def __next__(self) -> StreamEvent:
        return next(self._events)

    def __iter__(self) -> GrpcEventStream:
        return self

    def __enter__(self) -> GrpcEventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading and cancel the rpc (idempotent)."""
        self._events.close()
        _cancel(self._call)

    def _run(self) -> Generator[StreamEvent, None, None]:
        failures = 0
        while True:
            try:
                for message in itertools.chain(self._first, self._call):
                    event = self._decoded(message)
                    failures = 0
                    yield event
                    if _settles(event):
                        return
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    raise status_error(exc) from None
            finally:
                _cancel(self._call)
            failures = self._resubscribe(failures)

    def _resubscribe(self, failures: int) -> int:
        """Open SubscribeToTask for the task in place of the ended rpc; the failures
        without an event since, this one included."""
        while True:
            failures += 1
            if self.task_id is None or failures > self.max_reconnects:
                raise ConnectError("the gRPC stream ended before the task reached a final state")
            self.reconnects += 1
            time.sleep(self.reconnect_delay * failures)
            try:
                self._call = self._reopen(self.task_id)
                self._first = _first(self._call)
                return failures
            except ConnectError:  # the server is not back yet
                continue

    def _decoded(self, message: Message) -> StreamEvent:
        try:
            event = decode_stream_event(result_value(message))
        except InvalidParamsError as exc:
            raise RemoteProtocolError(f"invalid stream event: {exc}") from exc
        if not isinstance(event, A2AMessage):
            self.task_id = event.id if isinstance(event, Task) else event.task_id
        return event


def _first(call: Iterator[Message]) -> list[Message]:
    """The rpc's first message (none when it ended at once); its error raises typed."""
    try:
        return [next(call)]
    except StopIteration:
        return []
    except grpc.RpcError as exc:
        raise status_error(exc) from None


def _settles(event: StreamEvent) -> bool:
    """The stream's natural end: a message answer, or a terminal or interrupted state."""
    if isinstance(event, A2AMessage):
        return True
    if isinstance(event, (Task, TaskStatusUpdateEvent)):
        state = event.status.state
        return state.is_terminal or state.is_interrupted
    return False


def status_error(exc: grpc.RpcError) -> RPCError | ClientError:
    """The typed error a failed rpc stands for (see the module docstring)."""
    code: grpc.StatusCode = exc.code()
    details: str = exc.details() or ""
    trailers: dict[str, str | bytes] = {item.key: item.value
                                        for item in exc.trailing_metadata() or ()}
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        headers = {k: v for k, v in trailers.items() if isinstance(v, str)}
        status = 401 if code == grpc.StatusCode.UNAUTHENTICATED else 403
        return HTTPStatusError(status, headers, details.encode())
    binary = trailers.get("grpc-status-details-bin")
    error = decode_status_details(code.name, details, binary if isinstance(binary, bytes)
                                  else None)
    if error is not None:
        return error
    if code == grpc.StatusCode.UNAVAILABLE:
        return ConnectError(f"gRPC UNAVAILABLE: {details}")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ReadTimeout(f"gRPC DEADLINE_EXCEEDED: {details}")
    return GrpcStatusError(code, details)


def _cancel(call: object) -> None:
    cancel = getattr(call, "cancel", None)
    if cancel is not None:
        cancel()


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _as_http(url: str) -> str:
    """The interface URL as an http(s) URL, for an ``AuthBase`` that reads the request's."""
    return grpc_http_url(url)
