"""Credentials for calling an agent, and checking the signature on its card.

Everything here is a :class:`requests.auth.AuthBase` or turns into one
(:func:`as_auth`), so it works on any ``requests.Session`` the client borrows:

* :class:`BearerAuth`: a fixed token;
* :class:`TokenAuth`: a token from a provider (any callable), asked again
  once when the agent answers 401, e.g. because the token expired early or was
  revoked; the request is then sent once more, never in a loop;
* :class:`ClientCredentials`: such a provider, for OAuth 2.0 client
  credentials against a token URL (cached until shortly before it expires).

:class:`CardVerifier` checks an agent card's signatures with
:func:`a2a_core.signing.verify_card`, against pinned keys or a JWKS URL
fetched (and refreshed on key rotation) with requests. Tokens and secrets
never appear in reprs or error messages.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import requests
from requests.auth import AuthBase, HTTPBasicAuth

from a2a_core.signing import ALGORITHMS, KeySource, VerifiedSignature
from a2a_core.signing import verify_card as _verify_card

from ._errors import ClientError

__all__ = [
    "BearerAuth",
    "CardVerifier",
    "ClientCredentials",
    "TokenAuth",
    "TokenRequestError",
    "as_auth",
    "as_card_verifier",
    "verify_card",
]

_RETRIED = "_a2a_auth_retried"
_FORBIDDEN = ("\r", "\n", "\x00")


def _header_safe(token: Any) -> str:
    """A token fit for a header: a non-empty string without CR, LF or NUL (header injection)."""
    if not isinstance(token, str) or not token.strip() or any(c in token for c in _FORBIDDEN):
        raise ValueError("a token must be a non-empty string without CR, LF or NUL")
    return token


class TokenRequestError(ClientError):
    """The token endpoint refused or failed; the message has its ``error`` code, no secrets."""


class BearerAuth(AuthBase):
    """``Authorization: Bearer <token>`` on every request."""

    def __init__(self, token: str) -> None:
        self._token = _header_safe(token)

    def __repr__(self) -> str:
        return "BearerAuth(token=<hidden>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BearerAuth) and other._token == self._token

    def __hash__(self) -> int:
        return hash(("BearerAuth", self._token))

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self._token}"
        return request


class TokenAuth(AuthBase):
    """A bearer token from ``provider``; on a 401 the token is renewed and the request resent once.

    ``provider`` is any callable returning the current token. If it also has a
    ``refresh()`` method (as :class:`ClientCredentials` does), that is what a
    401 calls; otherwise the provider is simply called again.
    """

    def __init__(self, provider: Callable[[], str], *, scheme: str = "Bearer") -> None:
        self._provider = provider
        self.scheme = scheme

    def __repr__(self) -> str:
        return f"TokenAuth(provider={type(self._provider).__name__})"

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"{self.scheme} {_header_safe(self._provider())}"
        request.register_hook("response", self._retry_on_401)  # type: ignore[no-untyped-call]
        return request

    def _renewed(self) -> str:
        refresh = getattr(self._provider, "refresh", None)
        return _header_safe(refresh() if callable(refresh) else self._provider())

    def _retry_on_401(self, response: requests.Response, **kwargs: Any) -> requests.Response:
        """requests' response hook: one more try with a fresh token (HTTPDigestAuth's pattern)."""
        sent = response.request
        if response.status_code != 401 or getattr(sent, _RETRIED, False):
            return response
        if sent.body is not None and not isinstance(sent.body, (bytes, str)):
            return response  # a streamed body cannot be sent twice
        token = self._renewed()
        response.content  # noqa: B018 - drain so the connection can be reused
        response.close()
        again = sent.copy()
        setattr(again, _RETRIED, True)
        again.headers["Authorization"] = f"{self.scheme} {token}"
        retried: requests.Response = response.connection.send(again, **kwargs)
        retried.history.append(response)
        retried.request = again
        return retried


class ClientCredentials:
    """OAuth 2.0 client credentials (RFC 6749 §4.4): a token provider for :class:`TokenAuth`.

    The token is cached until ``margin`` seconds before ``expires_in`` runs
    out (without ``expires_in``, until a 401 calls :meth:`refresh`). The client
    authenticates with HTTP Basic (``client_secret_basic``, the default) or in
    the form body (``client_auth="client_secret_post"``). Thread-safe.
    """

    def __init__(self, token_url: str, client_id: str, client_secret: str, *,
                 scope: str | Sequence[str] | None = None, audience: str | None = None,
                 extra: Mapping[str, str] | None = None,
                 client_auth: str = "client_secret_basic",
                 session: requests.Session | None = None,
                 timeout: float | tuple[float, float] = (3.05, 10.0), margin: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if client_auth not in ("client_secret_basic", "client_secret_post"):
            raise ValueError("client_auth is client_secret_basic or client_secret_post")
        self.token_url = token_url
        self.client_id = client_id
        self._secret = client_secret
        self.scope = scope if isinstance(scope, str) or scope is None else " ".join(scope)
        self.audience = audience
        self.extra = dict(extra or {})
        self.client_auth = client_auth
        self.timeout = timeout
        self.margin = margin
        self._session = session
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at: float | None = None
        #: How many tokens were requested (tests and metrics read it).
        self.requests = 0

    def __repr__(self) -> str:
        return f"ClientCredentials(token_url={self.token_url!r}, client_id={self.client_id!r})"

    def __call__(self) -> str:
        """The cached token, or a new one when there is none or it is about to expire."""
        with self._lock:
            if self._token is None or (
                    self._expires_at is not None and self._clock() >= self._expires_at):
                self._fetch()
            assert self._token is not None
            return self._token

    def refresh(self) -> str:
        """A new token now (the agent refused the cached one)."""
        with self._lock:
            self._fetch()
            assert self._token is not None
            return self._token

    def _form(self) -> dict[str, str]:
        form = {"grant_type": "client_credentials", **self.extra}
        if self.scope:
            form["scope"] = self.scope
        if self.audience:
            form["audience"] = self.audience
        if self.client_auth == "client_secret_post":
            form.update(client_id=self.client_id, client_secret=self._secret)
        return form

    def _fetch(self) -> None:
        self.requests += 1
        auth = None if self.client_auth == "client_secret_post" else \
            HTTPBasicAuth(quote(self.client_id, safe=""), quote(self._secret, safe=""))
        session = self._session or requests.Session()
        started = self._clock()
        try:
            response = session.post(self.token_url, data=self._form(), auth=auth,
                                    timeout=self.timeout, allow_redirects=False,
                                    headers={"Accept": "application/json"})
            body = _json_object(response)
        except requests.RequestException as exc:
            raise TokenRequestError(f"token request failed: {type(exc).__name__}") from None
        finally:
            if self._session is None:
                session.close()
        if response.status_code != 200:
            code = body.get("error") if isinstance(body.get("error"), str) else "no error code"
            raise TokenRequestError(f"token endpoint answered {response.status_code} ({code})")
        self._take(body, started)

    def _take(self, body: Mapping[str, Any], started: float) -> None:
        token, kind = body.get("access_token"), body.get("token_type", "Bearer")
        if not isinstance(token, str) or not token or any(c in token for c in _FORBIDDEN):
            raise TokenRequestError("the token endpoint sent no usable access_token")
        if not isinstance(kind, str) or kind.lower() != "bearer":
            raise TokenRequestError("the token endpoint sent a token that is not a bearer token")
        expires_in = body.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, (int, float)) and \
            not isinstance(expires_in, bool) else None
        self._token = token
        self._expires_at = None if lifetime is None else started + max(0.0,
                                                                        lifetime - self.margin)


def _json_object(response: requests.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def as_auth(value: Any) -> AuthBase | None:
    """What ``A2AClient(auth=...)`` accepts, as a requests ``AuthBase``.

    A string is a bearer token, ``(user, password)`` is HTTP Basic, a callable
    is a token provider (:class:`TokenAuth`), an ``AuthBase`` is used as is.
    """
    if value is None or isinstance(value, AuthBase):
        return value
    if isinstance(value, str):
        return BearerAuth(value)
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return HTTPBasicAuth(*value)
    if callable(value):
        return TokenAuth(value)
    raise TypeError("auth must be a token, (user, password), a token provider or an AuthBase")


def as_card_verifier(value: Any) -> Callable[[Mapping[str, Any]], VerifiedSignature] | None:
    """What ``A2AClient(verify_card=...)`` accepts, as a check of a card's wire JSON.

    A :class:`CardVerifier` is used as is; anything else is the trusted keys
    :func:`verify_card` takes (a public key, a JWK, a JWKS, a list of those, or a
    ``(kid, jku)`` lookup).
    """
    if value is None or isinstance(value, CardVerifier):
        return value
    return lambda card: _verify_card(card, value)


def verify_card(card: Mapping[str, Any], keys: KeySource, *,
                algorithms: Sequence[str] = ALGORITHMS) -> VerifiedSignature:
    """:func:`a2a_core.signing.verify_card`: the card's first signature a trusted key verifies."""
    return _verify_card(card, keys, algorithms=algorithms)


