"""The cards of an authenticating A2AApp, over real HTTP: extended card and signed cards.

* The extended card needs credentials in every binding, even when the policy
  lets anonymous callers do everything else; with them it has the extra skill
  and the declared schemes, and the public card says it exists (both spellings).
* ``CardSettings.signing_keys``: each served variant (dual, strict 1.0) and the extended
  card in each version carry a signature over their own content that our
  verifier accepts with the keys found at the signature's ``jku``, which the app
  serves (merged with the push-signing keys); the bytes, and so the ETag, do
  not change from one request (or one process with the same key) to the next.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
import requests
from app_auth_support import BINDINGS, Caller, WhoAgent, assert_refused, result
from support.a2a_http import served

from a2a_core._service import CallContext
from a2a_core.models import AgentCard, AgentSkill
from a2a_core.signing import InvalidSignatureError, SigningKey, verify_card
from a2a_wsgi import A2AApp, PushSettings
from a2a_wsgi.auth import AuthPolicy, BearerAuthenticator
from a2a_wsgi.push import PushSigner
from a2a_wsgi.push import SigningKey as PushKey
from a2a_wsgi.settings import CardSettings

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}
CARD_KEY = SigningKey.generate("card-1", "ES256")
NEXT_KEY = SigningKey.generate("card-2", "EdDSA")
EXTRA = AgentSkill(id="admin", name="Admin", description="For members only", tags=["admin"])
CARD_PATH = "/.well-known/agent-card.json"


def _app(*, required: bool = False, keys: tuple[SigningKey, ...] = (CARD_KEY,),
         last_modified: datetime | None = None, **options: Any) -> A2AApp:
    """Anonymous calls allowed (unless ``required``); the extended card adds EXTRA and
    names the caller in its description."""
    holder: list[A2AApp] = []

    def extended(ctx: CallContext) -> AgentCard:
        card = holder[0].card
        who = getattr(ctx.identity, "identity", None)
        return dataclasses.replace(card, skills=[*card.skills, EXTRA],
                                   description=f"{card.description} (for {who})")

    app = A2AApp(
        WhoAgent(),
        auth=AuthPolicy([BearerAuthenticator(TOKENS.get)], required=required),
        **options,
        card=CardSettings(extended_card=extended, signing_keys=tuple(keys),
                          last_modified=last_modified),
    )
    holder.append(app)
    return app


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with served(_app()) as handle:
        yield handle.url


def _as(base: str, binding: str, token: str | None) -> Caller:
    return Caller(base, binding, headers={"Authorization": f"Bearer {token}"} if token else {})


def _protected(signature: dict[str, Any]) -> dict[str, Any]:
    raw = signature["protected"]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    return decoded


def _verified_by_its_jku(card: dict[str, Any], base: str) -> list[str]:
    """Verify each signature with the keys its ``jku`` serves; the kids, in order."""
    kids = []
    for signature in card["signatures"]:
        header = _protected(signature)
        assert header["jku"] == base + "/.well-known/jwks.json"
        assert header["typ"] == "JOSE"
        keys = requests.get(header["jku"], timeout=5).json()
        one = {**card, "signatures": [signature]}
        assert verify_card(one, keys).kid == header["kid"]
        kids.append(header["kid"])
    return kids


# -- the extended card --------------------------------------------------------------------


def test_the_public_card_says_there_is_an_extended_card(base: str) -> None:
    dual = requests.get(base + CARD_PATH, timeout=5).json()
    strict = requests.get(base + CARD_PATH, headers={"A2A-Version": "1.0"}, timeout=5).json()
    assert dual["supportsAuthenticatedExtendedCard"] is True
    assert dual["capabilities"]["extendedAgentCard"] is True
    assert strict["capabilities"]["extendedAgentCard"] is True
    assert [s["id"] for s in strict["skills"]] == ["who"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_anonymous_callers_may_send_but_not_read_the_extended_card(base: str,
                                                                   binding: str) -> None:
    anonymous = _as(base, binding, None)
    assert anonymous.send().status_code == 200
    refused = anonymous.extended_card()
    assert_refused(refused, binding, scheme="Bearer")
    if binding != "rest":
        assert refused.json()["id"] is not None  # the body was read to find the method
    assert_refused(_as(base, binding, "tok-mallory").extended_card(), binding, scheme="Bearer")


@pytest.mark.parametrize("method", ["agent/getAuthenticatedExtendedCard",
                                    "GetExtendedAgentCard"])
def test_a_method_name_spelled_with_escapes_is_still_the_extended_card(base: str,
                                                                       method: str) -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in method)
    body = f'{{"jsonrpc":"2.0","id":7,"method":"{escaped}","params":{{}}}}'
    version = {} if "/" in method else {"A2A-Version": "1.0"}
    response = requests.post(base + "/", data=body, timeout=5,
                             headers={"Content-Type": "application/json", **version})
    assert_refused(response, "jsonrpc-0.3" if "/" in method else "jsonrpc-1.0")
    assert response.json()["id"] == 7


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_authenticated_caller_gets_the_extended_card_signed(base: str, binding: str) -> None:
    card = result(_as(base, binding, "tok-bob").extended_card(), binding)
    assert [s["id"] for s in card["skills"]] == ["who", "admin"]
    assert card["description"].endswith("(for bob)")
    assert "bearer" in card["securitySchemes"]
    if binding == "jsonrpc-0.3":
        assert card["supportsAuthenticatedExtendedCard"] is True and "url" in card
        assert card["security"] == [{"bearer": []}]
    else:
        assert card["capabilities"]["extendedAgentCard"] is True
        assert "url" not in card and card["supportedInterfaces"]
    assert _verified_by_its_jku(card, base) == ["card-1"]


def test_a_policy_requiring_credentials_refuses_the_extended_card_before_the_body() -> None:
    with served(_app(required=True)) as handle:
        for binding in BINDINGS:
            response = _as(handle.url, binding, None).extended_card()
            assert_refused(response, binding, scheme="Bearer")
            if binding != "rest":
                assert response.json()["id"] is None


def test_anonymous_callers_learn_there_is_no_extended_card_as_others_do() -> None:
    """Without an extended card the capability gate answers first: no challenge."""
    app = A2AApp(WhoAgent(), auth=AuthPolicy([BearerAuthenticator(TOKENS.get)], required=False))
    with served(app) as handle:
        for token in (None, "tok-bob"):
            for binding in BINDINGS:
                response = _as(handle.url, binding, token).extended_card()
                assert response.status_code == (400 if binding == "rest" else 200)
                assert "WWW-Authenticate" not in response.headers
                code = response.json()["error"]["code"]
                assert code == {"jsonrpc-0.3": -32007, "jsonrpc-1.0": -32004, "rest": 400}[
                    binding], (binding, response.text)


def test_without_auth_the_extended_card_is_left_to_the_deployment() -> None:
    """No auth=: the app cannot tell who calls, so it serves the card as before."""
    app = A2AApp(
        WhoAgent(),
        card=CardSettings(extended_card=lambda ctx: AgentCard(name="Extended")),
    )
    with served(app) as handle:
        card = result(_as(handle.url, "jsonrpc-1.0", None).extended_card(), "jsonrpc-1.0")
        assert card["name"] == "Extended" and "signatures" not in card


# -- signed cards -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", [{}, {"A2A-Version": "0.3"}, {"A2A-Version": "1.0"},
                                     {"query": "1.0"}],
                         ids=["dual", "dual-0.3", "strict-header", "strict-query"])
def test_each_served_variant_is_signed_over_its_own_content(base: str,
                                                            variant: dict[str, str]) -> None:
    query = {"A2A-Version": variant.pop("query")} if "query" in variant else None
    response = requests.get(base + CARD_PATH, headers=variant, params=query, timeout=5)
    card = response.json()
    strict = "url" not in card
    assert strict == (query is not None or variant.get("A2A-Version") == "1.0")
    assert _verified_by_its_jku(card, base) == ["card-1"]
    tampered = {**card, "description": "Another agent"}
    with pytest.raises(InvalidSignatureError):
        verify_card(tampered, requests.get(base + "/.well-known/jwks.json", timeout=5).json())
    again = requests.get(base + CARD_PATH, headers=variant, params=query, timeout=5)
    assert again.content == response.content and again.headers["ETag"] == response.headers["ETag"]
    cached = requests.get(base + CARD_PATH, params=query, timeout=5,
                          headers={**variant, "If-None-Match": response.headers["ETag"]})
    assert cached.status_code == 304


def test_the_two_variants_have_their_own_bodies_and_etags(base: str) -> None:
    dual = requests.get(base + CARD_PATH, timeout=5)
    strict = requests.get(base + CARD_PATH, headers={"A2A-Version": "1.0"}, timeout=5)
    assert dual.headers["ETag"] != strict.headers["ETag"]
    assert dual.json()["signatures"] != strict.json()["signatures"] or \
        dual.content != strict.content


def test_processes_sharing_a_key_serve_the_same_signed_bytes() -> None:
    """What two gunicorn workers do: one key, one card, one ETag (ES256 signs
    deterministically, EdDSA always does)."""
    moment = datetime(2026, 1, 1, tzinfo=timezone.utc)
    bodies = []
    for _ in range(2):
        app = _app(keys=(CARD_KEY, NEXT_KEY), base_url="https://agents.example/who/",
                   last_modified=moment)
        with served(app) as handle:
            response = requests.get(handle.url + CARD_PATH, timeout=5)
            bodies.append((response.content, response.headers["ETag"]))
    assert bodies[0] == bodies[1]


def test_a_rotation_signs_with_every_key_and_publishes_them_all() -> None:
    push_key = PushKey.generate("push-1")
    app = _app(keys=(NEXT_KEY, CARD_KEY),
               push=PushSettings(signer=PushSigner([push_key])))
    with served(app) as handle:
        card = requests.get(handle.url + CARD_PATH, timeout=5).json()
        assert _verified_by_its_jku(card, handle.url) == ["card-2", "card-1"]
        jwks = requests.get(handle.url + "/.well-known/jwks.json", timeout=5)
        assert jwks.headers["Content-Type"] == "application/jwk-set+json"
        assert [k["kid"] for k in jwks.json()["keys"]] == ["push-1", "card-2", "card-1"]
        assert all("d" not in k for k in jwks.json()["keys"])  # public halves only
        for kid in ("card-1", "card-2"):
            only = {"keys": [k for k in jwks.json()["keys"] if k["kid"] == kid]}
            assert verify_card(card, only).kid == kid


def test_the_jku_follows_the_public_base_url() -> None:
    app = _app(base_url="https://agents.example/who/")
    with served(app) as handle:
        card = requests.get(handle.url + CARD_PATH, timeout=5).json()
    header = _protected(card["signatures"][0])
    assert header["jku"] == "https://agents.example/who/.well-known/jwks.json"
    assert card["url"] == "https://agents.example/who/"


def test_a_kid_shared_by_a_card_key_and_a_push_key_is_refused() -> None:
    with pytest.raises(ValueError, match="kid"):
        _app(keys=(SigningKey.generate("push-1"),),
             push=PushSettings(signer=PushSigner([PushKey.generate("push-1")])))
    with pytest.raises(ValueError, match="unique"):
        _app(keys=(CARD_KEY, SigningKey.generate("card-1")))


def test_an_unsigned_app_serves_no_jwks() -> None:
    app = A2AApp(WhoAgent())
    with served(app) as handle:
        assert requests.get(handle.url + "/.well-known/jwks.json", timeout=5).status_code == 404
        assert "signatures" not in requests.get(handle.url + CARD_PATH, timeout=5).json()
