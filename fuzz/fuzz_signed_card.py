"""Signed cards and JWS: a card document's signatures verified against trusted keys (the
keys of tests/fixtures/signed_before_pyjwt.json), the same text as a compact JWS (a JWT),
and a JSON object as the key set a signed card is checked with.

Documented errors: :class:`~a2a_core.signing.SignatureError` (and its subclasses) from
``verify_card`` and ``verify_compact``; StrictJSONError for text that is not JSON.
"""

from __future__ import annotations

import json

from _harness import HERE, fuzz, instrumented

with instrumented(__name__ == "__main__"):
    from a2a_core._strict_json import StrictJSONError, strict_loads
    from a2a_core.signing import SignatureError, verify_card
    from a2a_core.signing._jose import verify_compact

_FIXTURE = json.loads((HERE.parent / "tests" / "fixtures" / "signed_before_pyjwt.json")
                      .read_text("utf-8"))
TRUSTED = _FIXTURE["card_jwks"]
SIGNED = _FIXTURE["cards"]["1.0"]


def check(data: bytes) -> None:
    try:
        verify_compact(data.decode("utf-8", "replace"), TRUSTED)
    except SignatureError:
        pass
    try:
        document = strict_loads(data, 64)
    except StrictJSONError:
        return
    if not isinstance(document, dict):
        return
    try:
        verify_card(document, TRUSTED)
    except SignatureError:
        pass
    try:
        verify_card(SIGNED, document)  # the document as the key set
    except SignatureError:
        pass


if __name__ == "__main__":
    fuzz(check)
