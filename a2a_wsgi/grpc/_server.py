"""A synchronous grpcio server for an A2AApp, beside (or instead of) its HTTP server.

The server shares the app's runtime and task store: a task sent over gRPC is the task a
JSON-RPC or HTTP+JSON worker of the same store reads (for several processes, a store
they share: SQLite on one host, PostgreSQL across hosts).

grpcio's sync server runs each call on a thread of its pool, and a server-streaming call
holds its thread for as long as the stream is open. So the pool has a thread for every
stream place (``max_streams``) and ``max_workers`` more for the unary calls, and a stream
past ``max_streams`` is refused at once (UNAVAILABLE, as the HTTP bindings answer 503):
however many streams are held, GetTask and SendMessage still find a thread. A held
stream's thread sleeps on a condition and is woken only by its task's events and its
call's end (:mod:`._hangup`); the pool starts threads as they are needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc

from a2a_core._calls import Busy
from a2a_core._grpc import error_status

from .._admission import StreamPlaces
from .._app import A2AApp
from ._service import A2AGrpcService

__all__ = ["DEFAULT_MAX_STREAMS", "DEFAULT_MAX_WORKERS", "GrpcServer", "serve_grpc"]

#: Threads for unary calls in flight when none is named (streams have their own).
DEFAULT_MAX_WORKERS = 32
#: Streams held open at once when none is named: a thread each (~200 KiB of RSS held),
#: benchmarks/grpc_streams.py.
DEFAULT_MAX_STREAMS = 1000
#: Seconds a refused stream is told to wait before it retries.
_RETRY_AFTER = 5


@dataclass(frozen=True)
class GrpcServer:
    """A started server and the port it listens on."""

    server: grpc.Server
    port: int

    def stop(self, grace: float | None = None) -> None:
        """Refuse new calls, end the open ones after ``grace`` seconds, and wait."""
        self.server.stop(grace).wait()

    def wait(self) -> None:
        """Block until the server stops."""
        self.server.wait_for_termination()


def serve_grpc(
    app: A2AApp,
    bind: str,
    *,
    max_workers: int = DEFAULT_MAX_WORKERS,
    max_streams: int = DEFAULT_MAX_STREAMS,
    health: bool = True,
    multiprocess: bool | None = None,
    base_url: str | None = None,
    credentials: grpc.ServerCredentials | None = None,
) -> GrpcServer:
    """Start serving ``app``'s A2A 1.0 gRPC service on ``bind`` (``HOST:PORT``; port 0
    picks one). Returns the started server and its port.

    :param max_workers: threads for unary calls in flight (more wait for one).
    :param max_streams: streams open at once, each holding a thread of its own; one more
        is refused UNAVAILABLE.
    :param health: also serve the standard ``grpc.health.v1.Health`` service (needs
        grpcio-health-checking), SERVING for the A2A service and the server as a whole.
    :param multiprocess: other processes serve the same app (a gunicorn beside this
        server): the app then refuses an in-memory store, as its HTTP workers do.
    :param base_url: the app's public HTTP URL, which the extended card's interfaces
        name (None: the app's ``base_url``; with neither, GetExtendedAgentCard fails).
    :param credentials: TLS credentials (:func:`grpc.ssl_server_credentials`); None: h2c.
    """
    app.start(multiprocess=multiprocess)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers + max_streams,
                                   thread_name_prefix="a2a-grpc"),
        options=[("grpc.max_receive_message_length", app.max_body_bytes),
                 # calls the core holds until a Python thread takes them: by default it
                 # cancels those past 1,000 after a second, which a burst of new streams
                 # reaches while the pool is still starting their threads
                 ("grpc.server.max_pending_requests", max_workers + max_streams),
                 ("grpc.server.max_pending_requests_hard_limit",
                  2 * (max_workers + max_streams))],
    )
    service = A2AGrpcService(app, base_url=base_url).handler()
    server.add_generic_rpc_handlers((_BoundedStreams(service, StreamPlaces(max_streams)),))
    if health:
        _add_health(server)
    port = server.add_secure_port(bind, credentials) if credentials is not None \
        else server.add_insecure_port(bind)
    if port == 0:
        raise OSError(f"cannot listen for gRPC on {bind}")
    server.start()
    return GrpcServer(server, port)


def _add_health(server: grpc.Server) -> None:
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    from a2a_core._grpc import SERVICE_NAME

    checker = health.HealthServicer()
    for name in ("", SERVICE_NAME):
        checker.set(name, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)


class _BoundedStreams(grpc.GenericRpcHandler):
    """``inner``'s handlers, its streaming rpcs admitted by ``places`` (one thread each)."""

    def __init__(self, inner: grpc.GenericRpcHandler, places: StreamPlaces) -> None:
        self._inner, self._places = inner, places
        self._refusal = Busy(_RETRY_AFTER).error()
        self._code, self._details = error_status(self._refusal, "UNAVAILABLE")

    def service(self, handler_call_details: grpc.HandlerCallDetails
                ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = self._inner.service(handler_call_details)
        if handler is None or handler.unary_stream is None:
            return handler
        bounded = self._bounded(handler.unary_stream)
        return handler._replace(unary_stream=bounded)  # type: ignore[attr-defined,no-any-return]

    def _bounded(self, answer: Callable[[Any, grpc.ServicerContext], Iterator[Any]]
                 ) -> Callable[[Any, grpc.ServicerContext], Iterator[Any]]:
        def bounded(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            if not self._places.admit():
                context.set_trailing_metadata((("grpc-status-details-bin", self._details),
                                               ("retry-after", str(_RETRY_AFTER))))
                context.abort(grpc.StatusCode.UNAVAILABLE, self._refusal.message)
            try:
                yield from answer(request, context)
            finally:
                self._places.release()
        return bounded
