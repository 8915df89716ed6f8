"""The Agent Card codec: schema validity of every shape we emit, round trips, leniency, errors.

Schema checks go through ``schema_oracle`` (the 0.3 schema; the 1.0 schema plus
the proto's REQUIRED fields and oneofs).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import schema_oracle
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from jsonschema import ValidationError

from a2a_core.errors import InvalidParamsError
from a2a_core.models import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
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
from a2a_core.wire._card import decode_card, encode_card, encode_card_dual


@pytest.fixture(scope="module")
def validate() -> Any:
    """``validate(doc, version)``: the document is a valid AgentCard of that version."""

    def check(doc: dict[str, Any], version: str) -> None:
        schema_oracle.validate("AgentCard", doc, version)

    return check


#: Every member the dual card adds for 0.3 readers (see the card module docstring).
LEGACY_TOP = ("url", "preferredTransport", "protocolVersion", "additionalInterfaces",
              "supportsAuthenticatedExtendedCard", "security")  # fmt: skip
WRAPPERS = {"apiKeySecurityScheme", "httpAuthSecurityScheme", "oauth2SecurityScheme",
            "openIdConnectSecurityScheme", "mtlsSecurityScheme"}  # fmt: skip


def strip_legacy(doc: dict[str, Any]) -> dict[str, Any]:
    """What a 1.0-only reader keeps of a dual card."""
    doc = copy.deepcopy(doc)
    for key in LEGACY_TOP:
        doc.pop(key, None)
    doc["capabilities"].pop("stateTransitionHistory", None)
    for skill in doc["skills"]:
        skill.pop("security", None)
    for name, scheme in doc.get("securitySchemes", {}).items():
        doc["securitySchemes"][name] = {k: v for k, v in scheme.items() if k in WRAPPERS}
    return doc


# -- strategies ----------------------------------------------------------------------------

words = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)
texts = st.text(min_size=0, max_size=8)
urls = words.map(lambda w: f"https://{w}.example/a2a")
maybe = st.none() | st.booleans()
scopes = st.dictionaries(words, texts, max_size=2)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | texts,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(words, inner, max_size=2),
    max_leaves=4,
)
structs = st.dictionaries(words, json_values, max_size=2)
string_tuples = st.lists(texts, max_size=2).map(tuple)
requirements = st.dictionaries(words, st.lists(words, max_size=2).map(tuple), max_size=2)

#: kind -> the URL attributes that kind carries on the wire.
FLOW_URLS = {
    "authorization_code": ("authorization_url", "token_url", "refresh_url"),
    "client_credentials": ("token_url", "refresh_url"),
    "device_code": ("device_authorization_url", "token_url", "refresh_url"),
    "implicit": ("authorization_url", "refresh_url"),
    "password": ("token_url", "refresh_url"),
}


@st.composite
def flows_of(draw: Any, kinds: list[str], pkce: bool) -> OAuthFlows:
    made = {}
    for kind in kinds:
        values = {attr: draw(st.none() | urls) for attr in FLOW_URLS[kind]}
        if pkce and kind == "authorization_code":
            values["pkce_required"] = draw(maybe)
        made[kind] = OAuthFlow(scopes=draw(scopes), **values)
    return OAuthFlows(**made)


V03_KINDS = ["authorization_code", "client_credentials", "implicit", "password"]
#: 1.0 keeps one flow.
flows_v1 = st.sampled_from(list(FLOW_URLS)).flatmap(lambda k: flows_of([k], pkce=True))
#: 0.3 keeps several, but has no deviceCode and no pkceRequired.
flows_v03 = st.lists(st.sampled_from(V03_KINDS), unique=True).flatmap(
    lambda ks: flows_of(sorted(ks, key=V03_KINDS.index), pkce=False)
)
#: The dual card keeps both: several 0.3 flows, or a deviceCode alone (it is then the 1.0 one).
#: At least one, since the 1.0 oneof needs one.
flows_dual = st.lists(st.sampled_from(V03_KINDS), unique=True, min_size=1).flatmap(
    lambda ks: flows_of(ks, pkce=True)
) | flows_of(["device_code"], pkce=False)

descriptions = st.none() | texts


def schemes(flows: st.SearchStrategy[OAuthFlows]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(APIKeySecurityScheme, name=words, description=descriptions,
                  location=st.sampled_from(["query", "header", "cookie"])),
        st.builds(HTTPAuthSecurityScheme, scheme=st.sampled_from(["Bearer", "Basic"]),
                  bearer_format=st.none() | st.just("JWT"), description=descriptions),
        st.builds(OAuth2SecurityScheme, flows=flows, oauth2_metadata_url=st.none() | urls,
                  description=descriptions),
        st.builds(OpenIdConnectSecurityScheme, open_id_connect_url=urls, description=descriptions),
        st.builds(MutualTLSSecurityScheme, description=descriptions),
    )  # fmt: skip


def every_scheme_kind(flows: st.SearchStrategy[OAuthFlows]) -> st.SearchStrategy[Any]:
    """One scheme of each kind (two OAuth2), so that each is exercised often."""
    kinds = schemes(flows).branches
    names = ("key", "http", "oauth", "oidc", "mtls")
    return st.fixed_dictionaries({**dict(zip(names, kinds, strict=True)), "oauth-b": kinds[2]})


extensions = st.builds(
    AgentExtension, uri=urls, description=descriptions, required=st.booleans(),
    params=st.none() | structs,
)  # fmt: skip
skills = st.builds(
    AgentSkill, id=words, name=texts, description=texts, tags=string_tuples,
    examples=string_tuples, input_modes=string_tuples, output_modes=string_tuples,
    security_requirements=st.lists(requirements, max_size=2).map(tuple),
)  # fmt: skip
signatures = st.builds(
    AgentCardSignature, protected=words, signature=words, header=st.none() | structs
)


def interfaces_v1() -> st.SearchStrategy[AgentInterface]:
    return st.builds(
        AgentInterface, url=urls, tenant=st.none() | words,
        protocol_binding=st.sampled_from(["JSONRPC", "GRPC", "HTTP+JSON"]),
        protocol_version=st.sampled_from(["1.0", "0.3", "2.0"]),
    )  # fmt: skip


@st.composite
def interfaces_v03(draw: Any) -> tuple[AgentInterface, ...]:
    """What 0.3 can say: 0.3 only, no tenant, distinct pairs, the JSONRPC one first."""
    first = (draw(urls), "JSONRPC")
    rest = draw(st.lists(st.tuples(urls, st.sampled_from(["GRPC", "HTTP+JSON", "JSONRPC"]))))
    pairs = list(dict.fromkeys([first, *rest]))
    return tuple(
        AgentInterface(url=u, protocol_binding=b, protocol_version="0.3") for u, b in pairs
    )


def cards(
    interfaces: st.SearchStrategy[Any],
    flows: st.SearchStrategy[OAuthFlows],
    state_history: st.SearchStrategy[bool | None],
    extended: st.SearchStrategy[bool | None],
) -> st.SearchStrategy[AgentCard]:
    capabilities = st.builds(
        AgentCapabilities, streaming=maybe, push_notifications=maybe,
        extended_agent_card=extended, state_transition_history=state_history,
        extensions=st.lists(extensions, max_size=2).map(tuple),
    )  # fmt: skip
    return st.builds(
        AgentCard, name=texts, description=texts, version=words,
        supported_interfaces=interfaces, capabilities=capabilities,
        default_input_modes=string_tuples, default_output_modes=string_tuples,
        skills=st.lists(skills, max_size=2).map(tuple),
        provider=st.none() | st.builds(AgentProvider, organization=texts, url=urls),
        icon_url=st.none() | urls, documentation_url=st.none() | urls,
        security_schemes=st.none()
        | st.dictionaries(words, schemes(flows), max_size=3)
        | every_scheme_kind(flows),
        security_requirements=st.lists(requirements, max_size=2).map(tuple),
        signatures=st.lists(signatures, max_size=2).map(tuple),
    )  # fmt: skip


any_interfaces = st.lists(interfaces_v1(), min_size=1, max_size=3).map(tuple)
cards_v1 = cards(any_interfaces, flows_v1, st.none(), maybe)
cards_v03 = cards(interfaces_v03(), flows_v03, maybe, st.none() | st.just(True))
cards_dual = cards(any_interfaces, flows_dual, maybe, maybe)
#: Anything the model can hold, for "the output is schema-valid" properties.
cards_any = cards(any_interfaces, flows_of(list(FLOW_URLS), pkce=True), maybe, maybe)


# -- schema validity and round trips -------------------------------------------------------

#: No "explain" phase: its line tracing through jsonschema turns a failure into minutes.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]


@settings(max_examples=60, deadline=None, phases=PHASES)
@given(card=cards_any)
def test_every_card_encodes_schema_valid_in_both_versions(card: AgentCard, validate: Any) -> None:
    validate(encode_card(card, "1.0"), "1.0")
    validate(encode_card(card, "0.3"), "0.3")


@settings(max_examples=80, deadline=None, phases=PHASES)
@given(card=cards_v1)
def test_v1_round_trip(card: AgentCard) -> None:
    assert decode_card(encode_card(card, "1.0")) == card


@settings(max_examples=80, deadline=None, phases=PHASES)
@given(card=cards_v03)
def test_v03_round_trip(card: AgentCard) -> None:
    assert decode_card(encode_card(card, "0.3")) == card


@settings(max_examples=80, deadline=None, phases=PHASES)
@given(card=cards_dual)
def test_dual_card_serves_both_and_round_trips(card: AgentCard, validate: Any) -> None:
    doc = encode_card_dual(card)
    validate(doc, "0.3")
    validate(strip_legacy(doc), "1.0")
    assert decode_card(doc) == card
    assert decode_card(strip_legacy(doc)) == decode_card(encode_card(card, "1.0"))


@settings(max_examples=25, deadline=None, phases=PHASES)
@given(card=cards_any, junk=st.dictionaries(st.text(min_size=1).map(lambda s: "x-" + s), structs))
def test_unknown_members_are_ignored(card: AgentCard, junk: dict[str, Any]) -> None:
    doc = {**encode_card(card, "1.0"), **junk}
    doc["capabilities"] = {**doc["capabilities"], **junk}
    assert decode_card(doc) == decode_card(encode_card(card, "1.0"))


def full_card() -> AgentCard:
    """One card with every scheme kind, flows, extensions, provider, signatures, skill security."""
    return AgentCard(
        name="Planner",
        description="Plans routes",
        version="2.1.0",
        supported_interfaces=[
            AgentInterface(url="https://h/a2a", protocol_version="1.0", tenant="t1"),
            AgentInterface(url="https://h/a2a/v03", protocol_version="0.3"),
            AgentInterface(url="https://h/grpc", protocol_binding="GRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extended_agent_card=True,
            extensions=[AgentExtension(uri="https://ext/x", required=True, params={"a": [1]})],
        ),
        skills=[
            AgentSkill(
                id="route",
                name="Route",
                description="d",
                tags=("maps",),
                examples=("from A to B",),
                input_modes=("text/plain",),
                security_requirements=[{"oauth": ("read",)}, {"mtls": ()}],
            ),
        ],  # fmt: skip
        provider=AgentProvider(organization="Org", url="https://org"),
        icon_url="https://h/icon.png",
        documentation_url="https://h/docs",
        security_schemes={
            "key": APIKeySecurityScheme(name="X-Key", location="header", description="k"),
            "bearer": HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT"),
            "oauth": OAuth2SecurityScheme(
                flows=OAuthFlows(
                    authorization_code=OAuthFlow(
                        authorization_url="https://as/auth",
                        token_url="https://as/token",
                        scopes={"read": "Read"},
                        pkce_required=True,
                    ),
                    client_credentials=OAuthFlow(token_url="https://as/token"),
                ),
                oauth2_metadata_url="https://as/.well-known/oauth-authorization-server",
            ),  # fmt: skip
            "oidc": OpenIdConnectSecurityScheme(open_id_connect_url="https://id/.well-known"),
            "mtls": MutualTLSSecurityScheme(description="client certificate"),
        },
        security_requirements=[{"oauth": ("read",), "key": ()}],
        signatures=[
            AgentCardSignature(
                protected="eyJhbGciOiJFUzI1NiJ9", signature="c2ln", header={"kid": "k1"}
            )
        ],  # fmt: skip
    )


def test_v1_shape_of_the_full_card(validate: Any) -> None:
    doc = encode_card(full_card(), "1.0")
    validate(doc, "1.0")
    assert doc["supportedInterfaces"][0] == {
        "url": "https://h/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0",
        "tenant": "t1",
    }  # fmt: skip
    assert doc["securitySchemes"]["key"] == {
        "apiKeySecurityScheme": {"location": "header", "name": "X-Key", "description": "k"}
    }
    assert doc["securitySchemes"]["mtls"] == {
        "mtlsSecurityScheme": {"description": "client certificate"}
    }
    assert doc["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"] == {
        "authorizationCode": {
            "authorizationUrl": "https://as/auth", "tokenUrl": "https://as/token",
            "scopes": {"read": "Read"}, "pkceRequired": True,
        }
    }  # fmt: skip
    assert doc["securityRequirements"] == [
        {"schemes": {"oauth": {"list": ["read"]}, "key": {"list": []}}}
    ]
    assert doc["skills"][0]["securityRequirements"][1] == {"schemes": {"mtls": {"list": []}}}
    assert doc["capabilities"] == {
        "streaming": True, "pushNotifications": False, "extendedAgentCard": True,
        "extensions": [{"uri": "https://ext/x", "required": True, "params": {"a": [1]}}],
    }  # fmt: skip
    for legacy in ("url", "protocolVersion", "security", "supportsAuthenticatedExtendedCard"):
        assert legacy not in doc


def test_v03_shape_of_the_full_card(validate: Any) -> None:
    doc = encode_card(full_card(), "0.3")
    validate(doc, "0.3")
    # the first 0.3 JSONRPC interface is the main one; all 0.3 ones are listed, the 1.0 one not
    assert (doc["url"], doc["preferredTransport"], doc["protocolVersion"]) == (
        "https://h/a2a/v03", "JSONRPC", "0.3.0",
    )  # fmt: skip
    assert doc["additionalInterfaces"] == [
        {"url": "https://h/a2a/v03", "transport": "JSONRPC"},
        {"url": "https://h/grpc", "transport": "GRPC"},
    ]
    assert doc["supportsAuthenticatedExtendedCard"] is True
    assert "extendedAgentCard" not in doc["capabilities"]
    assert doc["securitySchemes"]["key"] == {
        "type": "apiKey", "in": "header", "name": "X-Key", "description": "k",
    }  # fmt: skip
    assert doc["securitySchemes"]["mtls"] == {
        "type": "mutualTLS",
        "description": "client certificate",
    }
    assert doc["securitySchemes"]["oauth"]["flows"] == {
        "authorizationCode": {
            "authorizationUrl": "https://as/auth", "tokenUrl": "https://as/token",
            "scopes": {"read": "Read"},
        },
        "clientCredentials": {"tokenUrl": "https://as/token", "scopes": {}},
    }  # fmt: skip
    assert doc["security"] == [{"oauth": ["read"], "key": []}]
    assert doc["skills"][0]["security"] == [{"oauth": ["read"]}, {"mtls": []}]
    assert "supportedInterfaces" not in doc and "securityRequirements" not in doc


def test_dual_full_card(validate: Any) -> None:
    card = full_card()
    doc = encode_card_dual(card)
    validate(doc, "0.3")
    validate(strip_legacy(doc), "1.0")
    assert decode_card(doc) == card
    assert doc["securitySchemes"]["key"] == {
        "type": "apiKey", "in": "header", "name": "X-Key", "description": "k",
        "apiKeySecurityScheme": {"location": "header", "name": "X-Key", "description": "k"},
    }  # fmt: skip


def test_dual_card_is_deliberately_not_strict_v1(validate: Any) -> None:
    """The caveat in the module docstring: strict 1.0 validation fails on the 0.3 members,
    and removing the top-level ones alone is not enough (schemes, skills, capabilities)."""
    doc = encode_card_dual(full_card())
    with pytest.raises(ValidationError):
        validate(doc, "1.0")
    for key in LEGACY_TOP:
        doc.pop(key, None)
    with pytest.raises(ValidationError):
        validate(doc, "1.0")
    validate(strip_legacy(doc), "1.0")


def test_dual_skeleton_matches_reference() -> None:
    """The 1.0 specification's example of one endpoint serving 1.0 and 0.3."""
    card = AgentCard(
        name="Echo", description="…", version="1.0.0",
        supported_interfaces=[
            AgentInterface(url="https://h/a2a", protocol_version="1.0"),
            AgentInterface(url="https://h/a2a", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        skills=[AgentSkill(id="echo", name="Echo", description="…", tags=("echo",))],
    )  # fmt: skip
    assert encode_card_dual(card) == {
        "name": "Echo", "description": "…", "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "https://h/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://h/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        "url": "https://h/a2a", "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "…", "tags": ["echo"]}],
    }  # fmt: skip


# -- lossy spots, stated ---------------------------------------------------------------------


def test_v1_drops_state_transition_history_and_extra_flows() -> None:
    card = full_card()
    card = AgentCard(
        **{f: getattr(card, f) for f in AgentCard.__dataclass_fields__ if f != "capabilities"},
        capabilities=AgentCapabilities(state_transition_history=True),
    )
    back = decode_card(encode_card(card, "1.0"))
    assert back.capabilities.state_transition_history is None
    assert back.security_schemes is not None
    oauth = back.security_schemes["oauth"]
    assert isinstance(oauth, OAuth2SecurityScheme)
    assert oauth.flows.client_credentials is None  # the oneof kept authorizationCode only
    assert oauth.flows.authorization_code == OAuthFlow(
        authorization_url="https://as/auth", token_url="https://as/token",
        scopes={"read": "Read"}, pkce_required=True,
    )  # fmt: skip


def test_v03_losses() -> None:
    card = AgentCard(
        name="n", description="d", version="1",
        supported_interfaces=[AgentInterface(url="https://h", protocol_version="0.3", tenant="t")],
        capabilities=AgentCapabilities(extended_agent_card=False),
        security_schemes={
            "dev": OAuth2SecurityScheme(flows=OAuthFlows(device_code=OAuthFlow(token_url="t"))),
            "code": OAuth2SecurityScheme(flows=OAuthFlows(authorization_code=OAuthFlow(
                authorization_url="a", token_url="t", pkce_required=True))),
        },
    )  # fmt: skip
    back = decode_card(encode_card(card, "0.3"))
    assert back.supported_interfaces == (AgentInterface(url="https://h", protocol_version="0.3"),)
    assert back.capabilities.extended_agent_card is None
    assert back.security_schemes == {
        "dev": OAuth2SecurityScheme(flows=OAuthFlows()),
        "code": OAuth2SecurityScheme(
            flows=OAuthFlows(authorization_code=OAuthFlow(authorization_url="a", token_url="t"))
        ),
    }


def test_v03_of_a_v1_only_card_uses_every_interface() -> None:
    card = AgentCard(
        name="n", description="d", version="1",
        supported_interfaces=[
            AgentInterface(url="https://h/rest", protocol_binding="HTTP+JSON"),
            AgentInterface(url="https://h/rpc"),
        ],
    )  # fmt: skip
    doc = encode_card(card, "0.3")
    assert (doc["url"], doc["preferredTransport"]) == ("https://h/rpc", "JSONRPC")
    assert doc["additionalInterfaces"] == [
        {"url": "https://h/rpc", "transport": "JSONRPC"},
        {"url": "https://h/rest", "transport": "HTTP+JSON"},
    ]


def test_single_interface_has_no_additional_interfaces() -> None:
    card = AgentCard(name="n", supported_interfaces=[AgentInterface(url="https://h")])
    assert "additionalInterfaces" not in encode_card(card, "0.3")


def test_encode_refuses_bad_versions_and_cards_without_endpoints() -> None:
    card = AgentCard(name="n", supported_interfaces=[AgentInterface(url="https://h")])
    assert encode_card(card, "1.0.1") == encode_card(card, "1.0")
    assert encode_card(card, "0.3.0") == encode_card(card, "0.3")
    for version in ("2.0", "0.2", "latest", ""):
        with pytest.raises(ValueError, match="version"):
            encode_card(card, version)
    for encode in (
        lambda c: encode_card(c, "1.0"),
        lambda c: encode_card(c, "0.3"),
        encode_card_dual,
    ):
        with pytest.raises(ValueError, match="interface"):
            encode(AgentCard(name="n"))


# -- decoding cards written by others -------------------------------------------------------

#: A card as a 0.3 agent (a2a-python 0.3 era) publishes it, written by hand to the 0.3 schema.
REAL_V03 = {
    "protocolVersion": "0.3.0",
    "name": "GeoSpatial Route Planner Agent",
    "description": "Provides advanced route planning, traffic analysis, and custom map generation.",
    "url": "https://georoute-agent.example.com/a2a/v1",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [
        {"url": "https://georoute-agent.example.com/a2a/v1", "transport": "JSONRPC"},
        {"url": "https://georoute-agent.example.com/a2a/grpc", "transport": "GRPC"},
        {"url": "https://georoute-agent.example.com/a2a/json", "transport": "HTTP+JSON"},
    ],
    "provider": {"organization": "Example Geo Services Inc.", "url": "https://www.examplegeoservices.com"},
    "iconUrl": "https://georoute-agent.example.com/icon.png",
    "version": "1.2.0",
    "documentationUrl": "https://docs.examplegeoservices.com/georoute-agent/api",
    "capabilities": {
        "streaming": True,
        "pushNotifications": True,
        "stateTransitionHistory": False,
        "extensions": [{"uri": "https://ext.example/traffic/v1", "description": "live traffic"}],
    },
    "securitySchemes": {
        "google": {"type": "openIdConnect",
                   "openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"},
        "apikey": {"type": "apiKey", "in": "query", "name": "key"},
        "oauth": {"type": "oauth2", "description": "corporate SSO", "flows": {
            "clientCredentials": {"tokenUrl": "https://sso/token", "scopes": {"routes": "plan"}},
            "implicit": {"authorizationUrl": "https://sso/auth", "scopes": {}},
        }},
    },
    "security": [{"google": ["openid", "profile", "email"]}],
    "defaultInputModes": ["application/json", "text/plain"],
    "defaultOutputModes": ["application/json", "image/png"],
    "skills": [
        {
            "id": "route-optimizer-traffic",
            "name": "Traffic-Aware Route Optimizer",
            "description": "Calculates the optimal driving route between two or more locations.",
            "tags": ["maps", "routing", "navigation"],
            "examples": ["Plan a route from '1600 Amphitheatre Parkway' to 'San Francisco'."],
            "inputModes": ["application/json", "text/plain"],
            "outputModes": ["application/json", "application/vnd.geo+json", "text/html"],
            "security": [{"apikey": []}],
        }
    ],
    "supportsAuthenticatedExtendedCard": True,
    "signatures": [{"protected": "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJrZXktMSJ9",
                    "signature": "QFdkNLNszlGj3z3u0YQGt_T9LixY3qtdQpZmsTdDHDe3fXV9y9-B3m2"}],
}  # fmt: skip


def test_a_real_v03_card_decodes(validate: Any) -> None:
    validate(REAL_V03, "0.3")  # the fixture itself is a valid 0.3 card
    card = decode_card(REAL_V03)
    base = "https://georoute-agent.example.com/a2a"
    assert card.supported_interfaces == (
        AgentInterface(url=f"{base}/v1", protocol_binding="JSONRPC", protocol_version="0.3"),
        AgentInterface(url=f"{base}/grpc", protocol_binding="GRPC", protocol_version="0.3"),
        AgentInterface(url=f"{base}/json", protocol_binding="HTTP+JSON", protocol_version="0.3"),
    )
    assert card.url == f"{base}/v1"
    assert card.capabilities == AgentCapabilities(
        streaming=True, push_notifications=True, state_transition_history=False,
        extended_agent_card=True,
        extensions=[
            AgentExtension(uri="https://ext.example/traffic/v1", description="live traffic")
        ],
    )  # fmt: skip
    assert card.security_schemes == {
        "google": OpenIdConnectSecurityScheme(
            open_id_connect_url="https://accounts.google.com/.well-known/openid-configuration"
        ),
        "apikey": APIKeySecurityScheme(name="key", location="query"),
        "oauth": OAuth2SecurityScheme(
            description="corporate SSO",
            flows=OAuthFlows(
                client_credentials=OAuthFlow(
                    token_url="https://sso/token", scopes={"routes": "plan"}
                ),
                implicit=OAuthFlow(authorization_url="https://sso/auth"),
            ),
        ),
    }
    assert card.security_requirements == ({"google": ("openid", "profile", "email")},)
    assert card.skills[0].security_requirements == ({"apikey": ()},)
    assert card.skills[0].output_modes[1] == "application/vnd.geo+json"
    assert card.provider == AgentProvider(
        organization="Example Geo Services Inc.", url="https://www.examplegeoservices.com"
    )
    assert card.signatures[0].header is None
    assert card.default_input_modes == ("application/json", "text/plain")


def test_minimal_v03_card_defaults_transport_and_version() -> None:
    card = decode_card({"name": "n", "description": "", "version": "1", "skills": [],
                        "url": "https://h", "protocolVersion": "0.2.5"})  # fmt: skip
    assert card.supported_interfaces == (AgentInterface(url="https://h", protocol_version="0.2"),)
    odd = decode_card({"name": "n", "description": "", "version": "1", "skills": [],
                       "url": "https://h", "protocolVersion": "v-next"})  # fmt: skip
    assert odd.supported_interfaces[0].protocol_version == "0.3"
    assert odd.capabilities == AgentCapabilities()
    assert odd.default_input_modes == ("text/plain",)  # the model's default when absent


def test_seed_card_keeps_its_interface_version() -> None:
    """The Elixir seed writes protocolVersion "2.0" into its interface: kept as is."""
    doc = {
        "name": "seed", "description": "", "version": "0.1.0", "skills": [],
        "supportedInterfaces": [{"url": "https://h/", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "2.0"}],
        "capabilities": {"streaming": False, "pushNotifications": False,
                         "stateTransitionHistory": False, "extendedAgentCard": False},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    }  # fmt: skip
    card = decode_card(doc)
    assert card.supported_interfaces == (AgentInterface(url="https://h/", protocol_version="2.0"),)
    assert card.capabilities.extended_agent_card is False
    assert card.capabilities.state_transition_history is False


def test_v1_card_in_proto_names_and_both_requirement_shapes() -> None:
    """ProtoJSON readers accept snake_case; requirements are told apart by shape."""
    doc = {
        "name": "n", "description": "d", "version": "1", "skills": [],
        "supported_interfaces": [{"url": "https://h", "protocol_binding": "GRPC",
                                  "protocol_version": "1.0", "tenant": "t"}],
        "icon_url": "https://h/i.png",
        "security_schemes": {"k": {"api_key_security_scheme": {"location": "cookie", "name": "c"}}},
        "security_requirements": [{"schemes": {"k": {"list": ["a"]}}}],
        "security": [{"ignored": []}],  # 1.0 member wins when both are present
    }  # fmt: skip
    card = decode_card(doc)
    assert card.supported_interfaces == (
        AgentInterface(url="https://h", protocol_binding="GRPC", tenant="t"),
    )
    assert card.icon_url == "https://h/i.png"
    assert card.security_schemes == {"k": APIKeySecurityScheme(name="c", location="cookie")}
    assert card.security_requirements == ({"k": ("a",)},)
    # a 0.3-shaped requirement list under the 1.0 member name, and a scheme called "schemes"
    doc["security_requirements"] = [{"k": ["b"], "schemes": ["c"]}]
    assert decode_card(doc).security_requirements == ({"k": ("b",), "schemes": ("c",)},)


def test_empty_supported_interfaces_falls_back_to_url() -> None:
    doc = {"name": "n", "description": "d", "version": "1", "skills": [],
           "supportedInterfaces": [], "url": "https://h", "preferredTransport": "GRPC"}  # fmt: skip
    assert decode_card(doc).supported_interfaces == (
        AgentInterface(url="https://h", protocol_binding="GRPC", protocol_version="0.3"),
    )


def test_extended_card_flag_from_either_place() -> None:
    base = {"name": "n", "description": "d", "version": "1", "skills": [], "url": "https://h"}
    assert decode_card({**base, "supportsAuthenticatedExtendedCard": True}).capabilities == (
        AgentCapabilities(extended_agent_card=True)
    )
    both = {**base, "supportsAuthenticatedExtendedCard": True,
            "capabilities": {"extendedAgentCard": False}}  # fmt: skip
    assert decode_card(both).capabilities.extended_agent_card is False


# -- bad input ------------------------------------------------------------------------------

GOOD = {
    "name": "n", "description": "d", "version": "1",
    "supportedInterfaces": [
        {"url": "https://h", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "skills": [{"id": "s", "name": "S", "description": "", "tags": []}],
    "capabilities": {},
    "securitySchemes": {
        "k": {"apiKeySecurityScheme": {"location": "header", "name": "X"}},
        "o": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
            "authorizationUrl": "a", "tokenUrl": "t", "scopes": {"read": "r"}}}}},
    },
    "securityRequirements": [{"schemes": {"k": {"list": []}}}],
}  # fmt: skip


