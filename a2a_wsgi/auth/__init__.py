"""Authenticating A2A requests against the schemes the agent card declares.

Every authenticator reads an :class:`AuthRequest` (headers, query, cookies,
peer) and answers an identity (:class:`~a2a_core.auth.Principal`), None (no
credentials of its scheme) or an :class:`AuthError` that carries its HTTP
answer: 401 with a ``WWW-Authenticate`` challenge naming the scheme, or 403.
Each also declares itself on the card (``securitySchemes`` and a security
requirement); :class:`AuthPolicy` combines several and adds them to a card.

Schemes: :class:`BearerAuthenticator`, :class:`BasicAuthenticator` (callbacks),
:class:`JWTBearerAuthenticator` (a :class:`JWTVerifier` against a key or a JWKS
URL), :class:`OAuth2Authenticator` (JWT or token introspection),
:class:`OpenIDConnectAuthenticator`, :class:`APIKeyAuthenticator` (header,
query or cookie) and :class:`MutualTLSAuthenticator` (a client certificate
forwarded by a trusted proxy). Credentials never appear in reprs, error
messages or logs.

``A2AApp(auth=...)`` runs a policy on every request (:mod:`.wsgi`); inside the
protocol a refusal is :class:`UnauthenticatedError` (-31401) or
:class:`UnauthorizedError` (-31403). See ``docs/security.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_core._lazy import lazy_exports

if TYPE_CHECKING:
    from .apikey import APIKeyAuthenticator as APIKeyAuthenticator
    from .base import DEFAULT_MAX_CREDENTIAL_BYTES as DEFAULT_MAX_CREDENTIAL_BYTES
    from .base import AllOf as AllOf
    from .base import Authenticator as Authenticator
    from .base import AuthPolicy as AuthPolicy
    from .base import AuthRequest as AuthRequest
    from .errors import AuthenticationRequiredError as AuthenticationRequiredError
    from .errors import AuthError as AuthError
    from .errors import InvalidCredentialsError as InvalidCredentialsError
    from .errors import PermissionDeniedError as PermissionDeniedError
    from .errors import UnauthenticatedError as UnauthenticatedError
    from .errors import UnauthorizedError as UnauthorizedError
    from .http import BasicAuthenticator as BasicAuthenticator
    from .http import BearerAuthenticator as BearerAuthenticator
    from .jwks import JWKSFetcher as JWKSFetcher
    from .jwt import JWTBearerAuthenticator as JWTBearerAuthenticator
    from .jwt import JWTVerifier as JWTVerifier
    from .mtls import MutualTLSAuthenticator as MutualTLSAuthenticator
    from .oauth2 import OAuth2Authenticator as OAuth2Authenticator
    from .oauth2 import OpenIDConnectAuthenticator as OpenIDConnectAuthenticator

__all__ = [
    "APIKeyAuthenticator",
    "AllOf",
    "AuthError",
    "AuthPolicy",
    "AuthRequest",
    "AuthenticationRequiredError",
    "Authenticator",
    "BasicAuthenticator",
    "BearerAuthenticator",
    "DEFAULT_MAX_CREDENTIAL_BYTES",
    "InvalidCredentialsError",
    "JWKSFetcher",
    "JWTBearerAuthenticator",
    "JWTVerifier",
    "MutualTLSAuthenticator",
    "OAuth2Authenticator",
    "OpenIDConnectAuthenticator",
    "PermissionDeniedError",
    "UnauthenticatedError",
    "UnauthorizedError",
]

#: Where each name lives (imported on first use, :mod:`a2a_core._lazy`).
_WHERE = {
    "APIKeyAuthenticator": "a2a_wsgi.auth.apikey",
    "DEFAULT_MAX_CREDENTIAL_BYTES": "a2a_wsgi.auth.base",
    "AllOf": "a2a_wsgi.auth.base",
    "Authenticator": "a2a_wsgi.auth.base",
    "AuthPolicy": "a2a_wsgi.auth.base",
    "AuthRequest": "a2a_wsgi.auth.base",
    "AuthenticationRequiredError": "a2a_wsgi.auth.errors",
    "AuthError": "a2a_wsgi.auth.errors",
    "InvalidCredentialsError": "a2a_wsgi.auth.errors",
    "PermissionDeniedError": "a2a_wsgi.auth.errors",
    "UnauthenticatedError": "a2a_wsgi.auth.errors",
    "UnauthorizedError": "a2a_wsgi.auth.errors",
    "BasicAuthenticator": "a2a_wsgi.auth.http",
    "BearerAuthenticator": "a2a_wsgi.auth.http",
    "JWKSFetcher": "a2a_wsgi.auth.jwks",
    "JWTBearerAuthenticator": "a2a_wsgi.auth.jwt",
    "JWTVerifier": "a2a_wsgi.auth.jwt",
    "MutualTLSAuthenticator": "a2a_wsgi.auth.mtls",
    "OAuth2Authenticator": "a2a_wsgi.auth.oauth2",
    "OpenIDConnectAuthenticator": "a2a_wsgi.auth.oauth2",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
