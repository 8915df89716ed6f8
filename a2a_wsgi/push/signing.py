"""Signed push deliveries: a JWT over each webhook body, and the JWKS that verifies it.

Off by default. When a :class:`PushSigner` is configured, every delivery
carries ``X-A2A-Push-Signature: <JWT>``, a compact JWS whose protected header
names the key (``kid``) and whose claims bind it to this exact request:

* ``iat`` / ``exp``: signed at send time (a retry is signed afresh), valid
  for ``lifetime`` seconds;
* ``jti``: the delivery's idempotency key, so a receiver can drop replays;
* ``aud``: the webhook URL; ``iss``: the agent's URL when known;
* ``taskId``; ``request_body_sha256``: hex SHA-256 of the body bytes.

Receivers fetch the public keys from :data:`JWKS_PATH` and check all of this
with :func:`a2a_client.verify_push`.

Why hand-written JWS over ``cryptography`` rather than PyJWT: the only thing
we need from a library is the signature primitive. ``cryptography`` provides
Ed25519 and ECDSA P-256, is maintained by the PyCA, ships wheels everywhere
and is already installed wherever ``requests[security]``, ``paramiko`` or
most TLS tooling is; PyJWT would add a second package on top of it (its
``[crypto]`` extra *is* ``cryptography``). The compact serialization is
twenty lines, and writing it ourselves lets verification refuse everything
but the two algorithms we sign with (no ``alg: none``, no HMAC/RSA key
confusion). It is an optional extra (``pip install a2a-wsgi[signing]``),
imported only when a signer is created.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "JWKS_PATH",
    "SIGNATURE_HEADER",
    "PushSigner",
    "SigningKey",
    "b64url",
]

#: Where the app serves the public keys (relative to the server root).
JWKS_PATH = "/.well-known/jwks.json"
#: The request header that carries the JWT.
SIGNATURE_HEADER = "X-A2A-Push-Signature"

_MISSING_EXTRA = (
    "signed push deliveries need the 'cryptography' package: pip install 'a2a-wsgi[signing]'"
)


def b64url(raw: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _crypto() -> Any:
    """The ``cryptography`` modules we use, imported on first need (optional extra)."""
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, utils
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise RuntimeError(_MISSING_EXTRA) from exc
    return hashes, serialization, ec, ed25519, utils


@dataclass(frozen=True, slots=True)
class SigningKey:
    """One private key with its ``kid`` and JWS algorithm (``EdDSA`` or ``ES256``)."""

    kid: str
    private_key: Any
    alg: str

    @classmethod
    def generate(cls, kid: str, alg: str = "EdDSA") -> SigningKey:
        """A fresh key. Keys live in memory: give a multi-process deployment a shared one."""
        _, _, ec, ed25519, _ = _crypto()
        if alg == "EdDSA":
            return cls(kid, ed25519.Ed25519PrivateKey.generate(), alg)
        if alg == "ES256":
            return cls(kid, ec.generate_private_key(ec.SECP256R1()), alg)
        raise ValueError(f"unsupported signing algorithm {alg!r}; use EdDSA or ES256")

    @classmethod
    def from_pem(cls, kid: str, pem: bytes, password: bytes | None = None) -> SigningKey:
        """A PEM (PKCS#8) Ed25519 or P-256 private key, e.g. read from a deployment secret."""
        _, serialization, ec, ed25519, _ = _crypto()
        key = serialization.load_pem_private_key(pem, password=password)
        if isinstance(key, ed25519.Ed25519PrivateKey):
            return cls(kid, key, "EdDSA")
        if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
            return cls(kid, key, "ES256")
        raise ValueError("only Ed25519 and P-256 (ES256) private keys can sign pushes")

    def sign(self, data: bytes) -> bytes:
        """The raw JWS signature (ES256: r || s, 32 bytes each, not DER)."""
        hashes, _, ec, _, utils = _crypto()
        if self.alg == "EdDSA":
            return bytes(self.private_key.sign(data))
        der = self.private_key.sign(data, ec.ECDSA(hashes.SHA256()))
        r, s = utils.decode_dss_signature(der)
        return bytes(int(r).to_bytes(32, "big") + int(s).to_bytes(32, "big"))

    def public_jwk(self) -> dict[str, str]:
        """The public half as a JWK (RFC 8037 OKP for Ed25519, RFC 7518 EC for P-256)."""
        _, serialization, _, _, _ = _crypto()
        public = self.private_key.public_key()
        base = {"kid": self.kid, "alg": self.alg, "use": "sig"}
        if self.alg == "EdDSA":
            raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            return {**base, "kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}
        numbers = public.public_numbers()
        return {**base, "kty": "EC", "crv": "P-256",
                "x": b64url(numbers.x.to_bytes(32, "big")),
                "y": b64url(numbers.y.to_bytes(32, "big"))}


@dataclass(slots=True)
class PushSigner:
    """Signs deliveries with ``keys[0]``; every key is published, so rotation is: prepend the
    new key, wait one JWKS cache period, then drop the old one.

    ``issuer`` goes into ``iss`` when set (the agent's public URL is a good choice).
    """

    keys: list[SigningKey] = field(default_factory=list)
    lifetime: float = 300.0
    issuer: str | None = None

    def __post_init__(self) -> None:
        if not self.keys:
            self.keys = [SigningKey.generate("push-1")]
        kids = [k.kid for k in self.keys]
        if len(set(kids)) != len(kids):
            raise ValueError("signing key ids must be unique")

    def jwks(self) -> dict[str, Any]:
        """The document served at :data:`JWKS_PATH`."""
        return {"keys": [key.public_jwk() for key in self.keys]}

    def sign(self, *, body: bytes, url: str, task_id: str, jti: str, now: float) -> str:
        """The JWT for one delivery attempt (``now``: seconds since the epoch)."""
        key = self.keys[0]
        header = {"alg": key.alg, "typ": "JWT", "kid": key.kid}
        claims: dict[str, Any] = {
            "iat": int(now),
            "exp": int(now + self.lifetime),
            "jti": jti,
            "aud": url,
            "taskId": task_id,
            "request_body_sha256": hashlib.sha256(body).hexdigest(),
        }
        if self.issuer:
            claims["iss"] = self.issuer
        signing_input = f"{_segment(header)}.{_segment(claims)}".encode("ascii")
        return f"{signing_input.decode('ascii')}.{b64url(key.sign(signing_input))}"


def _segment(obj: Mapping[str, Any]) -> str:
    return b64url(json.dumps(obj, separators=(",", ":"), sort_keys=True).encode("utf-8"))
