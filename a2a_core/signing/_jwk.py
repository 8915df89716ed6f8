"""Reading JWKs (RFC 7517/7518/8037) and key sources: finding the public key to trust for a JWS."""

# Key sources. A verifier is given what it trusts, in any of these forms:
# a public key object, a SigningKey (its public half), a JWK, a JWKS
# ({"keys": [...]}), a sequence of any of those, or a callable
# ``(kid, jku) -> one of those or None`` that looks keys up (a cache that
# fetches a JWKS lives outside the core, which does no I/O). A key given
# bare is tried whatever ``kid`` the header names: the caller pinned it.
# A JWK is matched on ``kid``; a header without ``kid`` matches only when
# exactly one trusted key fits the algorithm.

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._b64url import b64url_decode
from ._jws_algorithms import SigningKey, alg_of, crypto
from .errors import MalformedSignatureError, UnknownKeyError, UnsupportedAlgorithmError

__all__ = ["KeySource", "public_key_from_jwk", "resolve_key"]

#: What a verifier trusts (a key, a JWK, a JWKS, a list, or a ``(kid, jku)`` lookup);
#: see the comments at the top. Typed loosely: key objects come from ``cryptography``.
KeySource = Any


def _jwk_member(jwk: Mapping[str, Any], name: str) -> bytes:
    value = jwk.get(name)
    if not isinstance(value, str):
        raise MalformedSignatureError(f"the JWK has no {name!r}")
    return b64url_decode(value)


def public_key_from_jwk(jwk: Mapping[str, Any], alg: str) -> Any:
    """The public key of a JWK, checked to be usable for ``alg``.

    :raises UnsupportedAlgorithmError: the JWK is of another type, says another ``alg``,
        or is not for signatures (``use``/``key_ops``).
    :raises MalformedSignatureError: its members are not valid.
    """
    _check_jwk_use(jwk, alg)
    c = crypto()
    kty, crv = jwk.get("kty"), jwk.get("crv")
    try:
        if alg == "EdDSA" and kty == "OKP" and crv == "Ed25519":
            return c.ed25519.Ed25519PublicKey.from_public_bytes(_jwk_member(jwk, "x"))
        if alg == "ES256" and kty == "EC" and crv == "P-256":
            x, y = _jwk_member(jwk, "x"), _jwk_member(jwk, "y")
            if len(x) != 32 or len(y) != 32:
                raise MalformedSignatureError("a P-256 JWK has 32-byte coordinates")
            numbers = c.ec.EllipticCurvePublicNumbers(
                int.from_bytes(x, "big"), int.from_bytes(y, "big"), c.ec.SECP256R1())
            return numbers.public_key()
        if alg == "RS256" and kty == "RSA":
            numbers = c.rsa.RSAPublicNumbers(int.from_bytes(_jwk_member(jwk, "e"), "big"),
                                             int.from_bytes(_jwk_member(jwk, "n"), "big"))
            key = numbers.public_key()
            alg_of(key)  # refuses short RSA keys
            return key
    except ValueError as exc:  # not on the curve, bad RSA numbers, too short
        if isinstance(exc, MalformedSignatureError):
            raise
        raise MalformedSignatureError(f"the JWK is not a valid key for {alg}") from exc
    raise UnsupportedAlgorithmError(f"a {kty}/{crv} JWK cannot verify {alg}")


def _check_jwk_use(jwk: Mapping[str, Any], alg: str) -> None:
    if "alg" in jwk and jwk["alg"] != alg:
        raise UnsupportedAlgorithmError(f"the key is for {jwk['alg']}, not {alg}")
    if "use" in jwk and jwk["use"] != "sig":
        raise UnsupportedAlgorithmError("the key is not for signatures (use)")
    ops = jwk.get("key_ops")
    if ops is not None and (not isinstance(ops, list) or "verify" not in ops):
        raise UnsupportedAlgorithmError("the key is not for verifying (key_ops)")


def _candidates(source: Any, kid: str | None, jku: str | None) -> list[Any]:
    """Flatten a key source into key objects and JWKs."""
    if callable(source):
        found = source(kid, jku)
        return [] if found is None else _candidates(found, kid, jku)
    if isinstance(source, Mapping):
        keys = source.get("keys")
        if "kty" not in source and isinstance(keys, list):
            return [k for k in keys if isinstance(k, Mapping)]
        return [source]
    if isinstance(source, (list, tuple)):
        return [item for entry in source for item in _candidates(entry, kid, jku)]
    return [source]


def _as_public(candidate: Any) -> Any:
    """A key object's public half (a private key may be given)."""
    c = crypto()
    private = (c.ed25519.Ed25519PrivateKey, c.ec.EllipticCurvePrivateKey, c.rsa.RSAPrivateKey)
    return candidate.public_key() if isinstance(candidate, private) else candidate


def _fits(key: Any, alg: str) -> bool:
    try:
        return alg_of(key) == alg
    except ValueError:
        return False


def resolve_key(source: KeySource, header: Mapping[str, Any]) -> Any:
    """The public key in ``source`` that should verify a JWS with ``header``.

    A JWK or SigningKey matches on ``kid``; a bare key object on its type.

    :raises UnknownKeyError: no trusted key matches.
    :raises UnsupportedAlgorithmError: the only key named by ``kid`` cannot do ``alg``.
    """
    alg, kid, jku = header["alg"], header.get("kid"), header.get("jku")
    found: list[Any] = []
    refused: UnsupportedAlgorithmError | None = None
    for candidate in _candidates(source, kid, jku):
        named = candidate.kid if isinstance(candidate, SigningKey) else \
            candidate.get("kid") if isinstance(candidate, Mapping) else None
        if kid is not None and named is not None and named != kid:
            continue
        if isinstance(candidate, Mapping):
            try:
                found.append(public_key_from_jwk(candidate, alg))
            except UnsupportedAlgorithmError as exc:  # another key type: not this one
                refused = exc
            continue
        key = candidate.public_key() if isinstance(candidate, SigningKey) else \
            _as_public(candidate)
        if _fits(key, alg):
            found.append(key)
        else:
            refused = UnsupportedAlgorithmError(f"the trusted key cannot verify {alg}")
    if len(found) == 1 or (found and kid is not None):
        return found[0]
    if refused is not None and not found:
        raise refused
    shown = f"kid {kid!r}" if kid is not None else "a JWS without kid"
    raise UnknownKeyError(f"several trusted keys fit {shown}" if found
                          else f"no trusted key for {shown}")
