"""The one route table: which path is the card, the keys, JSON-RPC, HTTP+JSON or a mount.

The dispatcher answers every route but a mount (its adapter's own application);
these tests read the table itself and the dispatcher's answers on it.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import cast

import pytest

from a2a_core._http import Headers, HttpRequest
from a2a_core._server import Dispatcher, DispatcherConfig, RouteKind
from a2a_core._service import A2AService
from a2a_core.models import AgentCapabilities, AgentCard

CARD = AgentCard(name="Routed", description="d", version="1.0.0",
                 capabilities=AgentCapabilities())
WHEN = datetime(2026, 1, 1, tzinfo=timezone.utc)


class CardOnly:
    def agent_card(self) -> AgentCard:
        return CARD


def dispatcher(keys: dict[str, object] | None = None, **config: object) -> Dispatcher:
    made = DispatcherConfig(last_modified=WHEN, base_url="http://agent/", **config)  # type: ignore[arg-type]
    return Dispatcher(cast(A2AService, CardOnly()), made,
                      public_keys=(lambda: keys) if keys is not None or "jwks_path" in config
                      else None)


@pytest.mark.parametrize(("path", "kind", "sub_path"), [
    ("/", RouteKind.JSONRPC, ""),
    ("", RouteKind.JSONRPC, ""),
    ("/.well-known/agent-card.json", RouteKind.CARD, ""),
    (".well-known/agent-card.json/", RouteKind.CARD, ""),
    ("/.well-known/jwks.json", RouteKind.JWKS, ""),
    ("/rest", RouteKind.REST, "/"),
    ("/rest/message:send", RouteKind.REST, "/message:send"),
    ("/rest/tasks/t-1", RouteKind.REST, "/tasks/t-1"),
    ("/restless", RouteKind.NOT_FOUND, ""),
    ("/inspector", RouteKind.MOUNT, "inspector"),
    ("/inspector/app.js", RouteKind.MOUNT, "inspector"),
    ("/inspectors", RouteKind.NOT_FOUND, ""),
    ("/elsewhere", RouteKind.NOT_FOUND, ""),
])
def test_each_path_has_one_route(path: str, kind: RouteKind, sub_path: str) -> None:
    d = dispatcher(keys={"keys": []}, jwks_path="/.well-known/jwks.json",
                   mounts=("/inspector/",))
    route = d.route(path)
    assert (route.kind, route.sub_path) == (kind, sub_path)
    assert route.public == (kind in (RouteKind.CARD, RouteKind.JWKS))
    assert route.document == (kind in (RouteKind.CARD, RouteKind.JWKS))


def test_routes_follow_the_configuration() -> None:
    d = dispatcher(agent_card_path="card.json", json_rpc_path="/agent/", rest_path="api/v1")
    assert d.route("/card.json").kind is RouteKind.CARD
    assert d.route("/.well-known/agent-card.json").kind is RouteKind.NOT_FOUND
    assert d.route("/agent").kind is RouteKind.JSONRPC
    assert d.route("/").kind is RouteKind.NOT_FOUND
    assert d.route("/api/v1/tasks").sub_path == "/tasks"
    off = dispatcher(agent_card_path=None, rest_path=None)
    assert off.route("/.well-known/agent-card.json").kind is RouteKind.NOT_FOUND
    assert off.route("/rest/tasks").kind is RouteKind.NOT_FOUND
    # HTTP+JSON is a 1.0 binding: a 0.3-only server has no such route
    assert dispatcher(versions=("0.3",)).route("/rest/tasks").kind is RouteKind.NOT_FOUND
    # no keys given: the JWKS path is no route of its own
    assert dispatcher(jwks_path=None).route("/.well-known/jwks.json").kind is RouteKind.NOT_FOUND


def test_a_mount_owns_its_paths_over_any_other_route() -> None:
    d = dispatcher(json_rpc_path="tools/rpc", agent_card_path="tools/card.json",
                   mounts=("tools",))
    assert d.route("/tools/rpc").kind is RouteKind.MOUNT
    assert d.route("/tools/card.json").kind is RouteKind.MOUNT
    # the dispatcher does not answer a mount's paths: its adapter does
    assert d.handle(HttpRequest(method="GET", path="/tools/card.json")).status == 404


def test_the_keys_are_answered_when_there_are_some() -> None:
    keys = {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "abc", "kid": "k1"}]}
    d = dispatcher(keys=keys, jwks_path="/.well-known/jwks.json")
    response = d.handle(HttpRequest(method="GET", path="/.well-known/jwks.json"))
    assert response.status == 200 and json.loads(cast(bytes, response.body)) == keys
    assert ("Content-Type", "application/jwk-set+json") in response.headers
    none = dispatcher(jwks_path="/.well-known/jwks.json")  # a provider with no keys
    assert none.handle(HttpRequest(method="GET", path="/.well-known/jwks.json")).status == 404


def test_handle_is_route_then_answer() -> None:
    d = dispatcher()
    request = HttpRequest(method="GET", path="/.well-known/agent-card.json",
                          headers=Headers({}))
    handled = d.handle(request)
    answered = d.answer(d.route(request.path), request)
    assert handled.status == answered.status == 200 and handled.body == answered.body
    assert d.handle(HttpRequest(method="POST", path="/.well-known/agent-card.json")).status == 405
    assert d.handle(HttpRequest(method="GET", path="/")).status == 405


def test_the_configuration_is_one_frozen_value() -> None:
    config = DispatcherConfig(last_modified=WHEN)
    with pytest.raises(AttributeError):
        config.json_rpc_path = "x"  # type: ignore[misc]
    assert Dispatcher(cast(A2AService, CardOnly()), config).config is config
