"""The gRPC binding's card side, without grpcio: which interface, at which target.

:mod:`a2a_client._bindings` can ask these whatever is installed; speaking the binding needs
the ``grpc`` extra (:mod:`a2a_client.grpc_binding`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from a2a_core.models import AgentCard, AgentInterface

from .._cards import Endpoint

__all__ = ["GRPC", "grpc_http_url", "grpc_target", "select_grpc_endpoint", "speaks_grpc"]

#: The card's ``protocolBinding`` for this binding.
GRPC = "GRPC"
_VERSION = "1.0"
_CLEAR = ("", "grpc", "http")
_TLS = ("grpcs", "https")


def speaks_grpc(interface: AgentInterface) -> bool:
    """A GRPC interface of protocol version 1 or later (0.3's gRPC is another proto)."""
    head = (interface.protocol_version or "").strip().split(".", 1)[0]
    return interface.protocol_binding.upper() == GRPC and head.isdigit() and int(head) >= 1


def select_grpc_endpoint(card: AgentCard) -> Endpoint | None:
    """The card's first gRPC interface of version 1.x, if it has one (its tenant kept).

    Its URL is taken as written: a gRPC target is not resolved against the card's URL.
    """
    for interface in card.supported_interfaces:
        if speaks_grpc(interface):
            return Endpoint(url=interface.url, version=_VERSION, tenant=interface.tenant,
                            binding=GRPC)
    return None


def grpc_target(url: str) -> tuple[str, bool]:
    """An interface URL as a gRPC target (``host:port``) and whether it is spoken over TLS:
    ``host:port``, ``grpc://`` and ``http://`` are cleartext, ``grpcs://`` and ``https://``
    TLS.

    :raises ValueError: a scheme this binding cannot speak, or no port.
    """
    scheme, rest = (url.split("://", 1) if "://" in url else ("", url))
    if scheme.lower() not in _CLEAR + _TLS:
        raise ValueError(f"a gRPC interface URL is host:port, grpc:// or grpcs://, not {url!r}")
    netloc = urlsplit(f"//{rest}").netloc
    try:
        port = urlsplit(f"//{netloc}").port
    except ValueError:
        port = None
    if not netloc or port is None:
        raise ValueError(f"the gRPC interface URL {url!r} names no port")
    return netloc, scheme.lower() in _TLS


def grpc_http_url(url: str) -> str:
    """The interface URL as ``http(s)://host:port/``: the origin the client's credentials
    rule compares, and the URL an ``AuthBase`` reads."""
    target, tls = grpc_target(url)
    return f"{'https' if tls else 'http'}://{target}/"
