"""What every authenticator shares: the request view, the contract, and the policy over several.

An :class:`Authenticator` looks at an :class:`AuthRequest` (headers, query,
cookies, peer address: nothing else, so it runs before the body is read or any
task is looked up) and answers in one of three ways:

* an identity (:class:`~a2a_core.auth.Principal`): the caller is authenticated;
* ``None``: the request carries no credentials of this scheme, ask the next one;
* an :class:`~.errors.AuthError`: credentials of this scheme are present and
  wrong (401), or the caller is known but not allowed (403).

Each one also declares itself on the card: :meth:`Authenticator.security_schemes`
gives the ``securitySchemes`` entries (core model objects, which the card
codecs spell for 0.3 and 1.0) and :meth:`Authenticator.requirement` the
``security`` requirement it satisfies. :class:`AuthPolicy` tries several in
order (the card's requirements are an OR), and :class:`AllOf` demands several
at once (an AND, e.g. mutual TLS plus a bearer token).
"""

from __future__ import annotations

import dataclasses
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from a2a_core._http import Headers, HttpRequest
from a2a_core.auth import Principal
from a2a_core.models import AgentCard, SecurityRequirement, SecurityScheme

from ._errors import (
    AuthenticationRequiredError,
    AuthError,
    InvalidCredentialsError,
    PermissionDeniedError,
)

__all__ = [
    "AllOf",
    "AuthPolicy",
    "AuthRequest",
    "Authenticator",
    "DEFAULT_MAX_CREDENTIAL_BYTES",
    "VerifyResult",
    "quote_param",
]

log = logging.getLogger("a2a_wsgi.auth")

#: Longest Authorization header (or API key, or certificate header) read at all.
DEFAULT_MAX_CREDENTIAL_BYTES = 8192

#: What a verification callback may answer: a Principal, an identity string, or a refusal
#: (None / False). Raising :class:`~.errors.PermissionDeniedError` answers 403.
VerifyResult = Principal | str | bool | None


@dataclass(frozen=True, slots=True, repr=False)
class AuthRequest:
    """The parts of a request credentials travel in. The repr shows names, never values."""

    headers: Headers = field(default_factory=Headers)
    query: Mapping[str, str] = field(default_factory=dict)
    cookies: Mapping[str, str] = field(default_factory=dict)
    #: The TCP peer (WSGI ``REMOTE_ADDR``): the proxy, when there is one.
    remote_addr: str | None = None

    def __repr__(self) -> str:
        return (f"AuthRequest(headers={self.headers!r}, query={sorted(self.query)}, "
                f"cookies={sorted(self.cookies)}, remote_addr={self.remote_addr!r})")

    @classmethod
    def from_environ(cls, environ: Mapping[str, Any]) -> AuthRequest:
        """The request a WSGI server handed us, read before its body."""
        pairs = [(key[5:].replace("_", "-"), str(value)) for key, value in environ.items()
                 if key.startswith("HTTP_")]
        from werkzeug.http import parse_cookie  # werkzeug only once auth reads a request

        cookies = parse_cookie(str(environ.get("HTTP_COOKIE", "")))
        return cls(headers=Headers(pairs),
                   query=dict(parse_qsl(str(environ.get("QUERY_STRING", "")))),
                   cookies={name: cookies[name] for name in cookies},
                   remote_addr=environ.get("REMOTE_ADDR"))

    @classmethod
    def from_http(cls, request: HttpRequest, *, remote_addr: str | None = None) -> AuthRequest:
        """The same view of a core :class:`~a2a_core._http.HttpRequest`."""
        from werkzeug.http import parse_cookie

        cookies = parse_cookie(request.headers.get("Cookie") or "")
        return cls(headers=request.headers, query=dict(request.query),
                   cookies={name: cookies[name] for name in cookies}, remote_addr=remote_addr)


