"""Receiving push notifications: check that a webhook POST really came from the agent.

An A2A server POSTs task updates to the URL a client registered. Anyone who
learns that URL can POST there too, so a receiver checks each request:

* the ``X-A2A-Notification-Token`` it registered (``token=``), compared in
  constant time; and/or
* the signature an ``a2a-wsgi`` server adds when signing is on
  (``X-A2A-Push-Signature``, a JWT): signed by a key from the agent's JWKS,
  over this exact body, recent (``max_age``), meant for this webhook
  (``audience``), and not seen before (``replay_cache``).

:func:`verify_push` does all of it and raises :class:`PushVerificationError`
with a reason otherwise. Verifying signatures needs PyJWT and ``cryptography``
(``pip install 'a2a-wsgi[signing]'``), imported only when a signature is checked.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import requests

from a2a_core.errors import A2AError

__all__ = [
    "JWKSFetcher",
    "PushVerificationError",
    "ReplayCache",
    "SIGNATURE_HEADER",
    "TOKEN_HEADER",
    "verify_push",
]

SIGNATURE_HEADER = "X-A2A-Push-Signature"
TOKEN_HEADER = "X-A2A-Notification-Token"
_ALGORITHMS = {"EdDSA": ("OKP", "Ed25519"), "ES256": ("EC", "P-256")}
_MAX_TOKEN = 8192

#: ``jwks(kid)`` -> the JWK with that id, or a whole JWKS document, or None.
JWKSource = Mapping[str, Any] | Callable[[str], Mapping[str, Any] | None]


class PushVerificationError(A2AError):
    """The push request failed a check; ``reason`` says which (never echo it to the sender)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ReplayStore(Protocol):
    def add(self, jti: str, expires_at: float) -> bool:
        """Remember ``jti`` until ``expires_at``; False when it was already there."""
        ...


