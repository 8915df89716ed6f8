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

The JWS and the JWKs are PyJWT's, through :mod:`a2a_core.signing` (the same
restricted PyJWT as card signing, with its RFC 6979 ES256); verification
accepts only the two algorithms we sign with (no ``alg: none``, no HMAC/RSA
key confusion). It is an optional extra (``pip install a2a-wsgi[signing]``),
imported only when a signer is created.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "JWKS_PATH",
    "SIGNATURE_HEADER",
    "PushSigner",
    "SigningKey",
]

#: Where the app serves the public keys (relative to the server root).
JWKS_PATH = "/.well-known/jwks.json"
#: The request header that carries the JWT.
SIGNATURE_HEADER = "X-A2A-Push-Signature"

_MISSING_EXTRA = (
    "signed push deliveries need PyJWT and cryptography: pip install 'a2a-wsgi[signing]'"
)


def _crypto() -> Any:
    """The ``cryptography`` modules we use, imported on first need (optional extra)."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise RuntimeError(_MISSING_EXTRA) from exc
    return serialization, ec, ed25519


@dataclass(frozen=True, slots=True)
class SigningKey:
    """One private key with its ``kid`` and JWS algorithm (``EdDSA`` or ``ES256``)."""

    kid: str
    private_key: Any
    alg: str

    @classmethod
    def generate(cls, kid: str, alg: str = "EdDSA") -> SigningKey:
        """A fresh key. Keys live in memory: give a multi-process deployment a shared one."""
        _, ec, ed25519 = _crypto()
        if alg == "EdDSA":
            return cls(kid, ed25519.Ed25519PrivateKey.generate(), alg)
        if alg == "ES256":
            return cls(kid, ec.generate_private_key(ec.SECP256R1()), alg)
        raise ValueError(f"unsupported signing algorithm {alg!r}; use EdDSA or ES256")

    @classmethod
    def from_pem(cls, kid: str, pem: bytes, password: bytes | None = None) -> SigningKey:
        """A PEM (PKCS#8) Ed25519 or P-256 private key, e.g. read from a deployment secret."""
        serialization, ec, ed25519 = _crypto()
        key = serialization.load_pem_private_key(pem, password=password)
        if isinstance(key, ed25519.Ed25519PrivateKey):
            return cls(kid, key, "EdDSA")
        if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
            return cls(kid, key, "ES256")
        raise ValueError("only Ed25519 and P-256 (ES256) private keys can sign pushes")

    def public_jwk(self) -> dict[str, str]:
        """The public half as a JWK (RFC 8037 OKP for Ed25519, RFC 7518 EC for P-256)."""
        from a2a_core.signing import public_jwk

        return public_jwk(self.private_key.public_key(), kid=self.kid)


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
        from a2a_core.signing import SigningKey as JWSKey
        from a2a_core.signing import sign_compact

        key = self.keys[0]
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
        payload = json.dumps(claims, separators=(",", ":"), sort_keys=True).encode("utf-8")
        return sign_compact(payload, JWSKey(key.kid, key.private_key, key.alg), {"typ": "JWT"})
