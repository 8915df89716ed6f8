"""Bearer JWTs (RFC 7519) checked here: signature against a key or a JWKS URL, then claims.

The signature is checked by :mod:`a2a_core.signing` (PyJWT underneath), with the
allow-list and key choice card signing uses: ES256, EdDSA, RS256 by default,
``none`` and HMAC never, so a token cannot choose how it is checked. The claims
then have to say the token is for us, now: ``iss`` and ``aud`` match (a check is
skipped only when configured as None), ``exp``/``nbf``/``iat`` hold with
``leeway`` seconds of skew, and the required ``scopes`` are granted (``scope`` or
``scp``; otherwise 403 ``insufficient_scope``). The claim checks are ours, not
PyJWT's: its read the wall clock (no ``clock=``), and token introspection
answers (:mod:`.oauth2`) need the same checks without a JWT.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from a2a_core.auth import Principal
from a2a_core.signing import (
    ALGORITHMS,
    KeySource,
    SignatureError,
    check_algorithms,
    verify_compact,
)

from ._base import DEFAULT_MAX_CREDENTIAL_BYTES
from ._http import BearerAuthenticator
from ._jwks import JWKSFetcher

__all__ = ["JWTBearerAuthenticator", "JWTVerifier", "check_claims", "granted_scopes", "names"]

_TOKEN_TYPES = {"jwt", "at+jwt", "application/jwt", "application/at+jwt"}
_REASONS = {
    "MalformedSignatureError": "malformed token",
    "UnsupportedAlgorithmError": "token algorithm not accepted",
    "UnknownKeyError": "token signed by an unknown key",
    "InvalidSignatureError": "token signature invalid",
}


def granted_scopes(claims: Mapping[str, Any]) -> set[str]:
    """The scopes a token or introspection answer grants (``scope`` string or ``scp`` list)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return set(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return {s for s in scp if isinstance(s, str)}
    return set(scp.split()) if isinstance(scp, str) else set()


class JWTVerifier:
    """Checks one JWT's signature and claims; :meth:`claims` returns them or raises why not.

    Exactly one of ``keys`` (a key, JWK, JWKS or lookup; see
    :func:`a2a_core.signing.verify_compact`) or ``jwks_url`` is given.
    ``issuer`` and ``audience`` must be passed: None turns that check off.
    """

    def __init__(self, *, issuer: str | Sequence[str] | None,
                 audience: str | Sequence[str] | None,
                 keys: KeySource | None = None, jwks_url: str | None = None,
                 algorithms: Sequence[str] = ALGORITHMS, leeway: float = 30.0,
                 required_claims: Sequence[str] = ("exp",),
                 clock: Callable[[], float] = time.time,
                 jwks_options: Mapping[str, Any] | None = None) -> None:
        if (keys is None) == (jwks_url is None):
            raise ValueError("give exactly one of keys= or jwks_url=")
        self.keys: KeySource = keys if keys is not None else \
            JWKSFetcher(jwks_url or "", **dict(jwks_options or {}))
        self.issuers = names(issuer)
        self.audiences = names(audience)
        self.algorithms = check_algorithms(algorithms)
        self.leeway = leeway
        self.required_claims = tuple(required_claims)
        self._clock = clock

    def __repr__(self) -> str:
        return f"JWTVerifier(issuer={self.issuers!r}, audience={self.audiences!r})"

    def claims(self, token: str) -> dict[str, Any]:
        """The token's claims once signature and claims check out.

        :raises ValueError: with a short, value-free reason.
        """
        try:
            header, payload = verify_compact(token, self.keys, self.algorithms)
        except SignatureError as exc:  # the class says it all; the reason is client-safe
            raise ValueError(_REASONS.get(type(exc).__name__, "token not accepted")) from None
        if header.get("typ", "jwt").lower() not in _TOKEN_TYPES:  # a string when present
            raise ValueError("not a JWT (typ)")
        try:
            claims = json.loads(payload)
        except ValueError:
            raise ValueError("the token's claims are not JSON") from None
        if not isinstance(claims, dict):
            raise ValueError("the token's claims are not a JSON object")
        check_claims(claims, issuers=self.issuers, audiences=self.audiences,
                     leeway=self.leeway, now=self._clock(), required=self.required_claims)
        return claims


def check_claims(claims: Mapping[str, Any], *, issuers: tuple[str, ...] | None,
                 audiences: tuple[str, ...] | None, leeway: float, now: float,
                 required: Sequence[str] = ()) -> None:
    """The claim checks of a JWT, also applied to a token introspection answer."""
    for name in required:
        if name not in claims:
            raise ValueError(f"the token has no {name} claim")
    exp, nbf, iat = (_number(claims, name) for name in ("exp", "nbf", "iat"))
    if exp is not None and now > exp + leeway:
        raise ValueError("the token has expired")
    if nbf is not None and now + leeway < nbf:
        raise ValueError("the token is not valid yet")
    if iat is not None and now + leeway < iat:
        raise ValueError("the token was issued in the future")
    if issuers is not None and claims.get("iss") not in issuers:
        raise ValueError("the token is from another issuer")
    aud = claims.get("aud")
    named = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if audiences is not None and not any(a in audiences for a in named if isinstance(a, str)):
        raise ValueError("the token is for another audience")


def names(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError("issuer/audience must be non-empty strings (or None to skip the check)")
    return names


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"the token's {name} claim is not a number")
    return float(value)


class JWTBearerAuthenticator(BearerAuthenticator):
    """``Authorization: Bearer <JWT>`` checked by a :class:`JWTVerifier`.

    The identity is the ``identity_claim`` (``sub``), the tenant the
    ``tenant_claim`` when set, and the claims travel in ``Principal.claims``.
    ``authorize(claims)`` may refuse an authenticated caller (False: 403).
    """

    def __init__(self, verifier: JWTVerifier, *, scopes: Sequence[str] = (),
                 identity_claim: str = "sub", tenant_claim: str | None = None,
                 authorize: Callable[[Mapping[str, Any]], bool] | None = None,
                 scheme_name: str = "bearer", realm: str = "a2a",
                 description: str | None = None,
                 max_header_bytes: int = DEFAULT_MAX_CREDENTIAL_BYTES) -> None:
        super().__init__(lambda token: None, scheme_name=scheme_name, bearer_format="JWT",
                         realm=realm, description=description, max_header_bytes=max_header_bytes)
        self.verifier = verifier
        self.scopes = tuple(scopes)
        self.identity_claim = identity_claim
        self.tenant_claim = tenant_claim
        self._authorize = authorize

    def __repr__(self) -> str:
        return f"{type(self).__name__}(scheme_name={self.scheme_name!r}, {self.verifier!r})"

    def verify_token(self, token: str) -> Principal:
        try:
            claims = self.verifier.claims(token)
        except ValueError as exc:
            raise self.invalid(str(exc)) from None
        return self.admit(claims)

    def admit(self, claims: Mapping[str, Any]) -> Principal:
        """Scopes, the application's check, then the Principal (shared with introspection)."""
        if not set(self.scopes) <= granted_scopes(claims):
            raise self.denied("the token lacks a required scope")
        if self._authorize is not None and not self._authorize(claims):
            raise self.denied("not allowed", "access_denied")
        identity = claims.get(self.identity_claim)
        if not isinstance(identity, str) or not identity:
            raise self.invalid(f"the token has no {self.identity_claim} claim")
        tenant = claims.get(self.tenant_claim) if self.tenant_claim else None
        return Principal(identity=identity, tenant=tenant if isinstance(tenant, str) else None,
                         claims=dict(claims))
