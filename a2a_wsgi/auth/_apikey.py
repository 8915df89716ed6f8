"""API keys (the card's ``apiKey`` scheme) in a header, a query parameter or a cookie.

Keys are checked by ``verify(key)`` or looked up in ``keys`` (key -> identity).
The table is kept as SHA-256 digests, compared with ``hmac.compare_digest``
against every entry, so neither its repr nor the time a lookup takes gives a
key away. A key in the query string ends up in access logs and browser
history: prefer the header.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping

from a2a_core.auth import Principal
from a2a_core.models import APIKeySecurityScheme, SecurityScheme

from ._base import (
    DEFAULT_MAX_CREDENTIAL_BYTES,
    Authenticator,
    AuthRequest,
    VerifyResult,
    quote_param,
)

__all__ = ["APIKeyAuthenticator"]

_LOCATIONS = ("header", "query", "cookie")


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


class APIKeyAuthenticator(Authenticator):
    """An API key named ``name`` at ``location`` ("header", "query" or "cookie")."""

    challenge_scheme = "ApiKey"

    def __init__(self, name: str, location: str = "header", *,
                 keys: Mapping[str, Principal | str] | None = None,
                 verify: Callable[[str], VerifyResult] | None = None,
                 scheme_name: str = "apiKey", realm: str = "a2a",
                 description: str | None = None,
                 max_bytes: int = DEFAULT_MAX_CREDENTIAL_BYTES) -> None:
        if location not in _LOCATIONS:
            raise ValueError(f"location must be one of {_LOCATIONS}, not {location!r}")
        if (keys is None) == (verify is None):
            raise ValueError("give exactly one of keys= or verify=")
        super().__init__(scheme_name=scheme_name, realm=realm, description=description)
        self.name = name
        self.location = location
        self.max_bytes = max_bytes
        self._verify = verify
        self._table = [(_digest(k), v) for k, v in (keys or {}).items()]

    def __repr__(self) -> str:
        return (f"APIKeyAuthenticator(name={self.name!r}, location={self.location!r}, "
                f"keys={len(self._table)})")

    def _read(self, request: AuthRequest) -> str | None:
        if self.location == "header":
            values = request.headers.get_all(self.name)
            if len(values) > 1:
                raise self.invalid("more than one API key", "invalid_request")
            return values[0] if values else None
        source = request.query if self.location == "query" else request.cookies
        return source.get(self.name)

    def authenticate(self, request: AuthRequest) -> Principal | None:
        key = self._read(request)
        if key is None:
            return None
        if len(key) > self.max_bytes:
            raise self.invalid("API key too large", "invalid_request")
        if not key.strip():
            raise self.invalid("empty API key", "invalid_request")
        if self._verify is not None:
            return self.call_verifier(self._verify, key)
        return self.principal_from(self._lookup(key), None)

    def _lookup(self, key: str) -> Principal | str | None:
        digest, found = _digest(key), None
        for candidate, identity in self._table:  # no early exit: same time for hit and miss
            if hmac.compare_digest(candidate, digest):
                found = identity
        return found

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        base = super().challenge(error, description)
        return f"{base}, in={quote_param(self.location)}, name={quote_param(self.name)}"

    def security_scheme(self) -> SecurityScheme:
        return APIKeySecurityScheme(name=self.name, location=self.location,
                                    description=self.description)
