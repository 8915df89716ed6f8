"""OAuth 2.0 and OpenID Connect: bearer access tokens, declared as their own card schemes.

An access token is checked one of two ways:

* as a JWT, by a :class:`~.jwt.JWTVerifier` (the usual case with an OpenID
  provider or an authorization server that issues JWT access tokens);
* by token introspection (RFC 7662): ``introspect(token)`` is the
  application's call to the authorization server and answers its JSON (a
  mapping with ``active``, ``sub``, ``scope``, ``exp``, ``aud``, ``iss``…) or
  None. Only ``active: true`` passes; ``exp``, ``iss`` and ``aud`` are checked
  as for a JWT when present (issuer and audience when configured).

Required ``scopes`` missing from the grant answer 403 ``insufficient_scope``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import requests

from a2a_core.auth import Principal
from a2a_core.models import (
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)

from ._base import DEFAULT_MAX_CREDENTIAL_BYTES, log
from ._errors import AuthError
from ._jwt import JWTBearerAuthenticator, JWTVerifier, check_claims, names

__all__ = ["OAuth2Authenticator", "OpenIDConnectAuthenticator"]

Introspect = Callable[[str], Mapping[str, Any] | None]


class OAuth2Authenticator(JWTBearerAuthenticator):
    """Bearer access tokens from an OAuth 2.0 authorization server; card scheme ``oauth2``.

    Give ``verifier`` (JWT access tokens) or ``introspect`` (opaque tokens), not both.
    ``issuer``/``audience`` apply to introspection answers (a verifier has its own).
    """

    def __init__(self, *, flows: OAuthFlows, verifier: JWTVerifier | None = None,
                 introspect: Introspect | None = None, scopes: Sequence[str] = (),
                 issuer: str | Sequence[str] | None = None,
                 audience: str | Sequence[str] | None = None, leeway: float = 30.0,
                 clock: Callable[[], float] = time.time,
                 oauth2_metadata_url: str | None = None, identity_claim: str = "sub",
                 tenant_claim: str | None = None,
                 authorize: Callable[[Mapping[str, Any]], bool] | None = None,
                 scheme_name: str = "oauth2", realm: str = "a2a", description: str | None = None,
                 max_header_bytes: int = DEFAULT_MAX_CREDENTIAL_BYTES) -> None:
        if (verifier is None) == (introspect is None):
            raise ValueError("give exactly one of verifier= or introspect=")
        placeholder = verifier or JWTVerifier(issuer=None, audience=None, keys=[])
        super().__init__(placeholder, scopes=scopes, identity_claim=identity_claim,
                         tenant_claim=tenant_claim, authorize=authorize,
                         scheme_name=scheme_name, realm=realm, description=description,
                         max_header_bytes=max_header_bytes)
        self.flows = flows
        self.oauth2_metadata_url = oauth2_metadata_url
        self._introspect = introspect
        self._issuers, self._audiences = names(issuer), names(audience)
        self._leeway, self._clock = leeway, clock

    def verify_token(self, token: str) -> Principal:
        if self._introspect is None:
            return super().verify_token(token)
        return self.admit(self._introspected(token))

    def _introspected(self, token: str) -> Mapping[str, Any]:
        failure: str | None = None
        try:
            answer = self._introspect(token) if self._introspect else None
        except AuthError:
            raise
        except Exception as exc:  # fail closed; the message might quote the token
            failure = type(exc).__name__
        if failure is not None:  # raised out here so no __context__ keeps the exception
            log.warning("token introspection for scheme %s raised %s", self.scheme_name,
                        failure)
            raise self.invalid("the token could not be checked")
        if not isinstance(answer, Mapping) or answer.get("active") is not True:
            raise self.invalid("the token is not active")
        claims = dict(answer)
        if self.identity_claim not in claims:  # RFC 7662 answers may name the user otherwise
            for fallback in ("username", "client_id"):
                if isinstance(claims.get(fallback), str):
                    claims[self.identity_claim] = claims[fallback]
                    break
        try:
            # RFC 7662 answers may leave iss/aud out: the server we asked vouches for them.
            check_claims(claims, issuers=self._issuers if "iss" in claims else None,
                         audiences=self._audiences if "aud" in claims else None,
                         leeway=self._leeway, now=self._clock())
        except ValueError as exc:
            raise self.invalid(str(exc)) from None
        return claims

    def security_scheme(self) -> SecurityScheme:
        return OAuth2SecurityScheme(flows=self.flows, oauth2_metadata_url=self.oauth2_metadata_url,
                                    description=self.description)


class OpenIDConnectAuthenticator(JWTBearerAuthenticator):
    """Bearer tokens (JWT access or ID tokens) from an OpenID provider; card scheme
    ``openIdConnect`` pointing at its discovery document."""

    def __init__(self, verifier: JWTVerifier, *, open_id_connect_url: str,
                 scopes: Sequence[str] = (), identity_claim: str = "sub",
                 tenant_claim: str | None = None,
                 authorize: Callable[[Mapping[str, Any]], bool] | None = None,
                 scheme_name: str = "openIdConnect", realm: str = "a2a",
                 description: str | None = None,
                 max_header_bytes: int = DEFAULT_MAX_CREDENTIAL_BYTES) -> None:
        super().__init__(verifier, scopes=scopes, identity_claim=identity_claim,
                         tenant_claim=tenant_claim, authorize=authorize, scheme_name=scheme_name,
                         realm=realm, description=description, max_header_bytes=max_header_bytes)
        self.open_id_connect_url = open_id_connect_url

    @classmethod
    def from_discovery(cls, open_id_connect_url: str, *, audience: str | Sequence[str] | None,
                       timeout: float = 5.0, session: requests.Session | None = None,
                       verifier_options: Mapping[str, Any] | None = None,
                       **options: Any) -> OpenIDConnectAuthenticator:
        """Read ``issuer`` and ``jwks_uri`` from the provider's discovery document (once)."""
        http = session or requests.Session()
        try:
            response = http.get(open_id_connect_url, timeout=timeout, allow_redirects=False)
            response.raise_for_status()
            document = response.json()
        finally:
            if session is None:
                http.close()
        issuer = document.get("issuer") if isinstance(document, Mapping) else None
        jwks_uri = document.get("jwks_uri") if isinstance(document, Mapping) else None
        if not isinstance(issuer, str) or not isinstance(jwks_uri, str):
            raise ValueError("the discovery document has no issuer or jwks_uri")
        verifier = JWTVerifier(issuer=issuer, audience=audience, jwks_url=jwks_uri,
                               **dict(verifier_options or {}))
        return cls(verifier, open_id_connect_url=open_id_connect_url, **options)

    def security_scheme(self) -> SecurityScheme:
        return OpenIdConnectSecurityScheme(open_id_connect_url=self.open_id_connect_url,
                                           description=self.description)
