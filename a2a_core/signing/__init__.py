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

The JOSE work is PyJWT's and canonical JSON ``rfc8785``'s (the ``signing``
extra); what is here is the A2A part. Nothing here does I/O or reads a clock.
"""

from __future__ import annotations

from ._card import JWKS_PATH as JWKS_PATH
from ._card import CardSigner as CardSigner
from ._card import VerifiedSignature as VerifiedSignature
from ._card import add_signature as add_signature
from ._card import canonical_card as canonical_card
from ._card import canonicalize as canonicalize
from ._card import jwks_url as jwks_url
from ._card import sign_card as sign_card
from ._card import signed_content as signed_content
from ._card import verify_card as verify_card
from ._card_view import MAX_DEPTH as MAX_DEPTH
from ._errors import CanonicalizationError as CanonicalizationError
from ._errors import InvalidSignatureError as InvalidSignatureError
from ._errors import MalformedCardError as MalformedCardError
from ._errors import MalformedSignatureError as MalformedSignatureError
from ._errors import MissingSignatureError as MissingSignatureError
from ._errors import SignatureError as SignatureError
from ._errors import UnknownKeyError as UnknownKeyError
from ._errors import UnsignedContentError as UnsignedContentError
from ._errors import UnsupportedAlgorithmError as UnsupportedAlgorithmError
from ._jose import ALGORITHMS as ALGORITHMS
from ._jose import JWKSCache as JWKSCache
from ._jose import KeySource as KeySource
from ._jose import SigningKey as SigningKey
from ._jose import check_algorithms as check_algorithms
from ._jose import jwks as jwks
from ._jose import parse_protected as parse_protected
from ._jose import public_jwk as public_jwk
from ._jose import sign_compact as sign_compact
from ._jose import verify_compact as verify_compact

__all__ = [
    "ALGORITHMS", "CardSigner", "JWKS_PATH", "MAX_DEPTH", "CanonicalizationError",
    "InvalidSignatureError", "JWKSCache", "KeySource", "MalformedCardError",
    "MalformedSignatureError", "MissingSignatureError", "SignatureError", "SigningKey",
    "UnknownKeyError", "UnsignedContentError", "UnsupportedAlgorithmError", "VerifiedSignature",
    "add_signature", "canonical_card", "canonicalize", "check_algorithms", "jwks", "jwks_url",
    "parse_protected", "public_jwk", "sign_card", "sign_compact", "signed_content", "verify_card",
    "verify_compact",
]
