"""Signed agent cards against the official SDK (a2a-sdk 1.3.0, ``a2a.utils.signing``).

Both directions, for each algorithm, on cards that exercise what broke cross-SDK
verification before (non-ASCII text, astral keys, ECMAScript numbers, explicit
proto defaults, every security scheme kind, empty REQUIRED members): the SDK
verifies cards we sign, in every variant we serve, and we verify cards the SDK
signs, both as it serves them (1.0 members plus the 0.3 ones) and as plain 1.0.
The last test fetches an SDK-served signed card over HTTP with our client's
verifier.
"""

from __future__ import annotations

import copy
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from interop_support import require_sdk

require_sdk()
if os.environ.get("CI") != "true":  # the test extra has it: in CI, a missing PyJWT fails
    pytest.importorskip("jwt", reason="a2a.utils.signing needs PyJWT (a2a-sdk[signing])")

from a2a.client.card_resolver import parse_agent_card  # noqa: E402
from a2a.server.request_handlers.response_helpers import agent_card_to_dict  # noqa: E402
from a2a.utils.signing import (  # noqa: E402
    InvalidSignaturesError,
    create_agent_card_signer,
    create_signature_verifier,
)
from cryptography.hazmat.primitives import serialization  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402
from jwt.api_jwk import PyJWK  # noqa: E402

from a2a_core.models import (  # noqa: E402
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlow,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
)
from a2a_core.signing import (  # noqa: E402
    InvalidSignatureError,
    SigningKey,
    add_signature,
    jwks,
    verify_card,
)
from a2a_core.wire._card import encode_card, encode_card_dual  # noqa: E402
from a2a_wsgi.settings import CardSettings  # noqa: E402

ALGS = ["ES256", "EdDSA", "RS256"]
URL = "https://agent.example/a2a"


def _card(**changes: Any) -> AgentCard:
    fields: dict[str, Any] = dict(
        name="Agent für Überweisungen ✓", description="Décrit en français — 日本語も",
        version="2.0.1",
        supported_interfaces=[AgentInterface(url=URL, protocol_version="1.0"),
                              AgentInterface(url=URL, protocol_version="0.3")],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False,
                                       extended_agent_card=True, extensions=[
            AgentExtension(uri="urn:a2a:ext:a", required=False, params={
                "tiny": 0.000001, "whole": 1, "big": 1e21, "third": 1 / 3, "neg": -0.0,
                "\U0001f600": "astral key", "\uff01": "fullwidth key", "nested": {"x": [1, 2.5]},
            }),
            AgentExtension(uri="urn:a2a:ext:b", description="required one", required=True),
        ]),
        skills=[
            AgentSkill(id="pay", name="Pay", description="Überweist", tags=["pay", "€"],
                       examples=["zahle 5 €"], security_requirements=[{"oauth": ["pay"]}]),
            AgentSkill(id="ping", name="Ping", description="", tags=["ping"]),
        ],
        security_schemes={
            "bearer": HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT",
                                             description="JWT from our IdP"),
            "key": APIKeySecurityScheme(name="X-API-Key", location="header"),
            "mtls": MutualTLSSecurityScheme(),
            "oidc": OpenIdConnectSecurityScheme(
                open_id_connect_url="https://idp.example/.well-known/openid-configuration"),
            "oauth": OAuth2SecurityScheme(flows=OAuthFlows(client_credentials=OAuthFlow(
                token_url="https://idp.example/token", scopes={"pay": "Make payments"}))),
        },
        security_requirements=[{"bearer": []}, {"key": [], "mtls": []}, {"oauth": ["pay"]}],
        icon_url="https://agent.example/icon.png",
    )
    fields.update(changes)
    return AgentCard(**fields)


VARIANTS = {
    "dual": encode_card_dual,
    "1.0": lambda card: encode_card(card, "1.0"),
    "0.3": lambda card: encode_card(card, "0.3"),
}


def _received(doc: dict[str, Any]) -> dict[str, Any]:
    """The document as it arrives: JSON text parsed back."""
    parsed: dict[str, Any] = json.loads(json.dumps(doc, ensure_ascii=False))
    return parsed


def _sdk_verify(card_doc: dict[str, Any], key: SigningKey) -> None:
    """What an SDK client does with a fetched card: parse it, then verify its signatures."""
    jwk = PyJWK(key.public_jwk())

    def key_provider(kid: str | None, jku: str | None) -> PyJWK:
        assert kid == key.kid
        return jwk

    proto = parse_agent_card(copy.deepcopy(card_doc))
    create_signature_verifier(key_provider, [key.alg])(proto)


