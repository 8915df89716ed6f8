"""Per-request overrides carried in the WSGI environ: base URL, metadata, identity.

A middleware in front of :class:`~a2a_wsgi._app.A2AApp` (a plain WSGI
wrapper, a Flask ``before_request`` hook, a Django middleware) knows things
about one request that the app cannot: the tenant's public URL, metadata for
the agent, the authenticated caller. It writes them into the environ with
these functions; the app reads them back for that request only. Everything
lives under one environ key, so nothing leaks between requests.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from a2a_core.auth import Principal

if TYPE_CHECKING:
    from ._app import A2AApp

__all__ = [
    "put_base_url",
    "get_base_url",
    "put_metadata",
    "get_metadata",
    "put_identity",
    "get_identity",
    "get_agent_card",
]

#: The environ key holding this request's overrides (a dict).
ENVIRON_KEY = "a2a.overrides"

Environ = MutableMapping[str, Any]


def _overrides(environ: Environ) -> dict[str, Any]:
    """The override dict of this request, created on first write."""
    found = environ.get(ENVIRON_KEY)
    if not isinstance(found, dict):
        found = environ[ENVIRON_KEY] = {}
    return found


def put_base_url(environ: Environ, url: str) -> None:
    """Serve this request as if the app's root were at ``url`` (card URLs, ETag).

    ``url`` names the root, not an endpoint: the card adds ``json_rpc_path`` and
    ``rest_path`` to it, as it does to ``base_url=``.
    """
    if not isinstance(url, str) or not url:
        raise ValueError("base_url must be a non-empty string")
    _overrides(environ)["base_url"] = url


def get_base_url(environ: Mapping[str, Any]) -> str | None:
    """The base URL set by :func:`put_base_url` for this request, or None."""
    if ENVIRON_KEY not in environ:  # (no override: the usual request)
        return None
    found = environ[ENVIRON_KEY]
    return found.get("base_url") if isinstance(found, dict) else None


def put_metadata(environ: Environ, metadata: Mapping[str, Any]) -> None:
    """Metadata for the agent; merged over the app's static metadata, under params.metadata.

    Calling it twice merges (later keys win), so several middlewares can each add theirs.
    """
    if not isinstance(metadata, Mapping):
        raise TypeError("metadata must be a mapping")
    store = _overrides(environ)
    store["metadata"] = {**store.get("metadata", {}), **metadata}


def get_metadata(environ: Mapping[str, Any]) -> dict[str, Any] | None:
    """The metadata set by :func:`put_metadata` for this request, or None."""
    if ENVIRON_KEY not in environ:  # (no override: the usual request)
        return None
    found = environ[ENVIRON_KEY]
    return found.get("metadata") if isinstance(found, dict) else None


def put_identity(environ: Environ, identity: str | Principal | None) -> None:
    """Record who the caller authenticated as; the agent sees it under metadata "a2a.auth".

    A string (``"user:1"``) becomes a :class:`~a2a_core.auth.Principal`, the one
    type every caller has (``context.identity``), as one an authenticator found
    would; None records nobody (anonymous). A caller cannot forge it through
    params.metadata: the dispatcher writes it last.

    :raises TypeError: for anything but a str, a Principal or None (a user
        object: name the caller with a string, e.g. ``f"user:{user.pk}"``).
    """
    principal = Principal.of(identity)
    if principal is None:
        if isinstance(environ.get(ENVIRON_KEY), dict):
            environ[ENVIRON_KEY].pop("identity", None)
        return
    _overrides(environ)["identity"] = principal


def get_identity(environ: Mapping[str, Any]) -> Principal | None:
    """The identity set by :func:`put_identity` (a Principal), or None (anonymous)."""
    if ENVIRON_KEY not in environ:  # (no override: the usual request)
        return None
    found = environ[ENVIRON_KEY]
    # A str written into the dict by hand is read as put_identity would have stored it.
    return Principal.of(found.get("identity")) if isinstance(found, dict) else None


def get_agent_card(
    app: A2AApp, environ: Mapping[str, Any]
) -> tuple[str, list[tuple[str, str]], bytes]:
    """The card response for a custom route: status, headers, body.

    Works even when the app's own card route is disabled. Conditional
    request headers in ``environ`` are honoured (a 304 has an empty body),
    and the per-request base URL override applies.
    """
    response = app.card_response(environ)
    phrase = HTTPStatus(response.status).phrase
    body = response.body if isinstance(response.body, bytes) else b"".join(response.body)
    return f"{response.status} {phrase}", list(response.headers), body
