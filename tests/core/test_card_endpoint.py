"""The card variants the dispatcher serves: dual by default, strict 1.0 for 1.0 readers.

The strict card is checked against the published 1.0 schema as it is (no member
removed first); the dual card against the 0.3 schema.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any, cast

import pytest
import schema_oracle
from jsonschema import ValidationError
from test_card import full_card

from a2a_core._caching import card_etag
from a2a_core._http import Headers, HttpRequest, HttpResponse
from a2a_core._server import Dispatcher, DispatcherConfig
from a2a_core._service import A2AService
from a2a_core.models import AgentCapabilities, AgentCard, AgentSkill

#: Members only 0.3 readers need (the 0.3 card's endpoint members and its security list).
LEGACY_TOP = {"url", "preferredTransport", "protocolVersion", "additionalInterfaces",
              "supportsAuthenticatedExtendedCard", "security"}


class CardOnly:
    def __init__(self, card: AgentCard) -> None:
        self.card = card

    def agent_card(self) -> AgentCard:
        return self.card


def dispatcher(card: AgentCard | None = None, versions: tuple[str, ...] = ("0.3", "1.0"),
               ) -> Dispatcher:
    card = card or AgentCard(
        name="Echo", description="Says it back", version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, state_transition_history=True),
        skills=[AgentSkill(id="echo", name="Echo", description="d", tags=("t",))])
    return Dispatcher(cast(A2AService, CardOnly(card)), DispatcherConfig(
        base_url="https://agent.example/", last_modified=datetime(2026, 1, 1, tzinfo=timezone.utc),
        versions=tuple(versions)))


def get(d: Dispatcher, headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None, method: str = "GET") -> HttpResponse:
    request = HttpRequest(method=method, path="/.well-known/agent-card.json",
                          headers=Headers(headers or {}), query=query or {})
    return d.handle(request)


def header(response: HttpResponse, name: str) -> str:
    values = [v for k, v in response.headers if k.lower() == name.lower()]
    assert len(values) == 1, response.headers
    return values[0]


def card_of(response: HttpResponse) -> dict[str, Any]:
    assert response.status == 200 and isinstance(response.body, bytes)
    return dict(json.loads(response.body))


def assert_strict(card: dict[str, Any]) -> None:
    schema_oracle.validate("AgentCard", card, "1.0")
    assert not LEGACY_TOP & set(card), card
    assert "stateTransitionHistory" not in card["capabilities"]


def assert_dual(card: dict[str, Any]) -> None:
    schema_oracle.validate("AgentCard", card, "0.3")
    assert card["url"] == "https://agent.example/" and card["protocolVersion"] == "0.3.0"
    assert card["supportedInterfaces"]


@pytest.mark.parametrize("value", ["1.0", "1", "1.0.3", " 1.0 ", "01.00", "1.1"])
def test_a_1_x_version_gets_the_strict_card(value: str) -> None:
    assert_strict(card_of(get(dispatcher(), {"A2A-Version": value})))


@pytest.mark.parametrize("headers", [{}, {"A2A-Version": "0.3"}, {"A2A-Version": "0.3.0"},
                                     {"A2A-Version": ""}, {"A2A-Version": "99.0"},
                                     {"A2A-Version": "one"}])
def test_without_a_1_x_version_the_dual_card_is_served(headers: dict[str, str]) -> None:
    default = get(dispatcher())
    response = get(dispatcher(), headers)
    assert_dual(card_of(response))
    assert response.body == default.body and header(response, "ETag") == header(default, "ETag")


def test_the_query_parameter_counts_and_the_header_wins() -> None:
    d = dispatcher()
    assert_strict(card_of(get(d, query={"A2A-Version": "1.0"})))
    assert_strict(card_of(get(d, {"A2A-Version": " "}, {"A2A-Version": "1.0"})))  # blank header
    assert_dual(card_of(get(d, {"A2A-Version": "0.3"}, {"A2A-Version": "1.0"})))
    assert_strict(card_of(get(d, {"A2A-Version": "1.0"}, {"A2A-Version": "0.3"})))


@pytest.mark.parametrize("headers", [{}, {"A2A-Version": "0.3"}, {"A2A-Version": "1.0"}])
def test_an_app_without_0_3_serves_only_the_strict_card(headers: dict[str, str]) -> None:
    response = get(dispatcher(versions=("1.0",)), headers)
    card = card_of(response)
    assert_strict(card)
    assert [(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]] == [
        ("JSONRPC", "1.0"), ("HTTP+JSON", "1.0")]
    assert "A2A-Version" in header(response, "Vary")


def test_the_full_card_is_strict_and_the_dual_one_is_not() -> None:
    """Every scheme kind, flows, extensions, signatures: the strict card passes as published."""
    d = dispatcher(full_card())
    strict, dual = card_of(get(d, {"A2A-Version": "1.0"})), card_of(get(d))
    assert_strict(strict)
    assert all("type" not in scheme for scheme in strict["securitySchemes"].values())
    assert all("security" not in skill for skill in strict["skills"])
    schema_oracle.validate("AgentCard", dual, "0.3")
    with pytest.raises(ValidationError):  # the check above can fail: the dual card does
        schema_oracle.validate("AgentCard", dual, "1.0")


def test_each_variant_has_its_own_etag_and_every_answer_varies_on_the_version() -> None:
    d = dispatcher()
    dual, strict = get(d), get(d, {"A2A-Version": "1.0"})
    assert dual.body != strict.body
    for response in (dual, strict):
        assert isinstance(response.body, bytes)
        assert header(response, "ETag") == card_etag(response.body)
        assert header(response, "ETag") == '"' + hashlib.sha256(response.body).hexdigest() + '"'
        assert header(response, "Vary") == "A2A-Version"
    assert header(dual, "ETag") != header(strict, "ETag")


def test_304_is_per_variant() -> None:
    d = dispatcher()
    dual_tag = header(get(d), "ETag")
    strict_tag = header(get(d, {"A2A-Version": "1.0"}), "ETag")
    same = get(d, {"A2A-Version": "1.0", "If-None-Match": strict_tag})
    assert (same.status, same.body) == (304, b"")
    assert header(same, "ETag") == strict_tag and header(same, "Vary") == "A2A-Version"
    assert "Content-Type" not in dict(same.headers)
    assert get(d, {"If-None-Match": dual_tag}).status == 304
    other = get(d, {"A2A-Version": "1.0", "If-None-Match": dual_tag})
    assert_strict(card_of(other))
    assert_dual(card_of(get(d, {"If-None-Match": strict_tag})))
    both = get(d, {"A2A-Version": "1.0", "If-None-Match": f"{dual_tag}, {strict_tag}"})
    assert both.status == 304


def test_head_carries_the_variants_headers_without_a_body() -> None:
    d = dispatcher()
    head = get(d, {"A2A-Version": "1.0"}, method="HEAD")
    assert (head.status, head.body) == (200, b"")
    assert header(head, "ETag") == header(get(d, {"A2A-Version": "1.0"}), "ETag")
    assert header(head, "Vary") == "A2A-Version"


def test_each_variant_is_encoded_once_per_base_url() -> None:
    d = dispatcher()
    first = get(d, {"A2A-Version": "1.0"})
    again = get(d, {"A2A-Version": "1.0"})
    assert first.body is again.body
    other = d.handle(HttpRequest(method="GET", path="/.well-known/agent-card.json",
                                 headers=Headers({"A2A-Version": "1.0"})),
                     base_url="https://tenant.example/")
    assert card_of(other)["supportedInterfaces"][0]["url"] == "https://tenant.example/"
    assert header(other, "ETag") != header(first, "ETag")
