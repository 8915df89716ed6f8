"""Cards, JWTs and pushes signed before the JOSE code moved to PyJWT and rfc8785 still verify.

``tests/fixtures/signed_before_pyjwt.json`` was written once by the hand-written
JOSE code (issue 22): the three served card variants with an ES256, an EdDSA
and an RS256 signature each, bearer JWTs made by each key, and signed push
deliveries. Any change in what a signature covers or how it is read fails here.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from a2a_client import PushVerificationError, verify_push
from a2a_core.signing import InvalidSignatureError, UnknownKeyError, verify_card
from a2a_wsgi.auth import JWTVerifier
from a2a_wsgi.push import SIGNATURE_HEADER

FIXTURES: dict[str, Any] = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "signed_before_pyjwt.json").read_text("utf-8"))
KIDS = [key["kid"] for key in FIXTURES["card_jwks"]["keys"]]


@pytest.mark.parametrize("variant", ["dual", "1.0", "0.3"])
@pytest.mark.parametrize("kid", KIDS)
def test_each_old_card_signature_verifies(variant: str, kid: str) -> None:
    card = FIXTURES["cards"][variant]
    only = {"keys": [k for k in FIXTURES["card_jwks"]["keys"] if k["kid"] == kid]}
    verified = verify_card(card, only)
    assert verified.kid == kid and verified.index == KIDS.index(kid)
    assert verified.header["jku"] == "https://agent.example/.well-known/jwks.json"


@pytest.mark.parametrize("variant", ["dual", "1.0", "0.3"])
def test_an_old_card_changed_after_signing_is_refused(variant: str) -> None:
    card = copy.deepcopy(FIXTURES["cards"][variant])
    card["description"] = "Evil"
    with pytest.raises(InvalidSignatureError):
        verify_card(card, FIXTURES["card_jwks"])


def test_an_old_card_with_none_of_its_keys_trusted_is_refused() -> None:
    with pytest.raises(UnknownKeyError):
        verify_card({**FIXTURES["cards"]["dual"], "signatures":
                     FIXTURES["cards"]["dual"]["signatures"][:1]}, {"keys": []})


@pytest.mark.parametrize("alg", ["ES256", "EdDSA", "RS256"])
def test_old_bearer_jwts_verify(alg: str) -> None:
    jwt = FIXTURES["jwt"]
    verifier = JWTVerifier(issuer=jwt["claims"]["iss"], audience=jwt["claims"]["aud"],
                           keys=FIXTURES["card_jwks"], clock=lambda: float(jwt["now"]))
    assert verifier.claims(jwt["tokens"][alg]) == jwt["claims"]
    late = JWTVerifier(issuer=jwt["claims"]["iss"], audience=jwt["claims"]["aud"],
                       keys=FIXTURES["card_jwks"], clock=lambda: float(jwt["now"] + 3600))
    with pytest.raises(ValueError, match="expired"):
        late.claims(jwt["tokens"][alg])


@pytest.mark.parametrize("push", FIXTURES["pushes"], ids=lambda p: p["jwks"]["keys"][0]["alg"])
def test_old_signed_pushes_verify(push: dict[str, Any]) -> None:
    headers = {SIGNATURE_HEADER: push["jwt"]}
    claims = verify_push(headers, push["body"].encode(), jwks=push["jwks"], audience=push["url"],
                         clock=lambda: float(push["now"]))
    assert claims["taskId"] == "t-1" and claims["aud"] == push["url"]
    with pytest.raises(PushVerificationError, match="body"):
        verify_push(headers, push["body"].encode() + b" ", jwks=push["jwks"],
                    audience=push["url"], clock=lambda: float(push["now"]))
