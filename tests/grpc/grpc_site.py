"""The gRPC tests' agent as an importable app (``grpc_site:app``) for server processes;
its store is ``$A2A_STORE``."""
from __future__ import annotations

from grpc_support import grpc_app

app = grpc_app()
