"""Base64url without padding (RFC 7515 §2), strict on the way in: JWS and JWK members use it."""

from __future__ import annotations

import base64
import binascii
import re

from .errors import MalformedSignatureError

__all__ = ["b64url_decode", "b64url_encode"]

_B64URL = re.compile(r"[A-Za-z0-9_-]*")


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