class CardVerifier:
    """Checks fetched cards (the wire dict) against pinned ``keys`` or a pinned ``jwks_url``.

    The JWKS is fetched with a timeout, cached for ``ttl`` seconds (or the shorter
    ``max-age`` of its ``Cache-Control``) and fetched
    again on an unknown ``kid`` at most every ``min_refresh`` seconds. The
    ``jku`` a card names is never fetched: the key URL is the caller's choice.
    Raises the :class:`~a2a_core.signing.SignatureError` subclass that says why.
    """

    def __init__(self, keys: KeySource | None = None, *, jwks_url: str | None = None,
                 algorithms: Sequence[str] = ALGORITHMS,
                 session: requests.Session | None = None,
                 timeout: float | tuple[float, float] = (3.05, 10.0), ttl: float = 300.0,
                 min_refresh: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        from ._push import JWKSFetcher

        if (keys is None) == (jwks_url is None):
            raise ValueError("give exactly one of keys= or jwks_url=")
        self.keys, self.jwks_url = keys, jwks_url
        self.algorithms = tuple(algorithms)
        self._fetcher = None if jwks_url is None else JWKSFetcher(
            jwks_url, ttl=ttl, min_refresh=min_refresh, timeout=timeout,
            session=session or requests.Session(), clock=clock)

    def __repr__(self) -> str:
        return f"CardVerifier(jwks_url={self.jwks_url!r})"

    def __call__(self, card: Mapping[str, Any]) -> VerifiedSignature:
        return _verify_card(card, self.keys if self.keys is not None else self._lookup,
                            algorithms=self.algorithms)

    def _lookup(self, kid: str | None, jku: str | None) -> dict[str, Any]:
        """The keys held (fetched when due); a failed fetch leaves them, and the kid unknown."""
        assert self._fetcher is not None
        return self._fetcher.held(kid)[0]
