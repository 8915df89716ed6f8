"""The three JWS algorithms: which key signs with which, signing, verifying, public JWKs.

ES256 (ECDSA P-256, SHA-256), EdDSA (Ed25519, RFC 8037) and RS256
(RSASSA-PKCS1-v1_5, SHA-256, keys of 2048 bits or more); ``alg: none`` and
HMAC are refused whatever an allow-list says. ``cryptography`` is the
optional extra ``signing``, imported when a key is first used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._b64url import b64url_encode
from .errors import InvalidSignatureError, UnsupportedAlgorithmError

__all__ = [
    "ALGORITHMS", "SigningKey", "alg_of", "check_alg", "check_algorithms", "crypto", "jwks",
    "public_jwk", "verify_bytes",
]

#: Every algorithm this module implements, in order of preference.
ALGORITHMS: tuple[str, ...] = ("ES256", "EdDSA", "RS256")
_MIN_RSA_BITS = 2048
_MISSING_EXTRA = "JWS signatures need the 'cryptography' package: pip install 'a2a-wsgi[signing]'"


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


def check_alg(alg: str, algorithms: Sequence[str]) -> None:
    """Refuse ``none`` and anything off the allow-list (UnsupportedAlgorithmError)."""
    if alg.lower() == "none":
        raise UnsupportedAlgorithmError("unsigned JWS (alg: none) refused")
    if alg not in algorithms:
        raise UnsupportedAlgorithmError(f"algorithm {alg!r} is not allowed")


def crypto() -> Any:
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


def alg_of(key: Any) -> str:
    """The algorithm a private or public key signs with; ValueError for other keys."""
    c = crypto()
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
        derived = alg_of(self.private_key)
        if self.alg and self.alg != derived:
            raise ValueError(f"a {derived} key cannot sign {self.alg}")
        object.__setattr__(self, "alg", derived)

    def __repr__(self) -> str:
        return f"SigningKey(kid={self.kid!r}, alg={self.alg!r})"

    @classmethod
    def generate(cls, kid: str, alg: str = "ES256", *, jku: str | None = None) -> SigningKey:
        """A fresh key (RS256: 3072 bits). Keep it somewhere all signing processes share."""
        c = crypto()
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
        key = crypto().serialization.load_pem_private_key(pem, password=password)
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
        c = crypto()
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
    c = crypto()
    alg = alg_of(public_key)
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


def verify_bytes(alg: str, public_key: Any, signing_input: bytes, signature: bytes) -> None:
    """Check one raw signature; return when it verifies.

    :raises UnsupportedAlgorithmError: the key cannot do ``alg``.
    :raises InvalidSignatureError: it does not verify.
    """
    c = crypto()
    try:
        key_alg = alg_of(public_key)
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
