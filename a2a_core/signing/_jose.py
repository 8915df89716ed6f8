"""JWS (RFC 7515) for A2A over PyJWT: keys, the key sources a verifier trusts, the allow-list.

PyJWT does the JOSE work (base64url, JWK parsing and which algorithm a JWK is
for, ES256/EdDSA/RS256 over ``cryptography``). What stays here is A2A's policy:
three algorithms and nothing else (``alg: none`` and HMAC are refused whatever
an allow-list says, so a public key never doubles as an HMAC secret), RSA keys
of 2048 bits or more, the key picked by ``kid`` from what the verifier trusts,
and when to fetch a trusted JWKS again. PyJWT and ``cryptography`` are the
``signing`` extra, imported on first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .._caching import _cache_control, _max_age
from ._errors import (
    InvalidSignatureError,
    MalformedSignatureError,
    UnknownKeyError,
    UnsupportedAlgorithmError,
)

if TYPE_CHECKING:
    from jwt import PyJWK, PyJWS

__all__ = [
    "ALGORITHMS", "JWKSCache", "KeySource", "SigningKey", "check_algorithms", "jwks",
    "parse_protected", "public_jwk", "resolve_key", "sign_compact", "verify_compact",
]

#: Every algorithm we accept, in order of preference.
ALGORITHMS: tuple[str, ...] = ("ES256", "EdDSA", "RS256")
#: What a verifier trusts (a key, a JWK, a JWKS, a list, or a ``(kid, jku)`` lookup;
#: see :func:`resolve_key`). Typed loosely: key objects come from ``cryptography``.
KeySource = Any
_MISSING_EXTRA = "JWS signatures need PyJWT and cryptography: pip install 'a2a-wsgi[signing]'"


@lru_cache(maxsize=1)
def jws() -> PyJWS:
    """PyJWT's JWS restricted to our three algorithms, RSA under 2048 bits refused.

    ES256 signs with RFC 6979 nonces where ``cryptography`` can (it is 44+, the
    extra's floor; OpenSSL 3.2+): processes sharing a key then sign one card into the
    same bytes, so its ETag is the same in every worker. PyJWT's own ES256 draws a
    random nonce.
    """
    try:
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives.asymmetric.ec import ECDSA, SECP256R1
        from jwt import PyJWS
        from jwt.algorithms import ECAlgorithm
        from jwt.utils import der_to_raw_signature
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise RuntimeError(_MISSING_EXTRA) from exc

    class DeterministicES256(ECAlgorithm):
        def sign(self, msg: bytes, key: Any) -> bytes:
            try:
                der = key.sign(msg, ECDSA(self.hash_alg(), deterministic_signing=True))
            except UnsupportedAlgorithm:  # pragma: no cover - OpenSSL before 3.2
                der = key.sign(msg, ECDSA(self.hash_alg()))
            return der_to_raw_signature(der, key.curve)

    engine = PyJWS(algorithms=["EdDSA", "RS256"], options={"enforce_minimum_key_length": True})
    engine.register_algorithm("ES256", DeterministicES256(ECAlgorithm.SHA256, SECP256R1))
    return engine


def check_algorithms(algorithms: Sequence[str]) -> tuple[str, ...]:
    """An allow-list, validated: only implemented names, never ``none``.

    :raises ValueError: an empty list, ``none``, or an algorithm we do not implement.
    """
    chosen = tuple(algorithms)
    if isinstance(algorithms, str) or not chosen or not set(chosen) <= set(ALGORITHMS):
        raise ValueError(f"algorithms must be a non-empty list taken from {ALGORITHMS}")
    return chosen


def alg_of(key: Any) -> str:
    """The algorithm a private or public key signs with (PyJWT checks type, curve, RSA size).

    :raises ValueError: a key of another kind (HMAC secrets and PEM text included).
    """
    from jwt.exceptions import InvalidKeyError

    for alg in () if isinstance(key, (str, bytes)) else ALGORITHMS:
        algorithm = jws().get_algorithm_by_name(alg)
        try:
            algorithm.prepare_key(key)
        except (InvalidKeyError, TypeError, ValueError):
            continue
        if algorithm.check_key_length(key) is None:
            return alg
    raise ValueError(f"unsupported key ({type(key).__name__}): use an Ed25519 key, a P-256 EC "
                     "key or an RSA key of 2048 bits or more")


@dataclass(frozen=True, slots=True)
class SigningKey:
    """A private key with its ``kid``, its JWS ``alg`` and, optionally, the ``jku`` to publish.

    ``alg`` is worked out from the key when not given. The repr names the kid only.
    """

    kid: str
    private_key: Any
    alg: str = ""
    jku: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kid, str) or not self.kid:
            raise ValueError("a signing key needs a non-empty kid")
        derived = alg_of(self.private_key)
        if self.alg and self.alg != derived:
            raise ValueError(f"a {derived} key cannot sign {self.alg}")
        object.__setattr__(self, "alg", derived)

    def __repr__(self) -> str:
        return f"SigningKey(kid={self.kid!r}, alg={self.alg!r})"

    @classmethod
    def generate(cls, kid: str, alg: str = "ES256", *, jku: str | None = None) -> SigningKey:
        """A fresh key (RS256: 3072 bits). Keep it somewhere all signing processes share."""
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

        generators: dict[str, Callable[[], Any]] = {
            "EdDSA": ed25519.Ed25519PrivateKey.generate,
            "ES256": lambda: ec.generate_private_key(ec.SECP256R1()),
            "RS256": lambda: rsa.generate_private_key(public_exponent=65537, key_size=3072)}
        if alg not in generators:
            raise ValueError(f"unsupported JWS algorithm {alg!r}; choose from {ALGORITHMS}")
        return cls(kid, generators[alg](), alg, jku)

    @classmethod
    def from_pem(cls, kid: str, pem: bytes, *, password: bytes | None = None,
                 jku: str | None = None) -> SigningKey:
        """A PEM private key (PKCS#8 or traditional), e.g. from a deployment secret."""
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        return cls(kid, load_pem_private_key(pem, password=password), "", jku)

    def public_key(self) -> Any:
        return self.private_key.public_key()

    def public_jwk(self) -> dict[str, str]:
        """The public half as a JWK, with ``kid``, ``alg`` and ``use: sig``."""
        return public_jwk(self.public_key(), kid=self.kid)


def sign_compact(payload: bytes, key: SigningKey, header: Mapping[str, Any] | None = None) -> str:
    """A compact JWS of ``payload``: ``alg`` and ``kid`` (and ``jku``) come from the key."""
    headers: dict[str, Any] = {"typ": None, **(header or {}), "alg": key.alg, "kid": key.kid}
    if key.jku and "jku" not in headers:
        headers["jku"] = key.jku
    return jws().encode(payload, key.private_key, algorithm=key.alg, headers=headers)


def public_jwk(public_key: Any, *, kid: str | None = None) -> dict[str, str]:
    """A public key (Ed25519, P-256 or RSA) as a JWK (RFC 7517/7518/8037)."""
    alg = alg_of(public_key)
    jwk: dict[str, str] = jws().get_algorithm_by_name(alg).to_jwk(public_key, as_dict=True)
    return {"alg": alg, "use": "sig", **({"kid": kid} if kid else {}), **jwk}


def jwks(keys: Sequence[SigningKey | Any]) -> dict[str, Any]:
    """The JWKS document publishing the public halves of ``keys`` (serve it at the ``jku``)."""
    return {"keys": [key.public_jwk() if isinstance(key, SigningKey) else public_jwk(key)
                     for key in keys]}


def parse_protected(protected: str, algorithms: Sequence[str] | None = None) -> dict[str, Any]:
    """The protected header: a JSON object with a string ``alg``; ``crit`` is refused.

    :raises UnsupportedAlgorithmError: also when ``alg`` is not on ``algorithms`` (if given)
        or is ``none`` in any case.
    """
    jws()  # RuntimeError naming the extra when PyJWT is missing
    from jwt.utils import base64url_decode

    try:
        header = json.loads(base64url_decode(protected))
    except (ValueError, TypeError, UnicodeDecodeError, RecursionError) as exc:  # (deep nesting)
        raise MalformedSignatureError("the protected header is not JSON") from exc
    if not isinstance(header, dict) or not isinstance(header.get("alg"), str):
        raise MalformedSignatureError("the protected header is not a JSON object with an alg")
    for name in ("kid", "jku", "typ"):
        if header.get(name, "") is None:
            del header[name]  # the SDK's signer writes "jku": null when there is none
        elif name in header and not isinstance(header[name], str):
            raise MalformedSignatureError(f"the protected header's {name} is not a string")
    if "crit" in header:  # RFC 7515 §4.1.11: extensions we do not understand must fail
        raise UnsupportedAlgorithmError("the protected header names critical extensions")
    if algorithms is not None and header["alg"].lower() == "none":
        raise UnsupportedAlgorithmError("unsigned JWS (alg: none) refused")
    if algorithms is not None and header["alg"] not in algorithms:
        raise UnsupportedAlgorithmError(f"algorithm {header['alg']!r} is not allowed")
    return header


def verify_compact(token: str, keys: KeySource, algorithms: Sequence[str] = ALGORITHMS
                   ) -> tuple[dict[str, Any], bytes]:
    """Verify a compact JWS (a JWT, say) against trusted keys; return its header and payload.

    :raises SignatureError: (a subclass saying why) when it is not accepted.
    """
    from jwt import exceptions

    allowed = check_algorithms(algorithms)
    if not isinstance(token, str):
        raise MalformedSignatureError("a compact JWS is a string")
    header = parse_protected(token.split(".")[0], allowed)
    alg = header["alg"]
    key = resolve_key(keys, header)
    try:
        return header, bytes(jws().decode_complete(token, key, algorithms=[alg])["payload"])
    except exceptions.InvalidSignatureError:
        raise InvalidSignatureError("the signature does not verify") from None
    except (exceptions.InvalidAlgorithmError, exceptions.InvalidKeyError) as exc:
        raise UnsupportedAlgorithmError(f"the key cannot verify {alg}: {exc}") from None
    except exceptions.PyJWTError:
        raise MalformedSignatureError("not a compact JWS in base64url") from None


@lru_cache(maxsize=256)
def _read_jwk(jwk: str) -> PyJWK:
    """A JWK read by PyJWT, kept: reading one costs more than checking a signature."""
    from jwt import PyJWK

    return PyJWK(json.loads(jwk))


def _verifying_key(candidate: Any, alg: str) -> Any:
    """The public key of a trusted JWK, SigningKey or key object, if it may verify ``alg``.

    :raises UnsupportedAlgorithmError: it is for another algorithm (PyJWT tells a JWK's
        from its ``alg`` or ``kty``/``crv``), a JWK PyJWT cannot read (another key type,
        bad numbers), or one not for signatures (``use``/``key_ops``).
    """
    from jwt import PyJWTError

    if isinstance(candidate, Mapping):
        ops = candidate.get("key_ops", ["verify"])
        if candidate.get("use", "sig") != "sig" or not isinstance(ops, list) or "verify" not in ops:
            raise UnsupportedAlgorithmError("the JWK is not for signatures (use, key_ops)")
        try:
            jwk = _read_jwk(json.dumps(dict(candidate), sort_keys=True))
        except (PyJWTError, LookupError, NotImplementedError, TypeError, ValueError):
            raise UnsupportedAlgorithmError(f"the JWK is not a {alg} key PyJWT can read") from None
        key, fits = jwk.key, jwk.algorithm_name
    else:
        key = candidate.public_key() if hasattr(candidate, "public_key") else candidate
        try:
            fits = alg_of(key)
        except ValueError:
            fits = None
    if fits != alg:
        raise UnsupportedAlgorithmError(f"the trusted key cannot verify {alg}")
    return key


def _candidates(source: Any, kid: str | None, jku: str | None) -> list[Any]:
    """Flatten a key source into key objects and JWKs."""
    if callable(source):
        found = source(kid, jku)
        return [] if found is None else _candidates(found, kid, jku)
    if isinstance(source, Mapping) and "kty" not in source and isinstance(source.get("keys"), list):
        return [k for k in source["keys"] if isinstance(k, Mapping)]
    if isinstance(source, (list, tuple)):
        return [item for entry in source for item in _candidates(entry, kid, jku)]
    return [source]


def resolve_key(source: KeySource, header: Mapping[str, Any]) -> Any:
    """The public key in ``source`` (a :data:`KeySource`) that should verify a JWS with ``header``.

    A source is a public key object, a SigningKey (its public half), a JWK, a
    JWKS, a sequence of those, or a callable ``(kid, jku) -> one of those or
    None`` (a cache that fetches a JWKS lives outside the core, which does no
    I/O). A JWK or SigningKey matches on ``kid``; a bare key object whatever
    ``kid`` the header names (the caller pinned it). A header without ``kid``
    matches only when exactly one trusted key fits the algorithm.

    :raises UnknownKeyError: no trusted key matches.
    :raises UnsupportedAlgorithmError: the only key named by ``kid`` cannot do ``alg``.
    """
    alg, kid = header["alg"], header.get("kid")
    found: list[Any] = []
    refused: UnsupportedAlgorithmError | None = None
    for candidate in _candidates(source, kid, header.get("jku")):
        named = candidate.kid if isinstance(candidate, SigningKey) else \
            candidate.get("kid") if isinstance(candidate, Mapping) else None
        if kid is not None and named is not None and named != kid:
            continue
        try:
            found.append(_verifying_key(candidate, alg))
        except UnsupportedAlgorithmError as exc:  # another key type: not this one
            refused = exc
    if len(found) == 1 or (found and kid is not None):
        return found[0]
    if refused is not None and not found:
        raise refused
    shown = f"kid {kid!r}" if kid is not None else "a JWS without kid"
    raise UnknownKeyError(f"several trusted keys fit {shown}" if found
                          else f"no trusted key for {shown}")


# -- when to (re)fetch a trusted JWKS ---------------------------------------------------


class JWKSCache:
    """The keys of one JWKS document and the fetch schedule for it (not thread-safe).

    The document is fetched again once older than ``ttl`` (or a shorter
    ``Cache-Control`` ``max-age``, never below ``min_refresh``; ``no-cache`` and
    ``no-store`` count as 0) and, for a ``kid`` it lacks (a rotation), at most
    every ``min_refresh`` seconds, failed attempts included, so forged kids cannot
    make the verifier flood the key server. A failed fetch keeps the keys held.
    The caller does the HTTP and passes the time in.
    """

    def __init__(self, *, ttl: float = 300.0, min_refresh: float = 30.0) -> None:
        if ttl <= 0 or min_refresh < 0:
            raise ValueError("ttl must be positive and min_refresh not negative")
        self.ttl = ttl
        self.min_refresh = min_refresh
        self._keys: list[Mapping[str, Any]] = []
        self._attempted_at = self._expires_at = float("-inf")

    def __repr__(self) -> str:
        return f"JWKSCache(kids={self.kids()!r})"

    def kids(self) -> list[str]:
        return [k["kid"] for k in self._keys if isinstance(k.get("kid"), str)]

    def wants_fetch(self, kid: str | None, now: float) -> bool:
        """Whether to fetch before looking ``kid`` up at ``now`` (seconds, any monotonic clock)."""
        if now - self._attempted_at < self.min_refresh:
            return False  # fetched (or failed) a moment ago: do not hammer the key server
        return now >= self._expires_at or (kid is not None and kid not in self.kids())

    def receive(self, document: Any, now: float, *, cache_control: str | None = None) -> None:
        """Take a fetched JWKS document and its response's ``Cache-Control`` header.

        :raises ValueError: it is not a JWKS (and nothing changes but the attempt).
        """
        self._attempted_at = now
        keys = document.get("keys") if isinstance(document, Mapping) else None
        if not isinstance(keys, list) or not all(isinstance(k, Mapping) for k in keys):
            raise ValueError("a JWKS is a JSON object with a list of keys")
        self._keys = [dict(k) for k in keys]
        directives = _cache_control(cache_control or "")  # the card cache's parser
        max_age = 0 if {"no-store", "no-cache"} & set(directives) else _max_age(directives)
        fresh_for = self.ttl if max_age is None else min(self.ttl, max(self.min_refresh, max_age))
        self._expires_at = now + fresh_for

    def failed(self, now: float) -> None:
        """Record a failed fetch: no new attempt before ``min_refresh``; old keys kept."""
        self._attempted_at = now

    def document(self) -> dict[str, Any]:
        """The keys held, as a JWKS (a key source for :func:`~a2a_core.signing.verify_card`)."""
        return {"keys": [dict(k) for k in self._keys]}

