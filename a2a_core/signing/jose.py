"""JWS (RFC 7515) over ``cryptography``: keys, JWKs, and signing and verifying bytes.

Three algorithms and nothing else: ES256 (ECDSA P-256, SHA-256), EdDSA
(Ed25519, RFC 8037) and RS256 (RSASSA-PKCS1-v1_5, SHA-256, keys of 2048 bits
or more). ``alg: none`` and HMAC are refused outright, whatever a caller puts
in an allow-list: a public key must never double as an HMAC secret. The key
type must fit the algorithm, so a header cannot talk a verifier into using an
RSA key for ECDSA or the like. ``cryptography`` is the optional extra
``signing``, imported when a key is first used.
"""

# Key sources. A verifier is given what it trusts, in any of these forms:
# a public key object, a SigningKey (its public half), a JWK, a JWKS
# ({"keys": [...]}), a sequence of any of those, or a callable
# ``(kid, jku) -> one of those or None`` that looks keys up (a cache that
# fetches a JWKS lives outside the core, which does no I/O). A key given
# bare is tried whatever ``kid`` the header names: the caller pinned it.
# A JWK is matched on ``kid``; a header without ``kid`` matches only when
# exactly one trusted key fits the algorithm.

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import (
    InvalidSignatureError,
    MalformedSignatureError,
    UnknownKeyError,
    UnsupportedAlgorithmError,
)

__all__ = [
    "ALGORITHMS",
    "CompactJWS",
    "KeySource",
    "SigningKey",
    "b64url_decode",
    "b64url_encode",
    "check_alg",
    "check_algorithms",
    "decode_compact",
    "jwks",
    "parse_protected",
    "public_jwk",
    "public_key_from_jwk",
    "resolve_key",
    "sign_compact",
    "verify_bytes",
    "verify_compact",
]

#: Every algorithm this module implements, in order of preference.
ALGORITHMS: tuple[str, ...] = ("ES256", "EdDSA", "RS256")
_MIN_RSA_BITS = 2048
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_MISSING_EXTRA = "JWS signatures need the 'cryptography' package: pip install 'a2a-wsgi[signing]'"

#: What a verifier trusts (a key, a JWK, a JWKS, a list, or a ``(kid, jku)`` lookup);
#: see the module comments. Typed loosely: key objects come from ``cryptography``.
KeySource = Any


