"""A2A 1.0 over gRPC for an :class:`~a2a_wsgi.A2AApp` (the ``grpc`` extra).

``serve_grpc(app, "127.0.0.1:50051")`` starts a grpcio server answering the proto's
``lf.a2a.v1.A2AService`` through the app's own call pipeline, runtime, store and
authenticators; ``python -m a2a_wsgi.grpc module:app --bind HOST:PORT`` runs one in the
foreground. docs/grpc.md says how it fits beside the HTTP server.
"""

from __future__ import annotations

from ._server import DEFAULT_MAX_STREAMS, DEFAULT_MAX_WORKERS, GrpcServer, serve_grpc
from ._service import A2AGrpcService, call_environ

__all__ = ["DEFAULT_MAX_STREAMS", "DEFAULT_MAX_WORKERS", "A2AGrpcService", "GrpcServer",
           "call_environ", "serve_grpc"]
