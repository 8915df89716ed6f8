"""Fetching a JWKS over HTTP, for verifiers that trust a key URL.

When to fetch is :class:`a2a_core.signing.JWKSCache`'s schedule; this adds the
request: ``requests`` with a timeout, no redirects, no environment proxies, a
size cap. Only the URL given here is ever fetched: a ``jku`` named by a token
or card is ignored, or anyone could point us at keys of their own.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import requests

from a2a_core.signing import JWKSCache

__all__ = ["JWKSFetcher"]

log = logging.getLogger("a2a_wsgi.auth")


class JWKSFetcher:
    """A key source (``(kid, jku) -> JWKS``) backed by one JWKS URL; thread-safe."""

    def __init__(self, url: str, *, timeout: float | tuple[float, float] = 5.0,
                 ttl: float = 300.0, min_refresh: float = 30.0,
                 session: requests.Session | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 max_bytes: int = 1_000_000) -> None:
        self.url = url
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._cache = JWKSCache(ttl=ttl, min_refresh=min_refresh)
        if session is None:  # no proxies or netrc from the environment: the URL is configuration
            session = requests.Session()
            session.trust_env = False
        self._session = session
        self._clock = clock
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"JWKSFetcher({self.url!r})"

    def __call__(self, kid: str | None, jku: str | None = None) -> dict[str, Any]:
        """The keys held after fetching when the schedule says so (``jku`` is ignored)."""
        with self._lock:
            now = self._clock()
            if self._cache.wants_fetch(kid, now):
                try:
                    document, cache_control = self._get()
                    self._cache.receive(document, now, cache_control=cache_control)
                except (requests.RequestException, ValueError) as exc:
                    self._cache.failed(now)
                    log.warning("JWKS fetch from %s failed: %s", self.url, type(exc).__name__)
            return self._cache.document()

    def _get(self) -> tuple[Any, str | None]:
        """The JWKS document and the response's ``Cache-Control``."""
        with self._session.get(self.url, timeout=self.timeout, allow_redirects=False,
                               stream=True, headers={"Accept": "application/json"}) as response:
            response.raise_for_status()
            body = response.raw.read(self.max_bytes + 1, decode_content=True)
        if len(body) > self.max_bytes:
            raise ValueError("the JWKS is too large")
        return json.loads(body), response.headers.get("Cache-Control")
