"""Who may open the inspector: someone on this machine, or an authenticated caller.

"On this machine" is stricter than a loopback peer address. A reverse proxy
on the same host makes every visitor's request come from 127.0.0.1, so a
request carrying a forwarding header (``Forwarded``, ``X-Forwarded-For``,
``X-Real-IP``) is not taken as local. The ``Host`` must name loopback too:
a page on another site that rebinds its DNS name to 127.0.0.1 reaches the
port with its own name in ``Host``, and is refused.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from .._overrides import get_identity

__all__ = ["is_loopback", "is_loopback_host", "may_inspect"]

_FORWARDING = ("HTTP_FORWARDED", "HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP")


def is_loopback(environ: Mapping[str, Any]) -> bool:
    """The request came from this machine, directly, to a loopback name."""
    if not _is_loopback_address(str(environ.get("REMOTE_ADDR") or "")):
        return False
    if any(environ.get(key) for key in _FORWARDING):
        return False
    host = str(environ.get("HTTP_HOST") or environ.get("SERVER_NAME") or "")
    return is_loopback_host(host)


def may_inspect(environ: Mapping[str, Any]) -> bool:
    """Loopback, or a caller a middleware authenticated (``put_identity``)."""
    return is_loopback(environ) or get_identity(environ) is not None


def _is_loopback_address(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def is_loopback_host(host: str) -> bool:
    """``localhost`` (and ``*.localhost``), ``127.x.y.z`` or ``[::1]``, with any port."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    if name == "localhost" or name.endswith(".localhost"):
        return True
    return _is_loopback_address(name)