def b64url_encode(raw: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict base64url without padding; MalformedSignatureError on anything else."""
    if not isinstance(text, str) or not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise MalformedSignatureError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise MalformedSignatureError("not base64url") from exc


def check_algorithms(algorithms: Sequence[str]) -> tuple[str, ...]:
    """An allow-list, validated: only implemented names, never ``none``.

    :raises ValueError: an empty list, ``none``, or an algorithm we do not implement.
    """
    chosen = tuple(algorithms)
    if isinstance(algorithms, str) or not chosen:
        raise ValueError("algorithms must be a non-empty list such as ['ES256', 'EdDSA']")
    for name in chosen:
        if name not in ALGORITHMS:
            raise ValueError(f"unsupported JWS algorithm {name!r}; choose from {ALGORITHMS}")
    return chosen


def _crypto() -> Any:
    """The ``cryptography`` namespace we use, imported on first need (optional extra)."""
    try:
        from cryptography import exceptions
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, utils
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise RuntimeError(_MISSING_EXTRA) from exc
    return _Crypto(hashes, serialization, ec, ed25519, padding, rsa, utils, exceptions)


@dataclass(frozen=True)
class _Crypto:
    hashes: Any
    serialization: Any
    ec: Any
    ed25519: Any
    padding: Any
    rsa: Any
    utils: Any
    exceptions: Any


def _alg_of(key: Any) -> str:
    """The algorithm a private or public key signs with; ValueError for other keys."""
    c = _crypto()
    if isinstance(key, (c.ed25519.Ed25519PrivateKey, c.ed25519.Ed25519PublicKey)):
        return "EdDSA"
    if isinstance(key, (c.ec.EllipticCurvePrivateKey, c.ec.EllipticCurvePublicKey)):
        if key.curve.name != "secp256r1":
            raise ValueError(f"only P-256 EC keys are supported, not {key.curve.name}")
        return "ES256"
    if isinstance(key, (c.rsa.RSAPrivateKey, c.rsa.RSAPublicKey)):
        if key.key_size < _MIN_RSA_BITS:
            raise ValueError(f"RSA keys must have at least {_MIN_RSA_BITS} bits")
        return "RS256"
    raise ValueError(f"unsupported key type {type(key).__name__}; use Ed25519, P-256 or RSA")


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
        derived = _alg_of(self.private_key)
        if self.alg and self.alg != derived:
            raise ValueError(f"a {derived} key cannot sign {self.alg}")
        object.__setattr__(self, "alg", derived)

    def __repr__(self) -> str:
        return f"SigningKey(kid={self.kid!r}, alg={self.alg!r})"

    @classmethod
    def generate(cls, kid: str, alg: str = "ES256", *, jku: str | None = None) -> SigningKey:
        """A fresh key (RS256: 3072 bits). Keep it somewhere all signing processes share."""
        c = _crypto()
        if alg == "EdDSA":
            return cls(kid, c.ed25519.Ed25519PrivateKey.generate(), alg, jku)
        if alg == "ES256":
            return cls(kid, c.ec.generate_private_key(c.ec.SECP256R1()), alg, jku)
        if alg == "RS256":
            return cls(kid, c.rsa.generate_private_key(public_exponent=65537, key_size=3072),
                       alg, jku)
        raise ValueError(f"unsupported JWS algorithm {alg!r}; choose from {ALGORITHMS}")

    @classmethod
    def from_pem(cls, kid: str, pem: bytes, *, password: bytes | None = None,
                 jku: str | None = None) -> SigningKey:
        """A PEM private key (PKCS#8 or traditional), e.g. from a deployment secret."""
        key = _crypto().serialization.load_pem_private_key(pem, password=password)
        return cls(kid, key, "", jku)

    def public_key(self) -> Any:
        return self.private_key.public_key()

    def public_jwk(self) -> dict[str, str]:
        """The public half as a JWK, with ``kid``, ``alg`` and ``use: sig``."""
        return public_jwk(self.public_key(), kid=self.kid)

    def sign(self, data: bytes) -> bytes:
        """The raw JWS signature of ``data`` (ES256: r || s, 32 bytes each, not DER).

        All three are deterministic where ``cryptography`` allows (ES256 by RFC 6979,
        cryptography 44 with OpenSSL 3.2 or later): processes sharing a key then sign
        one card into the same bytes, so its ETag is the same in every worker.
        """
        c = _crypto()
        if self.alg == "EdDSA":
            return bytes(self.private_key.sign(data))
        if self.alg == "RS256":
            return bytes(self.private_key.sign(data, c.padding.PKCS1v15(), c.hashes.SHA256()))
        r, s = c.utils.decode_dss_signature(_ecdsa_der(c, self.private_key, data))
        return bytes(int(r).to_bytes(32, "big") + int(s).to_bytes(32, "big"))


def _ecdsa_der(c: _Crypto, private_key: Any, data: bytes) -> bytes:
    """An ECDSA P-256 signature (DER), deterministic when the library can, random otherwise."""
    try:
        return bytes(private_key.sign(
            data, c.ec.ECDSA(c.hashes.SHA256(), deterministic_signing=True)))
    except (TypeError, c.exceptions.UnsupportedAlgorithm):  # older cryptography or OpenSSL
        return bytes(private_key.sign(data, c.ec.ECDSA(c.hashes.SHA256())))


def _int_b64(value: int, size: int | None = None) -> str:
    length = size if size is not None else max(1, (value.bit_length() + 7) // 8)
    return b64url_encode(value.to_bytes(length, "big"))


def public_jwk(public_key: Any, *, kid: str | None = None) -> dict[str, str]:
    """A public key (Ed25519, P-256 or RSA) as a JWK (RFC 7517/7518/8037)."""
    c = _crypto()
    alg = _alg_of(public_key)
    base = {"alg": alg, "use": "sig", **({"kid": kid} if kid else {})}
    if alg == "EdDSA":
        raw = public_key.public_bytes(c.serialization.Encoding.Raw,
                                      c.serialization.PublicFormat.Raw)
        return {**base, "kty": "OKP", "crv": "Ed25519", "x": b64url_encode(raw)}
    numbers = public_key.public_numbers()
    if alg == "ES256":
        return {**base, "kty": "EC", "crv": "P-256",
                "x": _int_b64(numbers.x, 32), "y": _int_b64(numbers.y, 32)}
    return {**base, "kty": "RSA", "n": _int_b64(numbers.n), "e": _int_b64(numbers.e)}


def jwks(keys: Sequence[SigningKey | Any]) -> dict[str, Any]:
    """The JWKS document publishing the public halves of ``keys`` (serve it at the ``jku``)."""
    out = []
    for key in keys:
        out.append(key.public_jwk() if isinstance(key, SigningKey) else public_jwk(key))
    return {"keys": out}


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
    c = _crypto()
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
            _alg_of(key)  # refuses short RSA keys
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


def parse_protected(protected: str) -> dict[str, Any]:
    """The protected header: a JSON object with a string ``alg``; ``crit`` is refused."""
    try:
        header = json.loads(b64url_decode(protected))
    except (ValueError, UnicodeDecodeError) as exc:
        if isinstance(exc, MalformedSignatureError):
            raise
        raise MalformedSignatureError("the protected header is not JSON") from exc
    if not isinstance(header, dict):
        raise MalformedSignatureError("the protected header is not a JSON object")
    if not isinstance(header.get("alg"), str):
        raise MalformedSignatureError("the protected header has no alg")
    for name in ("kid", "jku", "typ"):
        if header.get(name, "") is None:
            del header[name]  # the SDK's signer writes "jku": null when there is none
        elif name in header and not isinstance(header[name], str):
            raise MalformedSignatureError(f"the protected header's {name} is not a string")
    if "crit" in header:  # RFC 7515 §4.1.11: extensions we do not understand must fail
        raise UnsupportedAlgorithmError("the protected header names critical extensions")
    return header


def check_alg(alg: str, algorithms: Sequence[str]) -> None:
    """Refuse ``none`` and anything off the allow-list (UnsupportedAlgorithmError)."""
    if alg.lower() == "none":
        raise UnsupportedAlgorithmError("unsigned JWS (alg: none) refused")
    if alg not in algorithms:
        raise UnsupportedAlgorithmError(f"algorithm {alg!r} is not allowed")


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
    c = _crypto()
    private = (c.ed25519.Ed25519PrivateKey, c.ec.EllipticCurvePrivateKey, c.rsa.RSAPrivateKey)
    return candidate.public_key() if isinstance(candidate, private) else candidate


def _fits(key: Any, alg: str) -> bool:
    try:
        return _alg_of(key) == alg
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


def verify_bytes(alg: str, public_key: Any, signing_input: bytes, signature: bytes) -> None:
    """Check one raw signature; return when it verifies.

    :raises UnsupportedAlgorithmError: the key cannot do ``alg``.
    :raises InvalidSignatureError: it does not verify.
    """
    c = _crypto()
    try:
        key_alg = _alg_of(public_key)
    except ValueError as exc:
        raise UnsupportedAlgorithmError(str(exc)) from None
    if key_alg != alg:
        raise UnsupportedAlgorithmError(f"a {key_alg} key cannot verify {alg}")
    from cryptography.exceptions import InvalidSignature

    try:
        if alg == "EdDSA":
            public_key.verify(signature, signing_input)
        elif alg == "RS256":
            public_key.verify(signature, signing_input, c.padding.PKCS1v15(), c.hashes.SHA256())
        else:
            if len(signature) != 64:
                raise InvalidSignature()
            der = c.utils.encode_dss_signature(int.from_bytes(signature[:32], "big"),
                                               int.from_bytes(signature[32:], "big"))
            public_key.verify(der, signing_input, c.ec.ECDSA(c.hashes.SHA256()))
    except InvalidSignature:
        raise InvalidSignatureError("the signature does not verify") from None


@dataclass(frozen=True, slots=True)
class CompactJWS:
    """A JWS in compact form, split but not verified."""

    header: dict[str, Any]
    payload: bytes
    signing_input: bytes
    signature: bytes


def decode_compact(token: str) -> CompactJWS:
    """Split ``header.payload.signature``; nothing is trusted yet."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        raise MalformedSignatureError("a compact JWS has three dot-separated parts")
    header = parse_protected(parts[0])
    return CompactJWS(header, b64url_decode(parts[1]),
                      f"{parts[0]}.{parts[1]}".encode("ascii"), b64url_decode(parts[2]))


def verify_compact(token: str, keys: KeySource, algorithms: Sequence[str] = ALGORITHMS
                   ) -> CompactJWS:
    """Verify a compact JWS (a JWT, say) against trusted keys; return it split.

    :raises SignatureError: (a subclass saying why) when it is not accepted.
    """
    allowed = check_algorithms(algorithms)
    jws = decode_compact(token)
    check_alg(jws.header["alg"], allowed)
    verify_bytes(jws.header["alg"], resolve_key(keys, jws.header), jws.signing_input,
                 jws.signature)
    return jws


def sign_compact(payload: bytes, key: SigningKey, header: Mapping[str, Any] | None = None) -> str:
    """A compact JWS of ``payload``: ``alg`` and ``kid`` (and ``jku``) come from the key."""
    protected = _protected_header(key, header)
    signing_input = f"{protected}.{b64url_encode(payload)}".encode("ascii")
    return f"{signing_input.decode('ascii')}.{b64url_encode(key.sign(signing_input))}"


def _protected_header(key: SigningKey, extra: Mapping[str, Any] | None) -> str:
    header: dict[str, Any] = {**(extra or {}), "alg": key.alg, "kid": key.kid}
    if key.jku and "jku" not in header:
        header["jku"] = key.jku
    return b64url_encode(json.dumps(header, separators=(",", ":"), sort_keys=True).encode())
