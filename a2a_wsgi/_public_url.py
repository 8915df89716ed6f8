"""The public URL an agent card advertises, when the deployment did not name one.

A card must say where the agent is reached: the URL of the app's root (where
its own paths start), to which the card appends ``json_rpc_path`` and
``rest_path`` (:class:`a2a_core._card_endpoint.CardEndpoint`); ``base_url`` and
:func:`~a2a_wsgi._overrides.put_base_url` name that root, never an endpoint.
With neither, the URL is built from the request: scheme, ``Host`` header and
``SCRIPT_NAME`` (the mount point).
The ``Host`` header is the client's word, so it is used only when the host is
in ``trusted_hosts`` (Django's ``ALLOWED_HOSTS`` idea): by default the loopback
names, so a card served on any local port tells the truth and a forged
``Host`` cannot put another site's URL into a card a cache may keep. Behind a
proxy, werkzeug's ``ProxyFix`` rewrites the environ from the forwarded headers
first; this module never reads ``X-Forwarded-*`` itself.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import quote

__all__ = ["LOOPBACK_HOSTS", "UntrustedHostError", "load_host_checks", "normalize_hosts",
           "request_base_url"]

#: Trusted when the deployment names no hosts: the card is right for local use.
LOOPBACK_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")


class UntrustedHostError(RuntimeError):
    """The request's Host is missing, or not one the card may advertise."""

    def __init__(self, host: str) -> None:
        what = f"Host {host!r} is not trusted" if host else "The request names no Host"
        super().__init__(
            f"{what} for the agent card's URL: give the public URL as base_url=... "
            "(or $A2A_BASE_URL in the examples), per request with "
            "a2a_wsgi.put_base_url(environ, url), or list the host in "
            "CardSettings(trusted_hosts=(...)) "
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
    behind a proxy that sets Host itself). The answer depends only on a few
    environ values, so it is remembered for the last few hundred of them (the
    card is the hot path, and clients send the same Host again and again).
    """
    url, host = _base_url(
        str(environ.get("wsgi.url_scheme") or ""), environ.get("HTTP_HOST"),
        environ.get("SERVER_NAME"), environ.get("SERVER_PORT"),
        str(environ.get("SCRIPT_NAME") or ""), trusted)
    if url is None:
        raise UntrustedHostError(host)
    return url


def load_host_checks() -> None:
    """Import what :func:`request_base_url` needs from werkzeug, once, before requests.

    Called while the app assembles (under its lock): werkzeug's modules import each
    other, and several request threads importing them for the first time at once
    could see one half-initialised (``cannot import name 'wrap_file' from partially
    initialized module 'werkzeug.wsgi'``, seen under gthread with 4 threads).
    """
    import werkzeug.exceptions  # noqa: F401
    import werkzeug.wsgi  # noqa: F401


@functools.lru_cache(maxsize=256)
def _base_url(scheme: str, host_header: str | None, server_name: str | None,
              server_port: str | None, script_name: str,
              trusted: tuple[str, ...]) -> tuple[str | None, str]:
    """(the URL, or None when untrusted; the host to name in the error)."""
    from werkzeug.exceptions import SecurityError  # werkzeug only when no base_url is set
    from werkzeug.wsgi import get_host

    environ: dict[str, Any] = {"wsgi.url_scheme": scheme}
    for key, value in (("HTTP_HOST", host_header), ("SERVER_NAME", server_name),
                       ("SERVER_PORT", server_port)):
        if value is not None:
            environ[key] = value
    try:
        host = get_host(environ) if scheme else ""  # validates, drops :80 / :443
    except (SecurityError, KeyError):  # bad characters; no server address either
        host = ""
    if not host or not _is_trusted(_hostname(host), trusted):
        return None, str(host_header or host)
    mount = quote(script_name.rstrip("/"))
    return f"{scheme}://{host}{mount}/", host


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
