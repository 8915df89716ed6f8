"""The A2A 1.0 gRPC service of an :class:`~a2a_wsgi.A2AApp`: one generic handler.

Every rpc of the proto's ``A2AService`` is served by the same code
(:func:`a2a_core._grpc.grpc_methods` pairs each with its operation of the app's table; a
deployment's own operation is served too when a proto of its own has its rpc): the request message
becomes the 1.0 params (ProtoJSON), the call goes through the app's
:class:`~a2a_core._calls.CallPipeline` exactly as a JSON-RPC or HTTP+JSON call does
(extensions, context, capability and caller gates, stream admission, the operation), and
the result comes back as the rpc's response message; a streaming rpc yields one
``StreamResponse`` per event (heartbeats are the HTTP streams' concern: gRPC keeps its
connection with its own pings).

The caller is authenticated by the app's own authenticators: they read an HTTP request
(headers, peer), so the call's metadata is handed to them as one (:func:`call_environ`:
``authorization`` -> ``HTTP_AUTHORIZATION``, the peer -> ``REMOTE_ADDR``).

Each call is observed as an HTTP request is (:func:`~a2a_wsgi._telemetry.observe`): one
``a2a_wsgi.access`` line when it is answered (a stream: when it ends), binding ``GRPC``,
with its span and metrics; its status is the HTTP one its error has on the other bindings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, cast

import grpc
from google.protobuf.message import Message

from a2a_core._calls import CallPipeline, Failed
from a2a_core._closing import close
from a2a_core._grpc import (
    GrpcMethod,
    error_status,
    grpc_methods,
    params_of,
    result_message,
    stream_message,
)
from a2a_core._http import Headers, HttpRequest
from a2a_core._observe import GRPC, UNOBSERVED, CallRecord
from a2a_core._operations import Answer, Events
from a2a_core._service import Heartbeat, Idle, OutboundEvent, StreamItem
from a2a_core._versioning import V1_0, negotiate_version
from a2a_core.errors import InternalError, RPCError
from a2a_core.optable import OperationTable

from .._app import A2AApp
from .._disconnect import CLIENT_GONE_KEY
from .._telemetry import call_record, observe
from ..auth._wsgi import RequestGuard, as_policy
from ._hangup import CallHangup

__all__ = ["A2AGrpcService", "call_environ"]

log = logging.getLogger("a2a_wsgi.grpc")

#: The versions the gRPC binding speaks (1.0 only: 0.3's gRPC is another proto).
GRPC_VERSIONS = (V1_0,)


class _Abort(Exception):
    """The call ends with this status (code name, ``google.rpc.Status`` bytes)."""

    def __init__(self, err: RPCError, code_name: str | None = None,
                 trailers: tuple[tuple[str, str], ...] = (), http_status: int | None = None
                 ) -> None:
        super().__init__(err.message)
        self.error = err
        #: What the HTTP bindings would answer: the access line's status.
        self.http_status = err.http_status if http_status is None else http_status
        self.message = err.message
        self.code_name, self.details = error_status(err, code_name)
        #: More trailing metadata: a refused caller's ``www-authenticate`` challenges.
        self.trailers = trailers

    @classmethod
    def of(cls, failed: Failed) -> _Abort:
        """A failed call's status: a refused caller's UNAUTHENTICATED (401) or
        PERMISSION_DENIED (403), with its challenges as ``www-authenticate`` trailers;
        UNAVAILABLE when no stream place is free (503); else the error's own."""
        if failed.refused:
            challenges = tuple(("www-authenticate", value) for name, value in failed.headers
                               if name.lower() == "www-authenticate")
            return cls(failed.error, "PERMISSION_DENIED" if failed.status == 403
                       else "UNAUTHENTICATED", challenges, http_status=failed.status)
        if failed.status == 503:
            return cls(failed.error, "UNAVAILABLE", http_status=503)
        return cls(failed.error, http_status=failed.status)


