"""JWS (RFC 7515) over ``cryptography``: keys, JWKs, and signing and verifying bytes.

Three algorithms and nothing else: ES256 (ECDSA P-256, SHA-256), EdDSA
(Ed25519, RFC 8037) and RS256 (RSASSA-PKCS1-v1_5, SHA-256, keys of 2048 bits
or more). ``alg: none`` and HMAC are refused outright, whatever a caller puts
in an allow-list: a public key must never double as an HMAC secret. The key
type must fit the algorithm, so a header cannot talk a verifier into using an
RSA key for ECDSA or the like. ``cryptography`` is the optional extra
``signing``, imported when a key is first used.
"""

# Where each part lives: the algorithms, keys and their public JWKs in
# ._jws_algorithms, reading JWKs and key sources in ._jwk, base64url in
# ._b64url; this module is the compact serialisation and the public face of all.

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._b64url import b64url_decode, b64url_encode
from ._jwk import KeySource, public_key_from_jwk, resolve_key
from ._jws_algorithms import (
    ALGORITHMS,
    SigningKey,
    check_alg,
    check_algorithms,
    jwks,
    public_jwk,
    verify_bytes,
)
from .errors import MalformedSignatureError, UnsupportedAlgorithmError

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
