"""Why a signature was not accepted: one class per reason, so callers can tell them apart.

::

    A2AError
    └── SignatureError               a JWS (card signature or JWT) was not accepted
        ├── MalformedSignatureError  not a JWS we can read (base64url, JSON, header members)
        ├── UnsupportedAlgorithmError  ``alg: none``, an algorithm off the allow-list, a key of
        │                            another type, or a ``crit`` extension we do not implement
        ├── UnknownKeyError          no trusted key has the signature's ``kid``
        ├── InvalidSignatureError    the signature does not match the content (tampered)
        │   └── UnsignedContentError   it verifies, but members it does not cover disagree
        │                              with the ones it does (a rewritten 0.3 ``url``, say)
        ├── MalformedCardError       the card is not an AgentCard, so nothing over it can verify
        └── MissingSignatureError    the card carries no signature at all

    ValueError
    └── CanonicalizationError        the value has no RFC 8785 form (NaN, a huge integer…)

Messages name the reason and the ``kid``, never key material or signed content.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import A2AError

__all__ = [
    "SignatureError", "MalformedSignatureError", "UnsupportedAlgorithmError", "UnknownKeyError",
    "InvalidSignatureError", "UnsignedContentError", "MalformedCardError", "MissingSignatureError",
    "CanonicalizationError",
]


class SignatureError(A2AError):
    """A signature was not accepted; ``errors`` holds one error per signature tried."""

    def __init__(self, message: str, *, errors: Sequence[SignatureError] = ()) -> None:
        super().__init__(message)
        self.errors = tuple(errors)


class MalformedSignatureError(SignatureError):
    """The JWS cannot be read: bad base64url, bad JSON, or a header member of the wrong type."""


class UnsupportedAlgorithmError(SignatureError):
    """``alg`` is ``none``, not allowed, or does not fit the key; or ``crit`` names an extension."""


class UnknownKeyError(SignatureError):
    """None of the trusted keys matches the signature's ``kid``."""


class InvalidSignatureError(SignatureError):
    """The signature does not verify over the content: it was altered or signed by another key."""


class MissingSignatureError(SignatureError):
    """The card has no ``signatures`` to verify."""


class UnsignedContentError(InvalidSignatureError):
    """A signature verifies, but the card's 0.3 members, which no signature covers, disagree
    with the 1.0 members it does cover; a 0.3 reader would act on unsigned data."""


class MalformedCardError(SignatureError):
    """The card does not have the AgentCard shape (a member of the wrong type, say)."""


class CanonicalizationError(ValueError):
    """The value has no RFC 8785 form (NaN, a lone surrogate, a non-string key, too deep)."""
