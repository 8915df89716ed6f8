"""Signed Agent Cards (A2A §8.4) and the JWS pieces behind them, sans-IO.

* :func:`canonicalize`: RFC 8785 (JCS) bytes of any JSON value.
* :func:`sign_card` / :func:`add_signature` / :func:`verify_card`: detached JWS
  over a card's canonical form, interoperable with the official SDKs.
* :class:`SigningKey`, :func:`jwks`, :func:`public_jwk`: keys and the JWKS to publish.
* :func:`verify_compact` / :func:`sign_compact`: compact JWS (JWTs) with the same
  algorithm allow-list (ES256, EdDSA, RS256; never ``none``).
* :class:`JWKSCache`: when a verifier should fetch a JWKS again.
* :class:`CardSigner`: a server's keys, signing each card it serves (``jku`` at
  :data:`JWKS_PATH` below the card's base URL).

Keys need the ``cryptography`` package (the ``signing`` extra); nothing here
does I/O, reads a clock or draws randomness except through ``cryptography``.
"""

from __future__ import annotations

from .card import (
    VerifiedSignature as VerifiedSignature,
)
from .card import (
    add_signature as add_signature,
)
from .card import (
    canonical_card as canonical_card,
)
from .card import (
    check_unsigned_members as check_unsigned_members,
)
from .card import (
    sign_card as sign_card,
)
from .card import (
    signed_content as signed_content,
)
from .card import (
    verify_card as verify_card,
)
from .errors import (
    InvalidSignatureError as InvalidSignatureError,
)
from .errors import (
    MalformedCardError as MalformedCardError,
)
from .errors import (
    MalformedSignatureError as MalformedSignatureError,
)
from .errors import (
    MissingSignatureError as MissingSignatureError,
)
from .errors import (
    SignatureError as SignatureError,
)
from .errors import (
    UnknownKeyError as UnknownKeyError,
)
from .errors import (
    UnsignedContentError as UnsignedContentError,
)
from .errors import (
    UnsupportedAlgorithmError as UnsupportedAlgorithmError,
)
from .jcs import (
    MAX_DEPTH as MAX_DEPTH,
)
from .jcs import (
    CanonicalizationError as CanonicalizationError,
)
from .jcs import (
    canonicalize as canonicalize,
)
from .jose import (
    ALGORITHMS as ALGORITHMS,
)
from .jose import (
    CompactJWS as CompactJWS,
)
from .jose import (
    KeySource as KeySource,
)
from .jose import (
    SigningKey as SigningKey,
)
from .jose import (
    b64url_decode as b64url_decode,
)
from .jose import (
    b64url_encode as b64url_encode,
)
from .jose import (
    jwks as jwks,
)
from .jose import (
    public_jwk as public_jwk,
)
from .jose import (
    public_key_from_jwk as public_key_from_jwk,
)
from .jose import (
    sign_compact as sign_compact,
)
from .jose import (
    verify_compact as verify_compact,
)
from .keyset import (
    JWKSCache as JWKSCache,
)
from .served import (
    JWKS_PATH as JWKS_PATH,
)
from .served import (
    CardSigner as CardSigner,
)
from .served import (
    jwks_url as jwks_url,
)

__all__ = [
    "ALGORITHMS",
    "CardSigner",
    "JWKS_PATH",
    "MAX_DEPTH",
    "CanonicalizationError",
    "CompactJWS",
    "InvalidSignatureError",
    "JWKSCache",
    "KeySource",
    "MalformedCardError",
    "MalformedSignatureError",
    "MissingSignatureError",
    "SignatureError",
    "SigningKey",
    "UnknownKeyError",
    "UnsignedContentError",
    "UnsupportedAlgorithmError",
    "VerifiedSignature",
    "add_signature",
    "b64url_decode",
    "b64url_encode",
    "canonical_card",
    "canonicalize",
    "check_unsigned_members",
    "jwks",
    "jwks_url",
    "public_jwk",
    "public_key_from_jwk",
    "sign_card",
    "sign_compact",
    "signed_content",
    "verify_card",
    "verify_compact",
]
