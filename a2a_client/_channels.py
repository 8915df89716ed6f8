"""The client's channels, one per binding: JSON-RPC and HTTP+JSON made at once, gRPC on
first use, since it needs the ``grpc`` extra (imported then, and only then)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence

from ._bindings import HTTP_JSON, JSONRPC
from ._cards import Endpoint
from ._channel import Channel
from ._grpc import GRPC
from ._rest import RestChannel
from ._rpc import RPCChannel
from ._transport import Transport, expand_headers

__all__ = ["Channels", "GrpcExtraMissingError"]


class GrpcExtraMissingError(ImportError):
    """The GRPC binding was asked for, and grpcio or protobuf is not installed."""

    def __init__(self, cause: ImportError) -> None:
        super().__init__(f"the GRPC binding needs the 'grpc' extra, which is not installed "
                         f"here ({cause}): pip install 'a2a-wsgi[grpc]'", name=cause.name)


class Channels:
    """``get(binding)``: the channel speaking it; ``close()`` closes what holds connections
    of its own (the gRPC channels: the HTTP ones share the client's session)."""

    def __init__(self, transport: Transport, endpoint: Callable[[], Endpoint],
                 extensions: Sequence[str], *, headers: Mapping[str, str] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self._transport, self._endpoint, self._extensions = transport, endpoint, extensions
        self._templates = dict(headers or {})
        self._environ = environ
        self._made: dict[str, Channel] = {
            JSONRPC: RPCChannel(transport, endpoint, extensions),
            HTTP_JSON: RestChannel(transport, endpoint, extensions),
        }
        self._lock = threading.Lock()

    def get(self, binding: str) -> Channel:
        with self._lock:
            channel = self._made.get(binding)
            if channel is None and binding == GRPC:
                channel = self._made[GRPC] = self._grpc()
        if channel is None:
            raise ValueError(f"no channel speaks the binding {binding!r}")
        return channel

    def _grpc(self) -> Channel:
        try:
            from ._grpc.binding import GrpcBinding
        except ImportError as exc:
            if (exc.name or "").split(".")[0] in ("grpc", "google"):
                raise GrpcExtraMissingError(exc) from exc
            raise
        return GrpcBinding(self._transport, self._endpoint, self._extensions,
                           headers=self._metadata)

    def _metadata(self) -> dict[str, str]:
        """The custom headers, their ``${NAME}`` templates expanded now (as over HTTP)."""
        return expand_headers(self._templates,
                              self._environ if self._environ is not None else os.environ)

    def close(self) -> None:
        with self._lock:
            grpc_binding = self._made.pop(GRPC, None)
        close = getattr(grpc_binding, "close", None)
        if close is not None:
            close()
