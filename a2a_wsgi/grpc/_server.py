"""A synchronous grpcio server for an A2AApp, beside (or instead of) its HTTP server.

The server shares the app's runtime and task store: a task sent over gRPC is the task a
JSON-RPC or HTTP+JSON worker of the same store reads (for several processes, a store
they share: SQLite on one host, PostgreSQL across hosts). Each call holds one thread of
the pool while it runs; a stream holds one for as long as it is open, so ``max_workers``
bounds the open streams and calls of this server together.
"""

from __future__ import annotations

from concurrent import futures
from dataclasses import dataclass

import grpc

from ..app import A2AApp
from ._service import A2AGrpcService

__all__ = ["GrpcServer", "serve_grpc"]

#: Threads of the pool when none is named: streams and calls in flight together.
DEFAULT_MAX_WORKERS = 32


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
    health: bool = True,
    multiprocess: bool | None = None,
    base_url: str | None = None,
    credentials: grpc.ServerCredentials | None = None,
) -> GrpcServer:
    """Start serving ``app``'s A2A 1.0 gRPC service on ``bind`` (``HOST:PORT``; port 0
    picks one). Returns the started server and its port.

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
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="a2a-grpc"),
        options=[("grpc.max_receive_message_length", app.max_body_bytes)],
    )
    server.add_generic_rpc_handlers((A2AGrpcService(app, base_url=base_url).handler(),))
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
