"""HTTP authentication schemes (RFC 9110 §11): ``Bearer`` (RFC 6750) and ``Basic`` (RFC 7617).

Both read the one ``Authorization`` header, refusing it unread (401) when it
is longer than ``max_header_bytes``, and hand the credential to the
application's ``verify`` callback. A header for another auth-scheme is not
theirs: they answer None so the next authenticator may look.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from a2a_core.auth import Principal
from a2a_core.models import HTTPAuthSecurityScheme, SecurityScheme

from ._base import (
    DEFAULT_MAX_CREDENTIAL_BYTES,
    Authenticator,
    AuthRequest,
    VerifyResult,
    quote_param,
)

__all__ = ["BasicAuthenticator", "BearerAuthenticator", "read_authorization"]

#: A bearer token: visible ASCII (``!`` to ``~``), nothing else. RFC 6750's b64token
#: (``A-Z a-z 0-9 - . _ ~ + /`` then ``=`` padding) is a subset; so are the tokens
#: frameworks mint by default: Django's signer (``django.core.signing.dumps``,
#: ``TimestampSigner``: ``:`` separators) and itsdangerous (Flask: ``.``). Whitespace,
#: control characters and non-ASCII are malformed.
_BEARER_TOKEN = re.compile(r"[\x21-\x7e]+")


def read_authorization(authenticator: Authenticator, request: AuthRequest, auth_scheme: str,
                       max_bytes: int) -> str | None:
    """The credentials after ``<auth_scheme> `` in the Authorization header, or None.

    :raises InvalidCredentialsError: an oversized header (checked before anything else is
        looked at), several Authorization headers, or an empty credential.
    """
    values = request.headers.get_all("Authorization")
    if not values:
        return None
    if any(len(value) > max_bytes for value in values):
        raise authenticator.invalid("Authorization header too large", "invalid_request")
    if len(values) > 1:
        raise authenticator.invalid("more than one Authorization header", "invalid_request")
    scheme, _, credentials = values[0].strip().partition(" ")
    if scheme.lower() != auth_scheme.lower():
        return None
    credentials = credentials.strip()
    if not credentials:
        raise authenticator.invalid(f"empty {auth_scheme} credentials", "invalid_request")
    return credentials


class _AuthorizationScheme(Authenticator):
    """What Bearer and Basic share: the application's ``verify`` callback for the credential
    and the longest ``Authorization`` header read (:func:`read_authorization`)."""

    def __init__(self, verify: Callable[..., VerifyResult], *, scheme_name: str, realm: str,
                 description: str | None, max_header_bytes: int) -> None:
        super().__init__(scheme_name=scheme_name, realm=realm, description=description)
        self._verify = verify
        self.max_header_bytes = max_header_bytes

    def __repr__(self) -> str:
        return f"{type(self).__name__}(scheme_name={self.scheme_name!r})"


class BearerAuthenticator(_AuthorizationScheme):
    """``Authorization: Bearer <token>``, checked by ``verify(token)``.

    The token is one or more visible ASCII characters (``!`` to ``~``): RFC 6750's
    b64token and what Django's and itsdangerous' signers mint; anything else (a
    space or a control character inside, non-ASCII) is refused unverified, as is an
    empty token or a header over ``max_header_bytes``.

    ``verify`` answers a :class:`~a2a_core.auth.Principal`, an identity string, or
    None/False to refuse; it may raise :class:`~.errors.PermissionDeniedError` (403).
    """

    challenge_scheme = "Bearer"

    def __init__(self, verify: Callable[[str], VerifyResult], *, scheme_name: str = "bearer",
                 bearer_format: str | None = None, realm: str = "a2a",
                 description: str | None = None,
                 max_header_bytes: int = DEFAULT_MAX_CREDENTIAL_BYTES) -> None:
        super().__init__(verify, scheme_name=scheme_name, realm=realm, description=description,
                         max_header_bytes=max_header_bytes)
        self.bearer_format = bearer_format

    def token(self, request: AuthRequest) -> str | None:
        """The bearer token of the request (syntax checked), or None when there is none."""
        token = read_authorization(self, request, "Bearer", self.max_header_bytes)
        if token is not None and not _BEARER_TOKEN.fullmatch(token):
            raise self.invalid("malformed bearer token", "invalid_request")
        return token

    def authenticate(self, request: AuthRequest) -> Principal | None:
        token = self.token(request)
        if token is None:
            return None
        return self.verify_token(token)

    def verify_token(self, token: str) -> Principal:
        return self.call_verifier(self._verify, token)

    def security_scheme(self) -> SecurityScheme:
        return HTTPAuthSecurityScheme(scheme="Bearer", bearer_format=self.bearer_format,
                                      description=self.description)


class BasicAuthenticator(_AuthorizationScheme):
    """``Authorization: Basic base64(user:password)``, checked by ``verify(user, password)``.

    ``verify`` may also answer True, which authenticates the caller as ``user``.
    Use it over TLS only: the password travels in every request.
    """

    challenge_scheme = "Basic"

    def __init__(self, verify: Callable[[str, str], VerifyResult], *, scheme_name: str = "basic",
                 realm: str = "a2a", description: str | None = None,
                 max_header_bytes: int = DEFAULT_MAX_CREDENTIAL_BYTES) -> None:
        super().__init__(verify, scheme_name=scheme_name, realm=realm, description=description,
                         max_header_bytes=max_header_bytes)

    def authenticate(self, request: AuthRequest) -> Principal | None:
        encoded = read_authorization(self, request, "Basic", self.max_header_bytes)
        if encoded is None:
            return None
        try:
            decoded = base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            raise self.invalid("malformed Basic credentials", "invalid_request") from None
        user, colon, password = decoded.partition(":")
        if not colon:
            raise self.invalid("malformed Basic credentials", "invalid_request")
        return self.call_verifier(self._verify, user, password, default_identity=user)

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        """Basic has no error parameters (RFC 7617): realm and charset only."""
        return f'Basic realm={quote_param(self.realm)}, charset="UTF-8"'

    def security_scheme(self) -> SecurityScheme:
        return HTTPAuthSecurityScheme(scheme="Basic", description=self.description)