def quote_param(value: str) -> str:
    """An auth-param value as a quoted string (RFC 9110 §11.2)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Authenticator(ABC):
    """One security scheme: finds the caller in a request, and declares itself on the card."""

    #: The scheme's name in the card's ``securitySchemes``.
    scheme_name: str = ""
    #: Scopes the card's requirement lists for this scheme (OAuth2/OIDC only, usually).
    scopes: tuple[str, ...] = ()
    #: ``realm`` of the WWW-Authenticate challenge.
    realm: str = "a2a"
    #: The scheme's ``description`` on the card.
    description: str | None = None
    #: The challenge's auth-scheme token (``Bearer``, ``Basic``…).
    challenge_scheme: str = ""

    def __init__(self, *, scheme_name: str = "", realm: str = "a2a",
                 description: str | None = None) -> None:
        """What every scheme is declared by: its card name, challenge realm and description."""
        self.scheme_name = scheme_name
        self.realm = realm
        self.description = description

    @abstractmethod
    def authenticate(self, request: AuthRequest) -> Principal | None:
        """The caller, None without credentials of this scheme; AuthError when refused."""

    @abstractmethod
    def security_scheme(self) -> SecurityScheme:
        """The scheme object the card declares under :attr:`scheme_name`."""

    def security_schemes(self) -> dict[str, SecurityScheme]:
        return {self.scheme_name: self.security_scheme()}

    def requirement(self) -> SecurityRequirement:
        """The card's security requirement this authenticator satisfies alone."""
        return {self.scheme_name: list(self.scopes)}

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        """The ``WWW-Authenticate`` value naming this scheme (RFC 6750 ``error`` when given)."""
        params = [f"realm={quote_param(self.realm)}"]
        if error:
            params.append(f"error={quote_param(error)}")
        if description:
            params.append(f"error_description={quote_param(description)}")
        if self.scopes:
            params.append(f"scope={quote_param(' '.join(self.scopes))}")
        return f"{self.challenge_scheme} {', '.join(params)}"

    def invalid(self, reason: str, error: str = "invalid_token") -> InvalidCredentialsError:
        """A 401 for credentials of this scheme that were not accepted (logged, value-free)."""
        log.info("authentication failed: scheme=%s reason=%s", self.scheme_name, reason)
        return InvalidCredentialsError(reason, challenges=[self.challenge(error, reason)],
                                       error=error)

    def denied(self, reason: str, error: str = "insufficient_scope") -> PermissionDeniedError:
        """A 403 for a caller this scheme authenticated but may not proceed."""
        log.info("permission denied: scheme=%s reason=%s", self.scheme_name, reason)
        return PermissionDeniedError(reason, challenges=[self.challenge(error, reason)],
                                     error=error)

    def call_verifier(self, verify: Callable[..., VerifyResult], *args: str,
                      default_identity: str | None = None) -> Principal:
        """Run the application's verification callback and read its answer.

        Any exception but an AuthError refuses (fail closed); only its class is
        logged, since its message might quote the credential.
        """
        failure: str | None = None
        try:
            answer = verify(*args)
        except AuthError:
            raise
        except Exception as exc:
            failure = type(exc).__name__
        if failure is not None:  # raised out here so no __context__ keeps the exception
            log.warning("authentication callback of scheme %s raised %s", self.scheme_name,
                        failure)
            raise self.invalid("credentials could not be verified")
        return self.principal_from(answer, default_identity)

    def principal_from(self, answer: VerifyResult, default_identity: str | None) -> Principal:
        if isinstance(answer, Principal):
            return answer
        if isinstance(answer, str) and answer:
            return Principal(identity=answer)
        if answer is True and default_identity:
            return Principal(identity=default_identity)
        raise self.invalid("credentials not accepted")


def _auth_scheme(challenge: str) -> str:
    """``Bearer`` of ``Bearer realm="a2a"``: one challenge per auth-scheme is enough."""
    return challenge.split(" ", 1)[0].lower()


class AllOf(Authenticator):
    """Several schemes at once (one requirement naming them all): every one must succeed.

    The identity is the first authenticator's; a request missing any of the
    credentials gets 401 with the challenge of each.
    """

    def __init__(self, *authenticators: Authenticator) -> None:
        if len(authenticators) < 2:
            raise ValueError("AllOf needs at least two authenticators")
        self.authenticators = authenticators
        self.scheme_name = "+".join(a.scheme_name for a in authenticators)

    def __repr__(self) -> str:
        return f"AllOf({', '.join(repr(a) for a in self.authenticators)})"

    def authenticate(self, request: AuthRequest) -> Principal | None:
        found = [a.authenticate(request) for a in self.authenticators]
        if all(p is None for p in found):
            return None
        missing = [a for a, p in zip(self.authenticators, found, strict=True) if p is None]
        if missing:
            raise AuthenticationRequiredError(
                "more credentials are required", challenges=[a.challenge() for a in missing])
        return found[0]

    def security_scheme(self) -> SecurityScheme:
        raise TypeError("AllOf declares several schemes: use security_schemes()")

    def security_schemes(self) -> dict[str, SecurityScheme]:
        return {name: scheme for a in self.authenticators
                for name, scheme in a.security_schemes().items()}

    def requirement(self) -> SecurityRequirement:
        return {name: list(scopes) for a in self.authenticators
                for name, scopes in a.requirement().items()}

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        return self.authenticators[0].challenge(error, description)

    def challenges(self) -> list[str]:
        return [a.challenge() for a in self.authenticators]