def call_environ(context: grpc.ServicerContext) -> dict[str, Any]:
    """The call as the WSGI environ the authenticators read: metadata as ``HTTP_*``
    headers (binary ``-bin`` keys and gRPC's own ``grpc-*`` left out), the peer's address
    as ``REMOTE_ADDR``."""
    environ: dict[str, Any] = {"REQUEST_METHOD": "POST", "QUERY_STRING": ""}
    for key, value in context.invocation_metadata():
        if key.endswith("-bin") or key.startswith("grpc-") or not isinstance(value, str):
            continue
        name = "HTTP_" + key.upper().replace("-", "_")
        environ[name] = f"{environ[name]},{value}" if name in environ else value
    environ["REMOTE_ADDR"] = _peer_host(context.peer())
    return environ


def _peer_host(peer: str) -> str:
    """``ipv4:127.0.0.1:5000`` -> ``127.0.0.1``; ``ipv6:[::1]:5000`` -> ``::1``."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]")
    if kind == "ipv4":
        return rest.rpartition(":")[0]
    return rest


def _headers(context: grpc.ServicerContext) -> Headers:
    return Headers([(key, value) for key, value in context.invocation_metadata()
                    if isinstance(value, str)])


class A2AGrpcService:
    """Answers the service's rpcs for ``app`` (assembled on first call)."""

    def __init__(self, app: A2AApp, *, base_url: str | None = None) -> None:
        self.app = app
        #: The public URL the cards name (the app's HTTP side); None: the app's base_url.
        self.base_url = base_url
        policy = as_policy(app.settings.auth)
        #: The app's authenticators (None: nobody is authenticated, every caller anonymous).
        self.guard = None if policy is None else RequestGuard(policy)

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler a :class:`grpc.Server` adds: every rpc that carries an
        operation the app serves (:func:`a2a_core._grpc.grpc_methods` of its table)."""
        return _TableHandler(self)

    def method_handler(self, method: GrpcMethod) -> grpc.RpcMethodHandler[Any, Any]:
        """One rpc's handler: unary, or server-streaming as the table says."""
        if method.streams:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(method), request_deserializer=method.request.FromString,
                response_serializer=_serialize)
        return grpc.unary_unary_rpc_method_handler(
            self._unary(method), request_deserializer=method.request.FromString,
            response_serializer=_serialize)

    def _unary(self, method: GrpcMethod) -> Callable[[Message, grpc.ServicerContext], Message]:
        def answer(request: Message, context: grpc.ServicerContext) -> Message:
            failures: list[_Abort] = []

            def handle(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
                record = call_record(environ) or UNOBSERVED
                try:
                    result = self._run(method, request, context, record)
                    if isinstance(result, Events):  # not for a unary rpc: the table says so
                        close(result.items)
                        raise _Abort(InternalError())
                    answered = [result_message(method, result.value)]
                except Exception as exc:
                    return _failed(exc, method, record, start_response, failures)
                start_response("200 OK", [])
                return answered

            body = observe(_environ(context, method), _no_headers, handle)
            if failures:
                _end(context, failures[0])
            return cast("list[Message]", body)[0]
        return answer

    def _streaming(
        self, method: GrpcMethod
    ) -> Callable[[Message, grpc.ServicerContext], Iterator[Message]]:
        def answer(request: Message, context: grpc.ServicerContext) -> Iterator[Message]:
            failures: list[_Abort] = []
            hangup = CallHangup(context)

            def handle(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
                record = call_record(environ) or UNOBSERVED
                try:
                    result = self._run(method, request, context, record, hangup.probe)
                    if not isinstance(result, Events):
                        raise _Abort(InternalError())
                except Exception as exc:
                    return _failed(exc, method, record, start_response, failures)
                start_response("200 OK", [])
                return _messages(result.items, method, record, failures)

            body = observe(_environ(context, method), _no_headers, handle)
            try:
                yield from cast("Iterator[Message]", body)
            finally:  # the client left, or the stream ended: stop its producer, log its line
                close(body)
                hangup.close()
            if failures:
                _end(context, failures[0])
        return answer

    def _run(self, method: GrpcMethod, request: Message,
             context: grpc.ServicerContext, record: CallRecord,
             client_gone: Callable[[], bool] | None = None) -> Answer:
        """Authenticate, read the version and the params, then the one call sequence
        (:meth:`~a2a_core._calls.CallPipeline.call`); a failure ends the call (:class:`_Abort`)."""
        app = self.app
        calls: CallPipeline = app.dispatcher.calls
        identity = None
        record.start(GRPC)
        if self.guard is not None:
            identity, refused = self.guard.admit(call_environ(context), None)
            if refused is not None:
                raise _Abort.of(Failed.of(refused))
        headers = _headers(context)
        version = _version(headers)
        record.start(GRPC, version, identity)
        params = params_of(request)
        http = HttpRequest(method="POST", path=method.path, headers=headers,
                           client_gone=client_gone or (lambda: not context.is_active()))
        answered = calls.call(http, method.operation, params, version,
                              base_url=self.base_url or app.base_url, metadata=None,
                              identity=identity, record=record)
        context.send_initial_metadata(tuple((k.lower(), v) for k, v in answered.headers))
        if isinstance(answered.answer, Failed):
            raise _Abort.of(answered.answer)
        return answered.answer


class _TableHandler(grpc.GenericRpcHandler):
    """Finds a call's rpc by its path among those of the operations the app serves now:
    an operation added with ``Dispatcher.add_operation`` is served from its next call, over
    the A2A service or, when its entry names one, a service of the deployment's own proto."""

    def __init__(self, service: A2AGrpcService) -> None:
        self._service = service
        self._table: OperationTable | None = None
        self._by_path: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    def service(self, handler_call_details: grpc.HandlerCallDetails
                ) -> grpc.RpcMethodHandler[Any, Any] | None:
        table = self._service.app.dispatcher.operations.table
        if table is not self._table:  # (first call, or an operation was added)
            self._by_path = {m.path: self._service.method_handler(m)
                             for m in grpc_methods(table)}
            self._table = table
        return self._by_path.get(handler_call_details.method)


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _version(headers: Headers) -> str:
    """``a2a-version`` metadata; none is 1.0, another version is refused."""
    header = headers.get("A2A-Version")
    if not (header and header.strip()):
        return V1_0
    try:
        return negotiate_version(header, GRPC_VERSIONS)
    except RPCError as err:
        raise _Abort(err) from None


def _environ(context: grpc.ServicerContext, method: GrpcMethod) -> dict[str, Any]:
    """The call as the access line and span read a request: its rpc as the path, and
    whether the client has gone (a stream it cancelled)."""
    return {**call_environ(context), "PATH_INFO": method.path,
            CLIENT_GONE_KEY: lambda: not context.is_active()}


def _no_headers(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
    """The start_response :func:`observe` forwards to: gRPC sends no HTTP headers."""


def _abort_for(exc: Exception, method: GrpcMethod) -> _Abort:
    """The status ``exc`` ends the call with: its own, an A2A error's, or INTERNAL (logged
    here, never shown to the peer)."""
    if isinstance(exc, _Abort):
        return exc
    if isinstance(exc, RPCError):
        return _Abort(exc)
    log.exception("unhandled error in gRPC %s", method.operation.name, exc_info=exc)
    return _Abort(InternalError())


def _failed(exc: Exception, method: GrpcMethod, record: CallRecord,
            start_response: Callable[..., Any], failures: list[_Abort]) -> list[Message]:
    """The call failed before its answer: noted, its status kept for :func:`_end`."""
    abort = _abort_for(exc, method)
    record.failed(abort.error)
    start_response(f"{abort.http_status} {abort.code_name}", [])
    failures.append(abort)
    return []


def _messages(items: Iterator[StreamItem], method: GrpcMethod, record: CallRecord,
              failures: list[_Abort]) -> Iterator[Message]:
    """A stream's events as ``StreamResponse`` messages; a failure ends it, kept for
    :func:`_end`."""
    try:
        for item in items:
            if isinstance(item, (Heartbeat, Idle)):
                continue  # gRPC keeps the connection with its own pings
            yield stream_message(item.event if isinstance(item, OutboundEvent) else item)
    except Exception as exc:
        abort = _abort_for(exc, method)
        record.failed(abort.error)
        failures.append(abort)
    finally:
        close(items)


def _end(context: grpc.ServicerContext, abort: _Abort) -> NoReturn:
    """End the call with ``abort``'s code, message and Status details (raises)."""
    context.set_trailing_metadata((("grpc-status-details-bin", abort.details), *abort.trailers))
    context.abort(getattr(grpc.StatusCode, abort.code_name), abort.message)
    raise AssertionError("context.abort returned")  # it raises; this keeps the type honest
