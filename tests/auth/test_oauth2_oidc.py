"""OAuth 2.0 (JWT access tokens or introspection) and OpenID Connect (discovery over HTTP)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from auth_support import AUDIENCE, ISSUER, NOW, JWKSApp, jwt_for, request_with, unsigned_jwt
from support.wsgi_server import Served

from a2a_core.models import (
    OAuth2SecurityScheme,
    OAuthFlow,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
)
from a2a_core.signing import SigningKey
from a2a_core.wire._card import encode_card_dual
from a2a_wsgi.auth import (
    AuthPolicy,
    InvalidCredentialsError,
    JWTVerifier,
    OAuth2Authenticator,
    OpenIDConnectAuthenticator,
    PermissionDeniedError,
)

KEY = SigningKey.generate("as-1", "RS256")
FLOWS = OAuthFlows(client_credentials=OAuthFlow(token_url="https://idp.example/token",
                                                scopes={"agent:call": "Call the agent"}))
ACTIVE = {
    "opaque-alice": {"active": True, "sub": "alice", "scope": "agent:call", "exp": NOW + 60,
                     "iss": ISSUER, "aud": AUDIENCE},
    "opaque-client": {"active": True, "client_id": "svc-7", "scope": "agent:call"},
    "opaque-expired": {"active": True, "sub": "bob", "scope": "agent:call", "exp": NOW - 120},
    "opaque-other-aud": {"active": True, "sub": "bob", "scope": "agent:call",
                         "aud": "https://other.example"},
    "opaque-other-iss": {"active": True, "sub": "bob", "scope": "agent:call",
                         "iss": "https://evil.example"},
    "opaque-no-scope": {"active": True, "sub": "bob", "scope": "read"},
    "opaque-revoked": {"active": False},
}


def introspect(token: str) -> Mapping[str, Any] | None:
    return ACTIVE.get(token)


def _jwt_oauth() -> OAuth2Authenticator:
    verifier = JWTVerifier(issuer=ISSUER, audience=AUDIENCE, keys=[KEY], clock=lambda: NOW)
    return OAuth2Authenticator(flows=FLOWS, verifier=verifier, scopes=["agent:call"])


def _introspecting() -> OAuth2Authenticator:
    return OAuth2Authenticator(flows=FLOWS, introspect=introspect, scopes=["agent:call"],
                               issuer=ISSUER, audience=AUDIENCE, clock=lambda: NOW)


def _auth(authenticator: Any, token: str) -> Any:
    return authenticator.authenticate(request_with({"Authorization": f"Bearer {token}"}))


def test_jwt_access_tokens() -> None:
    assert _auth(_jwt_oauth(), jwt_for(KEY, scope="agent:call")).identity == "alice"
    assert _jwt_oauth().authenticate(request_with()) is None
    for token, reason in [(jwt_for(KEY, scope="agent:call", exp=NOW - 100), "expired"),
                          (jwt_for(KEY, scope="agent:call", aud="x"), "audience"),
                          (jwt_for(KEY, scope="agent:call", iss="x"), "issuer"),
                          (jwt_for(SigningKey.generate("as-1", "RS256"), scope="agent:call"),
                           "signature"),
                          (unsigned_jwt(scope="agent:call"), "algorithm"),
                          ("not-a-jwt", "malformed")]:
        with pytest.raises(InvalidCredentialsError, match=reason):
            _auth(_jwt_oauth(), token)
    with pytest.raises(PermissionDeniedError):
        _auth(_jwt_oauth(), jwt_for(KEY, scope="read"))


def test_introspected_tokens() -> None:
    authenticator = _introspecting()
    assert _auth(authenticator, "opaque-alice").identity == "alice"
    assert _auth(authenticator, "opaque-client").identity == "svc-7"
    for token, reason in [("opaque-expired", "expired"), ("opaque-other-aud", "audience"),
                          ("opaque-other-iss", "issuer"), ("opaque-revoked", "not active"),
                          ("unknown", "not active")]:
        with pytest.raises(InvalidCredentialsError, match=reason):
            _auth(authenticator, token)
    with pytest.raises(PermissionDeniedError):
        _auth(authenticator, "opaque-no-scope")
    with pytest.raises(InvalidCredentialsError, match="too large"):
        _auth(authenticator, "a" * 9000)


def test_introspection_failure_fails_closed() -> None:
    def down(token: str) -> Mapping[str, Any]:
        raise ConnectionError(f"introspection endpoint down for {token}")

    authenticator = OAuth2Authenticator(flows=FLOWS, introspect=down)
    with pytest.raises(InvalidCredentialsError, match="could not be checked") as caught:
        _auth(authenticator, "opaque-alice")
    assert "opaque-alice" not in repr(caught.value)


def test_exactly_one_way_of_checking() -> None:
    with pytest.raises(ValueError):
        OAuth2Authenticator(flows=FLOWS)
    with pytest.raises(ValueError):
        OAuth2Authenticator(flows=FLOWS, introspect=introspect, verifier=_jwt_oauth().verifier)


def test_oauth2_is_declared_with_its_flows_in_both_card_spellings() -> None:
    from a2a_core.models import AgentCard, AgentInterface

    authenticator = _introspecting()
    assert authenticator.security_schemes() == {"oauth2": OAuth2SecurityScheme(flows=FLOWS)}
    card = AuthPolicy([authenticator]).declare(AgentCard(
        name="a", supported_interfaces=[AgentInterface(url="https://a.example/")]))
    doc = encode_card_dual(card)
    scheme = doc["securitySchemes"]["oauth2"]
    assert scheme["type"] == "oauth2"
    assert scheme["oauth2SecurityScheme"]["flows"]["clientCredentials"]["tokenUrl"] == \
        "https://idp.example/token"
    assert doc["security"] == [{"oauth2": ["agent:call"]}]
    assert doc["securityRequirements"] == [{"schemes": {"oauth2": {"list": ["agent:call"]}}}]


def test_openid_connect_from_discovery(serve: Callable[[Any], Served]) -> None:
    key = SigningKey.generate("op-1", "ES256")
    provider = JWKSApp([key])
    served = serve(provider)
    provider.discovery = {"issuer": served.url, "jwks_uri": f"{served.url}/jwks.json"}
    discovery_url = f"{served.url}/.well-known/openid-configuration"
    oidc = OpenIDConnectAuthenticator.from_discovery(
        discovery_url, audience=AUDIENCE, verifier_options={"clock": lambda: NOW})
    assert _auth(oidc, jwt_for(key, iss=served.url)).identity == "alice"
    assert provider.hits == 1
    for token, reason in [(jwt_for(key, iss=ISSUER), "issuer"),
                          (jwt_for(key, iss=served.url, aud="x"), "audience"),
                          (jwt_for(key, iss=served.url, exp=NOW - 100), "expired"),
                          (unsigned_jwt(iss=served.url), "algorithm")]:
        with pytest.raises(InvalidCredentialsError, match=reason):
            _auth(oidc, token)
    assert oidc.security_schemes() == {
        "openIdConnect": OpenIdConnectSecurityScheme(open_id_connect_url=discovery_url)}
    provider.discovery = {"issuer": served.url}
    with pytest.raises(ValueError, match="jwks_uri"):
        OpenIDConnectAuthenticator.from_discovery(discovery_url, audience=AUDIENCE)
