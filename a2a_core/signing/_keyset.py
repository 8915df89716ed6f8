"""When to (re)fetch a JWKS, and the keys it held: the policy without the fetching.

A verifier that trusts a JWKS URL caches the document, fetches it again when
it is older than ``ttl`` and, when a token or card names a ``kid`` it does not
hold (the signer rotated its keys), at most once every ``min_refresh``
seconds: a stream of forged kids must not turn the verifier into a flood
against the key server. A failed fetch counts as an attempt too, and keeps
the keys held so far. A response's ``Cache-Control`` (``max-age``,
``no-cache``, ``no-store``) shortens ``ttl`` for that document, never below
``min_refresh``; it cannot lengthen it, so a rotation is noticed within ``ttl``.
The caller does the HTTP and passes the time in, so a2a_wsgi and a2a_client
share this logic; the keys themselves are read by PyJWT when a JWS is checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["JWKSCache", "cache_max_age"]


class JWKSCache:
    """The keys of one JWKS document and the fetch schedule for it (not thread-safe)."""

    def __init__(self, *, ttl: float = 300.0, min_refresh: float = 30.0) -> None:
        if ttl <= 0 or min_refresh < 0:
            raise ValueError("ttl must be positive and min_refresh not negative")
        self.ttl = ttl
        self.min_refresh = min_refresh
        self._keys: list[Mapping[str, Any]] = []
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._fresh_for = ttl

    def __repr__(self) -> str:
        return f"JWKSCache(kids={self.kids()!r})"

    def kids(self) -> list[str]:
        return [k["kid"] for k in self._keys if isinstance(k.get("kid"), str)]

    def wants_fetch(self, kid: str | None, now: float) -> bool:
        """Whether to fetch before looking ``kid`` up at ``now`` (seconds, any monotonic clock)."""
        if self._attempted_at is not None and now - self._attempted_at < self.min_refresh:
            return False  # fetched (or failed) a moment ago: do not hammer the key server
        if self._fetched_at is None or now - self._fetched_at >= self._fresh_for:
            return True
        return kid is not None and kid not in self.kids()

    def receive(self, document: Any, now: float, *, max_age: float | None = None) -> None:
        """Take a fetched JWKS document (``max_age``: from :func:`cache_max_age`).

        :raises ValueError: it is not a JWKS (and nothing changes but the attempt).
        """
        self._attempted_at = now
        keys = document.get("keys") if isinstance(document, Mapping) else None
        if not isinstance(keys, list) or not all(isinstance(k, Mapping) for k in keys):
            raise ValueError("a JWKS is a JSON object with a list of keys")
        self._keys = [dict(k) for k in keys]
        self._fetched_at = now
        self._fresh_for = self.ttl if max_age is None else \
            min(self.ttl, max(self.min_refresh, max_age))

    def failed(self, now: float) -> None:
        """Record a failed fetch: no new attempt before ``min_refresh``; old keys kept."""
        self._attempted_at = now

    def document(self) -> dict[str, Any]:
        """The keys held, as a JWKS (a key source for :func:`~a2a_core.signing.verify_card`)."""
        return {"keys": [dict(k) for k in self._keys]}


def cache_max_age(cache_control: str | None) -> float | None:
    """Seconds a response may be reused by its ``Cache-Control`` (None: it does not say)."""
    directives: dict[str, str] = {}
    for item in (cache_control or "").split(","):
        name, _, value = item.strip().partition("=")
        directives[name.strip().lower()] = value.strip().strip('"')
    if "no-store" in directives or "no-cache" in directives:
        return 0.0
    max_age = directives.get("max-age", "")
    return float(max_age) if max_age.isdigit() else None
