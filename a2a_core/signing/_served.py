"""Signing the cards a server serves, and the JWKS that lets clients check them.

A server signs each document it serves (the dual card, the strict 1.0 card,
the extended card in the caller's version) over that document's own content,
with every key it holds: during a key rotation a card then carries one
signature per key, and a client that trusts either key still verifies it.

Each signature's protected header names the key (``kid``) and where its
public half is published (``jku``): the JWKS at :data:`JWKS_PATH` below the
public base URL the card is served for, so a card served for several tenant
URLs points each tenant's clients at its own address. A key given its own
``jku`` keeps it when the card has no base URL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ._card import add_signature
from ._jose import SigningKey, jwks

__all__ = ["CardSigner", "JWKS_PATH", "jwks_url"]

#: Where the public keys are served, below the app's mount point.
JWKS_PATH = "/.well-known/jwks.json"


def jwks_url(base_url: str) -> str:
    """The JWKS address of the app whose public URL is ``base_url``."""
    return base_url.rstrip("/") + JWKS_PATH


class CardSigner:
    """Signs served card documents with each of ``keys``; :meth:`jwks` publishes them."""

    def __init__(self, keys: Sequence[SigningKey]) -> None:
        keys = tuple(keys)
        if not keys:
            raise ValueError("card signing needs at least one SigningKey")
        if not all(isinstance(key, SigningKey) for key in keys):
            raise TypeError("card signing keys must be a2a_core.signing.SigningKey objects")
        kids = [key.kid for key in keys]
        if len(set(kids)) != len(kids):
            raise ValueError(f"card signing key ids must be unique: {kids}")
        self.keys = keys

    def __repr__(self) -> str:
        return f"CardSigner(kids={[key.kid for key in self.keys]!r})"

    @property
    def kids(self) -> tuple[str, ...]:
        return tuple(key.kid for key in self.keys)

    def sign(self, document: Mapping[str, Any], base_url: str | None) -> dict[str, Any]:
        """``document`` with one signature per key appended to its ``signatures``.

        :raises ValueError: the document is not a card a verifier would accept.
        """
        signed = dict(document)
        for key in self.keys:
            signed = add_signature(signed, self._published(key, base_url))
        return signed

    def jwks(self) -> dict[str, Any]:
        """The JWKS of every key (serve it at :data:`JWKS_PATH`)."""
        return jwks(list(self.keys))

    @staticmethod
    def _published(key: SigningKey, base_url: str | None) -> SigningKey:
        """``key`` whose ``jku`` is this base URL's JWKS (or its own, without a base URL)."""
        if not base_url:
            return key
        return dataclasses.replace(key, jku=jwks_url(base_url))
