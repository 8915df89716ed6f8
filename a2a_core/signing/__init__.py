"""Signed Agent Cards (A2A §8.4) and the JWS pieces behind them, sans-IO.

* :func:`canonicalize`: RFC 8785 (JCS) bytes of any JSON value (the ``rfc8785`` package).
* :func:`sign_card` / :func:`add_signature` / :func:`verify_card`: detached JWS
  over a card's canonical form, interoperable with the official SDKs.
* :class:`SigningKey`, :func:`jwks`, :func:`public_jwk`: keys and the JWKS to publish.
* :func:`sign_compact` / :func:`verify_compact`: compact JWS (JWTs) with the same
  algorithm allow-list (ES256, EdDSA, RS256; never ``none``) and key choice by ``kid``.
* :class:`JWKSCache`: when a verifier should fetch a JWKS again.
* :class:`CardSigner`: a server's keys, signing each card it serves (``jku`` at
  :data:`JWKS_PATH` below the card's base URL).

Modules: ``_card`` (card signatures, the served cards), ``_card_view`` (what a
signature covers), ``_jose`` (keys, key sources, JWKS schedule), ``_errors``.

The JOSE work is PyJWT's, canonical JSON ``rfc8785``'s (both, with
``cryptography``, are the ``signing`` extra, imported on first use); what is
here is the A2A part: what a card signature covers, its header, where the key
set is served. Nothing here does I/O or reads a clock.
"""

from __future__ import annotations

from ._card import (
    JWKS_PATH,
    CardSigner,
    VerifiedSignature,
    add_signature,
    canonical_card,
    canonicalize,
    jwks_url,
    sign_card,
    signed_content,
    verify_card,
)
from ._card_view import MAX_DEPTH
from ._errors import (
    CanonicalizationError,
    InvalidSignatureError,
    MalformedCardError,
    MalformedSignatureError,
    MissingSignatureError,
    SignatureError,
    UnknownKeyError,
    UnsignedContentError,
    UnsupportedAlgorithmError,
)
from ._jose import (
    ALGORITHMS,
    JWKSCache,
    KeySource,
    SigningKey,
    check_algorithms,
    jwks,
    parse_protected,
    public_jwk,
    sign_compact,
    verify_compact,
)

__all__ = [
    "ALGORITHMS", "CardSigner", "JWKS_PATH", "MAX_DEPTH", "CanonicalizationError",
    "InvalidSignatureError", "JWKSCache", "KeySource", "MalformedCardError",
    "MalformedSignatureError", "MissingSignatureError", "SignatureError", "SigningKey",
    "UnknownKeyError", "UnsignedContentError", "UnsupportedAlgorithmError", "VerifiedSignature",
    "add_signature", "canonical_card", "canonicalize", "check_algorithms", "jwks", "jwks_url",
    "parse_protected", "public_jwk", "sign_card", "sign_compact", "signed_content", "verify_card",
    "verify_compact",
]