def _pem(key: SigningKey) -> bytes:
    return bytes(key.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))


def _sdk_signed(card: AgentCard, key: SigningKey) -> Any:
    """The SDK's own proto card (read from our dual card, as an SDK client would), signed."""
    proto = parse_agent_card(_received(encode_card_dual(card)))
    signer = create_agent_card_signer(_pem(key), {"alg": key.alg, "kid": key.kid, "typ": "JOSE",
                                                  "jku": None})
    return signer(proto)


@pytest.fixture(scope="module", params=ALGS)
def key(request: pytest.FixtureRequest) -> SigningKey:
    return SigningKey.generate(f"interop-{request.param}", request.param,
                               jku="https://agent.example/.well-known/jwks.json")


@pytest.fixture(autouse=True)
def _sdk_warnings_are_not_errors() -> Iterator[None]:
    """The SDK warns (not raises) about empty REQUIRED members; the cards have some on purpose."""
    import logging

    logging.getLogger("a2a").setLevel(logging.ERROR)
    yield


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_sdk_verifies_cards_we_sign(key: SigningKey, variant: str) -> None:
    signed = add_signature(VARIANTS[variant](_card()), key)
    _sdk_verify(_received(signed), key)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_sdk_rejects_cards_we_sign_once_tampered(key: SigningKey, variant: str) -> None:
    signed = _received(add_signature(VARIANTS[variant](_card()), key))
    signed["name"] = "Agent für Überweisungen ✗"
    with pytest.raises(InvalidSignaturesError):
        _sdk_verify(signed, key)


@pytest.mark.parametrize("served", ["sdk-dual", "sdk-1.0"])
def test_we_verify_cards_the_sdk_signs(key: SigningKey, served: str) -> None:
    proto = _sdk_signed(_card(), key)
    doc = agent_card_to_dict(proto) if served == "sdk-dual" else MessageToDict(proto)
    verified = verify_card(_received(doc), jwks([key]), algorithms=[key.alg])
    assert verified.kid == key.kid and verified.alg == key.alg


def test_we_reject_sdk_signed_cards_once_tampered(key: SigningKey) -> None:
    doc = _received(agent_card_to_dict(_sdk_signed(_card(), key)))
    doc["skills"][0]["tags"].append("admin")
    with pytest.raises(InvalidSignatureError):
        verify_card(doc, jwks([key]))


@pytest.mark.parametrize("case", ["explicit-defaults", "no-optional-members", "mtls-only",
                                  "empty-params"])
def test_edge_cards_round_trip_both_ways(key: SigningKey, case: str) -> None:
    """The shapes behind a2a-js#605 and #627: defaults spelled out, empty members, empty
    message schemes."""
    card = {
        "explicit-defaults": _card(),
        "no-optional-members": AgentCard(name="Bare", supported_interfaces=[
            AgentInterface(url=URL, protocol_version="1.0")]),
        "mtls-only": _card(security_schemes={"mtls": MutualTLSSecurityScheme()},
                           security_requirements=[{"mtls": []}], skills=[]),
        "empty-params": _card(capabilities=AgentCapabilities(extensions=[
            AgentExtension(uri="urn:e", params={"empty": "", "none": None, "list": []})])),
    }[case]
    doc = _received(encode_card_dual(card))
    if case == "explicit-defaults":
        doc["capabilities"]["extensions"][0]["required"] = False
        doc["capabilities"]["extensions"][1]["description"] = "required one"
    _sdk_verify(_received(add_signature(doc, key)), key)
    sdk_doc = agent_card_to_dict(_sdk_signed(card, key))
    assert verify_card(_received(sdk_doc), jwks([key])).kid == key.kid


# -- over HTTP: an SDK-served signed card, fetched and checked by our client ----------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def sdk_card_server() -> Iterator[tuple[str, SigningKey]]:
    """The SDK's card routes (signing through ``card_modifier``) and a JWKS, under uvicorn."""
    import uvicorn
    from a2a.server.routes.agent_card_routes import create_agent_card_routes
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    key = SigningKey.generate("sdk-served", "ES256")
    port = _free_port()
    jku = f"http://127.0.0.1:{port}/.well-known/jwks.json"
    signer = create_agent_card_signer(_pem(key), {"alg": "ES256", "kid": key.kid, "typ": "JOSE",
                                                  "jku": jku})
    proto = parse_agent_card(_received(encode_card_dual(_card())))

    async def sign(card: Any) -> Any:
        fresh = type(card)()
        fresh.CopyFrom(card)
        return signer(fresh)

    async def keys(request: Any) -> JSONResponse:
        return JSONResponse(jwks([key]))

    routes = [*create_agent_card_routes(proto, card_modifier=sign),
              Route("/.well-known/jwks.json", keys)]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), host="127.0.0.1", port=port,
                                           log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}", key
    finally:
        server.should_exit = True
        thread.join(10)


