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
    from ._apikey import APIKeyAuthenticator as APIKeyAuthenticator
    from ._base import DEFAULT_MAX_CREDENTIAL_BYTES as DEFAULT_MAX_CREDENTIAL_BYTES
    from ._base import AllOf as AllOf
    from ._base import Authenticator as Authenticator
    from ._base import AuthPolicy as AuthPolicy
    from ._base import AuthRequest as AuthRequest
    from ._errors import AuthenticationRequiredError as AuthenticationRequiredError
    from ._errors import AuthError as AuthError
    from ._errors import InvalidCredentialsError as InvalidCredentialsError
    from ._errors import PermissionDeniedError as PermissionDeniedError
    from ._errors import UnauthenticatedError as UnauthenticatedError
    from ._errors import UnauthorizedError as UnauthorizedError
    from ._http import BasicAuthenticator as BasicAuthenticator
    from ._http import BearerAuthenticator as BearerAuthenticator
    from ._jwks import JWKSFetcher as JWKSFetcher
    from ._jwt import JWTBearerAuthenticator as JWTBearerAuthenticator
    from ._jwt import JWTVerifier as JWTVerifier
    from ._mtls import MutualTLSAuthenticator as MutualTLSAuthenticator
    from ._oauth2 import OAuth2Authenticator as OAuth2Authenticator
    from ._oauth2 import OpenIDConnectAuthenticator as OpenIDConnectAuthenticator

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
    "APIKeyAuthenticator": "a2a_wsgi.auth._apikey",
    "DEFAULT_MAX_CREDENTIAL_BYTES": "a2a_wsgi.auth._base",
    "AllOf": "a2a_wsgi.auth._base",
    "Authenticator": "a2a_wsgi.auth._base",
    "AuthPolicy": "a2a_wsgi.auth._base",
    "AuthRequest": "a2a_wsgi.auth._base",
    "AuthenticationRequiredError": "a2a_wsgi.auth._errors",
    "AuthError": "a2a_wsgi.auth._errors",
    "InvalidCredentialsError": "a2a_wsgi.auth._errors",
    "PermissionDeniedError": "a2a_wsgi.auth._errors",
    "UnauthenticatedError": "a2a_wsgi.auth._errors",
    "UnauthorizedError": "a2a_wsgi.auth._errors",
    "BasicAuthenticator": "a2a_wsgi.auth._http",
    "BearerAuthenticator": "a2a_wsgi.auth._http",
    "JWKSFetcher": "a2a_wsgi.auth._jwks",
    "JWTBearerAuthenticator": "a2a_wsgi.auth._jwt",
    "JWTVerifier": "a2a_wsgi.auth._jwt",
    "MutualTLSAuthenticator": "a2a_wsgi.auth._mtls",
    "OAuth2Authenticator": "a2a_wsgi.auth._oauth2",
    "OpenIDConnectAuthenticator": "a2a_wsgi.auth._oauth2",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
