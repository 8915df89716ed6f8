"""The agent card per reader over real HTTP: dual by default, strict 1.0 for 1.0 readers.

A request with ``A2A-Version: 1.0`` (or to an app that does not serve 0.3) gets
a card that validates against the published 1.0 schema as it is; the dual card
still validates for 0.3 readers. Both carry ``Vary: A2A-Version`` and their own
ETag, and each is revalidated (304) on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
from support.a2a_http import Peer, served
from support.schemas import check_response

from a2a_core.models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlow,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
)
from a2a_wsgi import A2AApp, Agent, get_agent_card, put_base_url, reply
from a2a_wsgi.settings import CardSettings, ProtocolSettings

CARD_PATH = "/.well-known/agent-card.json"
#: Members only 0.3 readers need (the 0.3 card's endpoint members and its security list).
LEGACY_TOP = {"url", "preferredTransport", "protocolVersion", "additionalInterfaces",
              "supportsAuthenticatedExtendedCard", "security"}

SCHEMES = {
    "key": APIKeySecurityScheme(name="X-Key", location="header", description="k"),
    "bearer": HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT"),
    "oauth": OAuth2SecurityScheme(flows=OAuthFlows(client_credentials=OAuthFlow(
        token_url="https://as/token", scopes={"read": "Read"}))),
    "oidc": OpenIdConnectSecurityScheme(open_id_connect_url="https://id/.well-known"),
    "mtls": MutualTLSSecurityScheme(),
}
RICH = {
    "capabilities": {"state_transition_history": True,
                     "extensions": (AgentExtension(uri="https://ext/x", params={"a": 1}),)},
    "provider": AgentProvider(organization="Org", url="https://org"),
    "documentation_url": "https://h/docs",
    "security_schemes": SCHEMES,
    "security_requirements": ({"oauth": ("read",)}, {"key": ()}),
}


class Planner(Agent):
    name = "Planner"
    description = "Plans routes"
    version = "2.1.0"
    skills = [AgentSkill(id="route", name="Route", description="d", tags=("maps",),
                         security_requirements=({"bearer": ()},))]

    def handle_message(self, message: Any, context: Any) -> Any:
        return reply("planned")


def extended(ctx: Any) -> AgentCard:
    return AgentCard(name="Planner (extended)", description="more", version="2.1.0",
                     capabilities=AgentCapabilities(streaming=True, extended_agent_card=True,
                                                    state_transition_history=True),
                     skills=[AgentSkill(id="secret", name="Secret", description="d",
                                        tags=("x",), security_requirements=({"mtls": ()},))],
                     security_schemes=SCHEMES, security_requirements=({"mtls": ()},))


def mounted(app: A2AApp) -> Callable[..., Any]:
    """The app behind a custom card route, as a Flask or Django mount serves it."""

    def site(environ: dict[str, Any], start_response: Any) -> Any:
        put_base_url(environ, f"http://{environ['HTTP_HOST']}/")
        if environ.get("PATH_INFO") == "/card.json":
            status, headers, body = get_agent_card(app, environ)
            start_response(status, headers)
            return [body]
        return app(environ, start_response)

    site.close = app.close  # type: ignore[attr-defined]
    return site


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    app = A2AApp(Planner(), card=CardSettings(overrides=RICH, extended_card=extended))
    with served(mounted(app)) as handle:
        yield handle.url


def fetch(url: str, headers: dict[str, str] | None = None) -> requests.Response:
    return requests.get(url, headers=headers or {}, timeout=5)


def assert_strict(response: requests.Response) -> dict[str, Any]:
    """The strict 1.0 card: valid against the published schema as it is."""
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    card = dict(response.json())
    check_response("AgentCard", card, "1.0")  # unmodified: no member is removed first
    assert not LEGACY_TOP & set(card), sorted(card)
    assert "stateTransitionHistory" not in card["capabilities"]
    return card


def assert_dual(response: requests.Response, base: str) -> dict[str, Any]:
    assert response.status_code == 200
    card = dict(response.json())
    check_response("AgentCard", card, "0.3")
    assert card["url"] == base + "/" and card["protocolVersion"] == "0.3.0"
    return card


def test_the_strict_card_for_a_1_0_reader(site: str) -> None:
    card = assert_strict(fetch(site + "/card.json", {"A2A-Version": "1.0"}))
    assert [(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]] == [
        ("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0")]
    assert all(set(s) == {SCHEME_KEYS[name]} for name, s in card["securitySchemes"].items())
    assert card["securityRequirements"] == [{"schemes": {"oauth": {"list": ["read"]}}},
                                            {"schemes": {"key": {"list": []}}}]


SCHEME_KEYS = {"key": "apiKeySecurityScheme", "bearer": "httpAuthSecurityScheme",
               "oauth": "oauth2SecurityScheme", "oidc": "openIdConnectSecurityScheme",
               "mtls": "mtlsSecurityScheme"}


@pytest.mark.parametrize("headers", [{}, {"A2A-Version": "0.3"}], ids=["no-version", "0.3"])
def test_the_dual_card_without_a_version_and_for_0_3(site: str, headers: dict[str, str]) -> None:
    card = assert_dual(fetch(site + "/card.json", headers), site)
    assert card["security"] == [{"oauth": ["read"]}, {"key": []}]
    assert card["securitySchemes"]["key"]["type"] == "apiKey"
    assert fetch(site + "/card.json").content == fetch(site + "/card.json", headers).content


def test_the_dual_card_is_what_strict_1_0_validation_refuses(site: str) -> None:
    """The strict check above can fail: the dual card, validated as published, does."""
    from jsonschema import ValidationError

    with pytest.raises(ValidationError):
        check_response("AgentCard", fetch(site + "/card.json").json(), "1.0")


def test_vary_and_one_etag_per_variant(site: str) -> None:
    dual = fetch(site + "/card.json")
    strict = fetch(site + "/card.json", {"A2A-Version": "1.0"})
    for response in (dual, strict):
        assert response.headers["Vary"] == "A2A-Version"
        assert response.headers["Cache-Control"] == "public, max-age=300"
    assert dual.headers["ETag"] != strict.headers["ETag"]
    assert fetch(site + "/card.json", {"A2A-Version": "1.0"}).headers["ETag"] == (
        strict.headers["ETag"])


def test_304_per_variant(site: str) -> None:
    url = site + "/card.json"
    dual_tag = fetch(url).headers["ETag"]
    strict_tag = fetch(url, {"A2A-Version": "1.0"}).headers["ETag"]
    same = fetch(url, {"A2A-Version": "1.0", "If-None-Match": strict_tag})
    assert (same.status_code, same.content, same.headers["ETag"]) == (304, b"", strict_tag)
    assert same.headers["Vary"] == "A2A-Version"
    assert fetch(url, {"If-None-Match": dual_tag}).status_code == 304
    # The other variant's tag does not match: the full card of the variant asked for.
    assert_strict(fetch(url, {"A2A-Version": "1.0", "If-None-Match": dual_tag}))
    assert_dual(fetch(url, {"If-None-Match": strict_tag}), site)


def test_an_app_without_0_3_serves_the_strict_card_on_its_own_route() -> None:
    with served(A2AApp(
        Planner(),
        card=CardSettings(overrides=RICH),
        protocol=ProtocolSettings(versions=("1.0",)),
    )) as handle:
        url = handle.url + CARD_PATH
        for headers in ({}, {"A2A-Version": "0.3"}, {"A2A-Version": "1.0"}):
            response = fetch(url, headers)
            card = assert_strict(response)
            assert [(i["protocolBinding"], i["protocolVersion"])
                    for i in card["supportedInterfaces"]] == [
                ("JSONRPC", "1.0"), ("HTTP+JSON", "1.0")]
            assert response.headers["Vary"] == "A2A-Version"
        tag = fetch(url).headers["ETag"]
        assert fetch(url, {"If-None-Match": tag}).status_code == 304


@pytest.mark.parametrize("version", ["0.3", "1.0"])
def test_the_extended_card_is_strict_in_the_negotiated_version(site: str, version: str) -> None:
    answer = Peer(site, version).rpc("extended_card")
    card = answer["result"]
    assert card["name"] == "Planner (extended)"
    check_response("AgentCard", card, version)  # as published, nothing removed
    if version == "1.0":
        assert not LEGACY_TOP & set(card) and "stateTransitionHistory" not in card["capabilities"]
        assert card["capabilities"]["extendedAgentCard"] is True
    else:
        assert card["url"] == site + "/" and card["supportsAuthenticatedExtendedCard"] is True
        assert "supportedInterfaces" not in card


def test_the_apps_own_route_serves_the_strict_card_for_the_header() -> None:
    with served(A2AApp(Planner(), card=CardSettings(overrides=RICH))) as handle:
        url = handle.url + CARD_PATH
        assert_dual(fetch(url), handle.url)
        strict = fetch(url, {"A2A-Version": "1.0"})
        assert_strict(strict)
        assert strict.headers["ETag"] != fetch(url).headers["ETag"]


def test_the_apps_own_route_serves_the_strict_card_for_the_query_parameter() -> None:
    with served(A2AApp(Planner(), card=CardSettings(overrides=RICH))) as handle:
        assert_strict(fetch(handle.url + CARD_PATH + "?A2A-Version=1.0"))
