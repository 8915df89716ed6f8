"""Addresses the ``a2a inspect`` proxy never connects to: link-local and cloud metadata.

A card (or a DNS name) must not turn the inspector into a way to reach the
metadata service of the machine it runs on. Literal hosts are judged before a
request is sent; every connection is judged again by the address it actually
reached (:class:`CheckedAdapter`), so a name that resolves, or re-resolves, to
such an address is cut before a byte is written.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["BlockedAddressError", "CheckedAdapter", "address_problem", "host_problem"]

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Metadata and platform endpoints that are not link-local (or not only).
_METADATA = frozenset(ipaddress.ip_address(text) for text in (
    "169.254.169.254", "169.254.170.2", "fd00:ec2::254", "fd00:ec2::123",
    "100.100.100.200", "168.63.129.16", "192.0.0.192",
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class BlockedAddressError(OSError):
    """The connection reached an address the inspector never talks to."""


def _unwrapped(address: _Address) -> _Address:
    """An IPv4 address carried in IPv6 (mapped, NAT64) judged as itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def address_problem(text: str) -> str | None:
    """Why the inspector refuses to connect to ``text`` (an IP address); None if it may."""
    try:
        address = _unwrapped(ipaddress.ip_address(text.split("%", 1)[0]))
    except ValueError:
        return None
    if address in _METADATA:
        return f"{text} is a cloud metadata address"
    if address.is_link_local:
        return f"{text} is a link-local address"
    if address.is_unspecified or address.is_multicast:
        return f"{text} is not a host address"
    return None


def host_problem(host: str) -> str | None:
    """Why a URL's host is refused before any lookup (a literal address); None otherwise."""
    return address_problem(host.strip("[]"))


def _check_peer(sock: socket.socket) -> None:
    peer = sock.getpeername()[0]
    problem = address_problem(str(peer))
    if problem is not None:
        sock.close()
        raise BlockedAddressError(f"refused: {problem}")


class _CheckedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _check_peer(sock)
        return sock


class _CheckedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _check_peer(sock)
        return sock


class _CheckedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _CheckedHTTPConnection


class _CheckedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _CheckedHTTPSConnection


class CheckedAdapter(HTTPAdapter):
    """A ``requests`` adapter whose every new connection is judged by the peer it reached."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _CheckedHTTPPool, "https": _CheckedHTTPSPool}
