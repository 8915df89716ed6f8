"""The public URL an agent card advertises, when the deployment did not name one.

A card must say where the agent is reached. With no ``base_url`` (and no
per-request :func:`~a2a_wsgi.overrides.put_base_url`), the URL is built from
the request: scheme, ``Host`` header and ``SCRIPT_NAME`` (the mount point).
The ``Host`` header is the client's word, so it is used only when the host is
in ``trusted_hosts`` (Django's ``ALLOWED_HOSTS`` idea): by default the loopback
names, so a card served on any local port tells the truth and a forged
``Host`` cannot put another site's URL into a card a cache may keep. Behind a
proxy, werkzeug's ``ProxyFix`` rewrites the environ from the forwarded headers
first; this module never reads ``X-Forwarded-*`` itself.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import quote

from werkzeug.exceptions import SecurityError
from werkzeug.wsgi import get_host

__all__ = ["LOOPBACK_HOSTS", "UntrustedHostError", "request_base_url", "normalize_hosts"]

#: Trusted when the deployment names no hosts: the card is right for local use.
LOOPBACK_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")


class UntrustedHostError(RuntimeError):
    """The request's Host is missing, or not one the card may advertise."""

    def __init__(self, host: str) -> None:
        what = f"Host {host!r} is not trusted" if host else "The request names no Host"
        super().__init__(
            f"{what} for the agent card's URL: give the public URL as base_url=... "
            "(or $A2A_BASE_URL in the examples), per request with "
            "a2a_wsgi.put_base_url(environ, url), or list the host in trusted_hosts=[...] "
            "(or $A2A_TRUSTED_HOSTS)"
        )
        self.host = host


def normalize_hosts(hosts: Collection[str] | None,
                    environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """Lower-case names without IPv6 brackets.

    None means ``$A2A_TRUSTED_HOSTS`` (comma-separated) when set, else
    :data:`LOOPBACK_HOSTS`.
    """
    if hosts is None:
        from_env = environ.get("A2A_TRUSTED_HOSTS")
        if not from_env:
            return LOOPBACK_HOSTS
        hosts = from_env.split(",")
    if isinstance(hosts, str):
        hosts = [hosts]
    return tuple(_bare(host.strip().lower()) for host in hosts if host.strip())


def request_base_url(environ: Mapping[str, Any], trusted: tuple[str, ...]) -> str:
    """``scheme://host[:port]/mount/`` of this request; raises :class:`UntrustedHostError`.

    ``trusted`` entries match a host exactly, ``".example.com"`` matches the
    domain and its subdomains, and ``"*"`` matches any host (only sensible
    behind a proxy that sets Host itself).
    """
    try:
        host = get_host(dict(environ))  # validates the characters, drops :80 / :443
    except (SecurityError, KeyError):  # bad characters; an environ with no url scheme
        host = ""
    if not host or not _is_trusted(_hostname(host), trusted):
        raise UntrustedHostError(str(environ.get("HTTP_HOST") or host))
    scheme = str(environ.get("wsgi.url_scheme") or "http")
    mount = quote(str(environ.get("SCRIPT_NAME") or "").rstrip("/"))
    return f"{scheme}://{host}{mount}/"


def _hostname(host: str) -> str:
    """``"[::1]:8000"`` -> ``"::1"``, ``"Example.COM:80"`` -> ``"example.com"``."""
    host = host.lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if ":" in host else host


def _bare(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _is_trusted(hostname: str, trusted: tuple[str, ...]) -> bool:
    for entry in trusted:
        if entry == "*" or entry == hostname:
            return True
        if entry.startswith(".") and (hostname == entry[1:] or hostname.endswith(entry)):
            return True
    return False