class AuthPolicy:
    """Authenticators tried in order: the first identity wins (the card's requirements are OR).

    :param required: with no credentials at all, raise 401 (True) or return None
        (False: anonymous callers allowed, e.g. only the extended card needs a login).
    """

    def __init__(self, authenticators: Sequence[Authenticator], *, required: bool = True) -> None:
        if not authenticators:
            raise ValueError("an AuthPolicy needs at least one authenticator")
        names = [n for a in authenticators for n in a.security_schemes()]
        if len(set(names)) != len(names):
            raise ValueError(f"security scheme names must be unique: {names}")
        self.authenticators = tuple(authenticators)
        self.required = required

    def __repr__(self) -> str:
        return f"AuthPolicy({list(self.authenticators)!r}, required={self.required})"

    def authenticate(self, request: AuthRequest) -> Principal | None:
        """The caller, or None (anonymous, when not required).

        :raises AuthError: 401 with every scheme's challenge, or a 403 from a scheme.
        """
        found = self.identify(request)
        if found is None and self.required:
            raise self.required_error()
        return found

    def identify(self, request: AuthRequest) -> Principal | None:
        """The caller, or None when the request carries no credentials of any scheme.

        Whether anonymous callers are admitted is :meth:`authenticate`'s; a host
        adapter that requires a login asks this (``require_login``).

        :raises AuthError: credentials present and refused (401, every scheme's
            challenge, the failing one first), or a 403 from a scheme.
        """
        refused: list[InvalidCredentialsError] = []
        for authenticator in self.authenticators:
            try:
                found = authenticator.authenticate(request)
            except InvalidCredentialsError as exc:
                refused.append(exc)
                continue
            if found is not None:
                return Principal.of(found)  # an authenticator of the application's own too
        if refused:
            first = refused[0]
            raise InvalidCredentialsError(first.reason, error=first.error,
                                          challenges=self._challenges(first.challenges))
        return None

    def require(self, request: AuthRequest) -> Principal:
        """:meth:`authenticate`, but anonymous is never enough (the extended card)."""
        found = self.authenticate(request)
        if found is None:
            raise self.required_error()
        return found

    def required_error(self) -> AuthenticationRequiredError:
        """The 401 for a request without credentials: one challenge per scheme."""
        return AuthenticationRequiredError("authentication required",
                                           challenges=self._challenges(()))

    def _challenges(self, first: Sequence[str]) -> list[str]:
        """The failing scheme's challenge first, then one per other scheme."""
        out = list(first)
        for authenticator in self.authenticators:
            each = authenticator.challenges() if isinstance(authenticator, AllOf) \
                else [authenticator.challenge()]
            for challenge in each:
                if _auth_scheme(challenge) not in {_auth_scheme(c) for c in out}:
                    out.append(challenge)
        return out

    def security_schemes(self) -> dict[str, SecurityScheme]:
        return {name: scheme for a in self.authenticators
                for name, scheme in a.security_schemes().items()}

    def security_requirements(self) -> list[SecurityRequirement]:
        return [a.requirement() for a in self.authenticators]

    def declare(self, card: AgentCard) -> AgentCard:
        """``card`` with these schemes and requirements added (its own entries kept first).

        Declaring twice changes nothing: a requirement the card has is not added again.
        """
        schemes = {**(card.security_schemes or {}), **self.security_schemes()}
        present = [_comparable(r) for r in card.security_requirements]
        requirements = [*card.security_requirements,
                        *(r for r in self.security_requirements()
                          if _comparable(r) not in present)]
        return dataclasses.replace(card, security_schemes=schemes,
                                   security_requirements=requirements)


def _comparable(requirement: SecurityRequirement) -> dict[str, tuple[str, ...]]:
    """A requirement with its scopes as tuples (a card's own are frozen that way)."""
    return {name: tuple(scopes) for name, scopes in requirement.items()}