def test_our_client_verifies_a_card_the_sdk_serves(sdk_card_server: tuple[str, SigningKey]
                                                   ) -> None:
    import requests

    from a2a_client.auth import CardVerifier

    base, key = sdk_card_server
    response = requests.get(f"{base}/.well-known/agent-card.json", timeout=5)
    response.raise_for_status()
    card = response.json()
    verifier = CardVerifier(jwks_url=f"{base}/.well-known/jwks.json")
    assert verifier(card).kid == key.kid
    card["url"] = "https://evil.example/a2a"
    with pytest.raises(InvalidSignatureError):
        verifier(card)


# -- over HTTP: the cards an A2AApp with CardSettings.signing_keys serves, checked by the SDK -


def _jku_key_provider(alg: str) -> Any:
    """What an SDK client would do with a card's ``jku``: fetch the JWKS, pick the kid."""
    import requests

    def key_provider(kid: str | None, jku: str | None) -> PyJWK:
        assert jku is not None and kid is not None
        keys = requests.get(jku, timeout=5).json()["keys"]
        return PyJWK(next(k for k in keys if k["kid"] == kid))

    return create_signature_verifier(key_provider, [alg])


@pytest.fixture(scope="module")
def signed_app(key: SigningKey) -> Iterator[str]:
    """Our A2AApp signing its cards with ``key``, behind a bearer token, on werkzeug."""
    import dataclasses

    from a2a_core._service import CallContext
    from a2a_wsgi import A2AApp, Agent, AgentContext, reply, serve
    from a2a_wsgi.auth import BearerAuthenticator

    class Echo(Agent):
        name = "Signed Echo"
        description = "Echoes, with a signed card ✓"
        skills = [AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])]

        def handle_message(self, msg: Any, ctx: AgentContext) -> Any:
            return reply(*msg.parts)

    def extended(ctx: CallContext) -> AgentCard:
        extra = AgentSkill(id="more", name="More", description="Members only", tags=["x"])
        return dataclasses.replace(app.card, skills=[*app.card.skills, extra])

    app = A2AApp(
        Echo(),
        auth=BearerAuthenticator({"tok": "alice"}.get),
        card=CardSettings(extended_card=extended, signing_keys=(key,)),
    )
    handle = serve(app, "127.0.0.1:0")
    try:
        yield handle.url
    finally:
        handle.stop()
        app.close()


@pytest.mark.parametrize("version", [None, "0.3", "1.0"])
def test_sdk_verifies_each_card_variant_an_app_serves(signed_app: str, key: SigningKey,
                                                      version: str | None) -> None:
    import requests

    headers = {"A2A-Version": version} if version else {}
    doc = requests.get(f"{signed_app}/.well-known/agent-card.json", headers=headers,
                       timeout=5).json()
    assert ("url" in doc) == (version != "1.0")  # dual, or strict 1.0
    _jku_key_provider(key.alg)(parse_agent_card(copy.deepcopy(doc)))
    doc["skills"][0]["description"] = "Does something else"
    with pytest.raises(InvalidSignaturesError):
        _jku_key_provider(key.alg)(parse_agent_card(doc))


@pytest.mark.parametrize("version", ["0.3", "1.0"])
def test_sdk_verifies_the_extended_card_an_app_serves(signed_app: str, key: SigningKey,
                                                      version: str) -> None:
    import requests

    method = "GetExtendedAgentCard" if version == "1.0" else "agent/getAuthenticatedExtendedCard"
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    headers = {"Authorization": "Bearer tok"}
    if version == "1.0":
        body["params"], headers["A2A-Version"] = {}, "1.0"
    card = requests.post(f"{signed_app}/", json=body, headers=headers, timeout=5).json()["result"]
    assert [s["id"] for s in card["skills"]] == ["echo", "more"]
    _jku_key_provider(key.alg)(parse_agent_card(copy.deepcopy(card)))