class ReplayCache:
    """The ``jti`` values seen recently, each kept until its token expires.

    Thread-safe and bounded: past ``max_entries`` the entries expiring soonest
    are dropped first (their tokens are the next to be refused as stale anyway).
    One process only; share a database table or Redis set across workers.
    """

    def __init__(self, *, max_entries: int = 100_000,
                 clock: Callable[[], float] = time.time) -> None:
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self._max, self._clock = max_entries, clock

    def add(self, jti: str, expires_at: float) -> bool:
        with self._lock:
            now = self._clock()
            if jti in self._seen and self._seen[jti] > now:
                return False
            if len(self._seen) >= self._max:
                self._evict(now)
            self._seen[jti] = expires_at
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def _evict(self, now: float) -> None:
        """Drop expired entries; if still full, the soonest-expiring tenth."""
        self._seen = {k: v for k, v in self._seen.items() if v > now}
        if len(self._seen) >= self._max:
            keep = sorted(self._seen.items(), key=lambda kv: kv[1])[self._max // 10 + 1:]
            self._seen = dict(keep)


class JWKSFetcher:
    """Fetches a JWKS and caches it for ``ttl`` seconds (or a shorter ``max-age``).

    An unknown ``kid`` triggers a refetch (the agent may have rotated keys),
    at most once every ``min_refresh`` seconds so forged kids cannot make us
    hammer the agent; a failed fetch keeps the keys held. The schedule is
    :class:`a2a_core.signing.JWKSCache`, shared with the server. This is the
    client's one JWKS fetcher: :class:`~a2a_client.CardVerifier` uses it too.
    Redirects are not followed; without ``session``, environment proxies are not used.
    """

    def __init__(self, url: str, *, ttl: float = 300.0, min_refresh: float = 30.0,
                 timeout: float | tuple[float, float] = 5.0,
                 session: requests.Session | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from a2a_core.signing import JWKSCache

        self.url, self._timeout = url, timeout
        self._session = session or _plain_session()
        self._clock = clock
        self._cache = JWKSCache(ttl=ttl, min_refresh=min_refresh)
        self._lock = threading.Lock()

    def __call__(self, kid: str | None, jku: str | None = None) -> Mapping[str, Any]:
        """The JWKS held, fetched first when the schedule says so (``jku`` is ignored).

        :raises PushVerificationError: a fetch failed and no keys are held yet.
        """
        document, error = self.held(kid)
        if error is not None and not document["keys"]:
            raise PushVerificationError(f"cannot fetch the agent's JWKS: {error}")
        return document

    def held(self, kid: str | None) -> tuple[dict[str, Any], Exception | None]:
        """The JWKS held after a fetch the schedule asks for, and that fetch's error, if any."""
        with self._lock:
            now, error = self._clock(), None
            if self._cache.wants_fetch(kid, now):
                try:
                    response = self._session.get(self.url, timeout=self._timeout,
                                                 allow_redirects=False,
                                                 headers={"Accept": "application/json"})
                    response.raise_for_status()
                    self._cache.receive(response.json(), now,
                                        cache_control=response.headers.get("Cache-Control"))
                except (requests.RequestException, ValueError) as exc:
                    self._cache.failed(now)
                    error = exc
            return self._cache.document(), error


def verify_push(
    headers: Mapping[str, str],
    body: bytes,
    *,
    jwks: JWKSource | None = None,
    key: Mapping[str, Any] | Any = None,
    token: str | None = None,
    audience: str | None = None,
    max_age: float = 300.0,
    replay_cache: ReplayStore | None = None,
    leeway: float = 30.0,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """Check a push request; return the JWT claims (empty when only ``token`` was checked).

    ``headers`` may be any mapping (werkzeug's, Flask's, Django's ``request.headers``);
    ``body`` is the raw request body. Give ``jwks`` (a JWKS document, or a callable
    such as :class:`JWKSFetcher` taking a ``kid``) or one public ``key`` (a JWK
    mapping or a ``cryptography`` public key) to require a signature; ``token``
    to require the notification token. ``max_age`` bounds how old ``iat`` may be;
    ``leeway`` absorbs clock skew. With ``replay_cache`` each ``jti`` passes once.
    """
    if jwks is None and key is None and token is None:
        raise ValueError("verify_push needs jwks, key or token: otherwise it checks nothing")
    if token is not None:
        _check_token(_header(headers, TOKEN_HEADER), token)
    if jwks is None and key is None:
        return {}
    jwt = _header(headers, SIGNATURE_HEADER)
    if not jwt:
        raise PushVerificationError(f"no {SIGNATURE_HEADER} header")
    claims = _verified_claims(jwt, jwks, key)
    _check_claims(claims, body, audience=audience, max_age=max_age, leeway=leeway,
                  now=clock(), replay_cache=replay_cache)
    return claims


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive lookup that works on plain dicts too."""
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value


def _check_token(sent: str | None, expected: str) -> None:
    digest = hashlib.sha256
    if sent is None or not hmac.compare_digest(digest(sent.encode()).digest(),
                                               digest(expected.encode()).digest()):
        raise PushVerificationError("notification token missing or wrong")


def _verified_claims(jwt: str, jwks: JWKSource | None, key: Any) -> dict[str, Any]:
    """The claims of a push JWT whose signature a trusted key checks (PyJWT, by a2a_core.signing).

    Each refusal keeps the reason it had before the JWS code moved to PyJWT.
    """
    from a2a_core import signing

    if len(jwt) > _MAX_TOKEN or jwt.count(".") != 2:
        raise PushVerificationError("malformed signature (not a compact JWS)")
    try:
        header = signing.parse_protected(jwt.split(".")[0])
    except signing.UnsupportedAlgorithmError:  # crit is the only reason here
        raise PushVerificationError("critical JWS header extensions are not supported") from None
    except signing.SignatureError:
        raise PushVerificationError("malformed signature (bad JSON)") from None
    alg, kid = header["alg"], header.get("kid")
    if alg not in _ALGORITHMS:
        raise PushVerificationError(f"signature algorithm {alg!r} is not accepted")
    if key is None and not isinstance(kid, str):
        raise PushVerificationError("the signature names no key (kid)")
    if isinstance(key, Mapping):  # a pinned JWK is trusted whatever kid the header names
        key = {name: value for name, value in key.items() if name != "kid"}
    lookup = jwks
    source = key if key is not None else \
        (lambda k, _jku: lookup(k)) if callable(lookup) else lookup
    try:
        _, payload = signing.verify_compact(jwt, source, tuple(_ALGORITHMS))
    except signing.UnknownKeyError:
        raise PushVerificationError(f"unknown signing key {kid!r}") from None
    except signing.UnsupportedAlgorithmError:
        raise PushVerificationError(f"the key does not match algorithm {alg}") from None
    except signing.InvalidSignatureError:
        raise PushVerificationError("bad signature") from None
    except signing.SignatureError:  # a segment not base64url
        raise PushVerificationError("malformed signature (bad base64url)") from None
    try:
        claims = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        raise PushVerificationError("malformed signature (bad JSON)") from None
    if not isinstance(claims, dict):
        raise PushVerificationError("malformed signature (not JSON objects)")
    return claims


def _check_claims(claims: Mapping[str, Any], body: bytes, *, audience: str | None,
                  max_age: float, leeway: float, now: float,
                  replay_cache: ReplayStore | None) -> None:
    digest = hashlib.sha256(body).hexdigest()
    if not hmac.compare_digest(str(claims.get("request_body_sha256", "")), digest):
        raise PushVerificationError("the body does not match the signature")
    iat, exp = _number(claims.get("iat")), _number(claims.get("exp"))
    if iat is None or exp is None:
        raise PushVerificationError("the signature lacks iat or exp")
    if iat > now + leeway:
        raise PushVerificationError("the signature is issued in the future")
    if now - iat > max_age or now >= exp + leeway:
        raise PushVerificationError("the signature is stale")
    if audience is not None and claims.get("aud") != audience:
        raise PushVerificationError("the signature is for another webhook")
    if replay_cache is not None:
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            raise PushVerificationError("the signature lacks a jti")
        if not replay_cache.add(jti, max(exp, iat + max_age) + leeway):
            raise PushVerificationError("replayed delivery")


def _number(value: Any) -> float | None:
    """A JSON number as float; None for anything else (booleans included)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _plain_session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    return session