def _set(doc: Any, path: list[Any], value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    if value is KeyError:
        del doc[path[-1]]
    else:
        doc[path[-1]] = value


BAD = [
    (["name"], KeyError, "name"),
    (["name"], 5, "name"),
    (["description"], None, "description"),
    (["skills"], KeyError, "skills"),
    (["skills"], {}, "skills"),
    (["skills", 0], "s", "skills[0]"),
    (["skills", 0, "id"], 7, "skills[0].id"),
    (["skills", 0, "tags"], [1], "skills[0].tags[0]"),
    (["capabilities"], [], "capabilities"),
    (["capabilities", "streaming"], "yes", "capabilities.streaming"),
    (["capabilities", "extensions"], [{"required": True}], "capabilities.extensions[0].uri"),
    (["supportedInterfaces", 0, "url"], KeyError, "supportedInterfaces[0].url"),
    (["supportedInterfaces"], KeyError, "url"),
    (["supportedInterfaces"], "https://h", "supportedInterfaces"),
    (["provider"], {"organization": "o"}, "provider.url"),
    (["signatures"], [{"protected": "p"}], "signatures[0].signature"),
    (["defaultInputModes"], "text/plain", "defaultInputModes"),
    (["securitySchemes"], [], "securitySchemes"),
    (["securitySchemes", "k"], {"type": "bogus"}, "securitySchemes.k.type"),
    (["securitySchemes", "k"], {"description": "no kind"}, "securitySchemes.k.type"),
    (["securitySchemes", "k", "httpAuthSecurityScheme"], {"scheme": "Basic"}, "securitySchemes.k"),
    (["securitySchemes", "k", "apiKeySecurityScheme", "name"], KeyError,
     "securitySchemes.k.apiKeySecurityScheme.name"),
    (["securitySchemes", "o", "oauth2SecurityScheme", "flows", "authorizationCode", "scopes",
      "read"], 1, "securitySchemes.o.oauth2SecurityScheme.flows.authorizationCode.scopes.read"),
    (["securitySchemes", "o", "oauth2SecurityScheme", "flows"], KeyError,
     "securitySchemes.o.oauth2SecurityScheme.flows"),
    (["securityRequirements", 0, "schemes", "k", "list"], [1],
     "securityRequirements[0].schemes.k.list[0]"),
    (["securityRequirements", 0], {"k": "read"}, "securityRequirements[0].k"),
]  # fmt: skip


@pytest.mark.parametrize(("where", "value", "path"), BAD, ids=[b[2] for b in BAD])
def test_bad_cards_name_the_path(where: list[Any], value: Any, path: str) -> None:
    decode_card(GOOD)  # the base document is fine
    doc = copy.deepcopy(GOOD)
    _set(doc, where, value)
    with pytest.raises(InvalidParamsError) as info:
        decode_card(doc)
    assert list(info.value.field_violations) == [path]
    assert path in info.value.message
    assert info.value.code == -32602
    with pytest.raises(InvalidParamsError) as nested:
        decode_card(doc, path="result")
    assert list(nested.value.field_violations) == [f"result.{path}"]


def test_additional_interfaces_need_a_transport() -> None:
    doc = {**REAL_V03, "additionalInterfaces": [{"url": "https://h"}]}
    with pytest.raises(InvalidParamsError) as info:
        decode_card(doc)
    assert list(info.value.field_violations) == ["additionalInterfaces[0].transport"]


@pytest.mark.parametrize("data", [None, [], "card", 1])
def test_a_card_must_be_an_object(data: Any) -> None:
    with pytest.raises(InvalidParamsError, match="must be an object"):
        decode_card(data)
    with pytest.raises(InvalidParamsError) as info:
        decode_card(data, path="result")
    assert list(info.value.field_violations) == ["result"]


def test_a_name_only_skill_takes_its_name_as_id() -> None:
    """Seed cards carry name-only skills ("echo!" -> tool ``Calc_Agent_echo_``)."""
    doc = copy.deepcopy(GOOD)
    del doc["skills"][0]["id"]
    skill = decode_card(doc).skills[0]
    assert skill.id == skill.name == doc["skills"][0]["name"]


def test_security_scopes_given_as_lists_equal_their_decoded_form() -> None:
    from a2a_core.models import AgentCard, AgentInterface, AgentSkill

    card = AgentCard(
        name="n",
        supported_interfaces=[AgentInterface(url="https://h/a2a")],
        skills=[AgentSkill(id="s", name="s", security_requirements=[{"oauth": ["read"]}])],
        security_requirements=[{"oauth": ["read", "write"]}],
    )
    assert decode_card(encode_card(card, "1.0")) == card
