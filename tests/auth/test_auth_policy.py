"""AuthPolicy: OR over schemes, AllOf for AND, challenges, anonymous, and the card declaration."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest
from auth_support import NOW, jwt_for, request_with, self_signed

from a2a_core.auth import Principal
from a2a_core.models import AgentCard, AgentInterface, HTTPAuthSecurityScheme
from a2a_core.signing import SigningKey
from a2a_core.wire._card import encode_card
from a2a_wsgi.auth import (
    AllOf,
    APIKeyAuthenticator,
    AuthenticationRequiredError,
    AuthPolicy,
    BasicAuthenticator,
    BearerAuthenticator,
    InvalidCredentialsError,
    JWTBearerAuthenticator,
    JWTVerifier,
    MutualTLSAuthenticator,
    PermissionDeniedError,
)

KEY = SigningKey.generate("k", "EdDSA")
jwt = JWTBearerAuthenticator(JWTVerifier(issuer="https://idp.example",
                                         audience="https://agent.example/a2a", keys=[KEY],
                                         clock=lambda: NOW))
api_key = APIKeyAuthenticator("X-API-Key", keys={"key-1": "robot"})
mtls = MutualTLSAuthenticator(trusted_proxies=["127.0.0.1"], clock=lambda: NOW)
_, PEM = self_signed()


def test_first_identity_wins_in_declared_order() -> None:
    policy = AuthPolicy([jwt, api_key])
    both = request_with({"Authorization": f"Bearer {jwt_for(KEY)}", "X-API-Key": "key-1"})
    assert policy.authenticate(both).identity == "alice"
    assert policy.authenticate(request_with({"X-API-Key": "key-1"})).identity == "robot"


def test_one_bad_credential_does_not_hide_a_good_one() -> None:
    request = request_with({"Authorization": "Bearer not.a.jwt", "X-API-Key": "key-1"})
    assert AuthPolicy([jwt, api_key]).authenticate(request).identity == "robot"


def test_no_credentials_is_401_with_every_scheme_challenged() -> None:
    with pytest.raises(AuthenticationRequiredError) as caught:
        AuthPolicy([jwt, api_key, mtls]).authenticate(request_with())
    assert type(caught.value) is AuthenticationRequiredError
    assert [c.split()[0] for c in caught.value.challenges] == ["Bearer", "ApiKey", "MutualTLS"]


def test_bad_credentials_lead_with_their_own_challenge() -> None:
    with pytest.raises(InvalidCredentialsError) as caught:
        AuthPolicy([api_key, jwt]).authenticate(request_with({"Authorization": "Bearer x.y.z"}))
    assert caught.value.challenges[0].startswith('Bearer realm="a2a", error="invalid_token"')
    assert caught.value.challenges[1].startswith("ApiKey")
    assert len(caught.value.challenges) == 2


def test_anonymous_allowed_unless_required() -> None:
    policy = AuthPolicy([jwt], required=False)
    assert policy.authenticate(request_with()) is None
    with pytest.raises(AuthenticationRequiredError):
        policy.require(request_with())  # the extended card: anonymous is never enough
    with pytest.raises(InvalidCredentialsError):
        policy.authenticate(request_with({"Authorization": "Bearer x.y.z"}))


def test_permission_denied_stops_the_search() -> None:
    def deny(token: str) -> str:
        raise PermissionDeniedError("suspended")

    policy = AuthPolicy([BearerAuthenticator(deny), api_key])
    request = request_with({"Authorization": "Bearer t", "X-API-Key": "key-1"})
    with pytest.raises(PermissionDeniedError):
        policy.authenticate(request)


def test_all_of_needs_every_credential() -> None:
    both = AllOf(mtls, jwt)
    policy = AuthPolicy([both])
    headers = {"X-Client-Cert": quote(PEM.decode()), "Authorization": f"Bearer {jwt_for(KEY)}"}
    assert policy.authenticate(request_with(headers)).identity.startswith("CN=")
    with pytest.raises(AuthenticationRequiredError) as caught:
        policy.authenticate(request_with({"X-Client-Cert": quote(PEM.decode())}))
    assert [c.split()[0] for c in caught.value.challenges] == ["Bearer"]
    with pytest.raises(AuthenticationRequiredError):
        policy.authenticate(request_with())
    assert both.requirement() == {"mtls": [], "bearer": []}


def test_scheme_names_must_be_unique() -> None:
    with pytest.raises(ValueError, match="unique"):
        AuthPolicy([BearerAuthenticator(lambda t: None), jwt])


def test_declare_adds_schemes_and_requirements_for_both_versions() -> None:
    basic = BasicAuthenticator(lambda u, p: False)
    card = AgentCard(name="a", supported_interfaces=[AgentInterface(url="https://a.example/")],
                     security_schemes={"legacy": HTTPAuthSecurityScheme(scheme="Digest")},
                     security_requirements=[{"legacy": []}])
    declared = AuthPolicy([jwt, AllOf(mtls, api_key), basic]).declare(card)
    assert list(declared.security_schemes or {}) == ["legacy", "bearer", "mtls", "apiKey",
                                                     "basic"]
    assert declared.security_requirements == (
        {"legacy": ()}, {"bearer": ()}, {"mtls": (), "apiKey": ()}, {"basic": ()})
    v03, v10 = encode_card(declared, "0.3"), encode_card(declared, "1.0")
    assert v03["securitySchemes"]["mtls"] == {"type": "mutualTLS"}
    assert v03["securitySchemes"]["apiKey"] == {"type": "apiKey", "in": "header",
                                                "name": "X-API-Key"}
    assert v10["securitySchemes"]["apiKey"] == {"apiKeySecurityScheme": {
        "location": "header", "name": "X-API-Key"}}
    assert v03["security"][2] == {"mtls": [], "apiKey": []}
    assert v10["securityRequirements"][1] == {"schemes": {"bearer": {"list": []}}}


def test_auth_request_from_environ() -> None:
    from a2a_wsgi.auth import AuthRequest

    environ = {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"a:b").decode(),
               "HTTP_COOKIE": "session_key=abc; other=1", "QUERY_STRING": "api_key=q1&x=2",
               "REMOTE_ADDR": "10.0.0.5", "HTTP_X_API_KEY": "h1"}
    request = AuthRequest.from_environ(environ)
    assert request.headers.get("authorization", "").startswith("Basic ")
    assert request.headers.get("X-Api-Key") == "h1"
    assert request.cookies == {"session_key": "abc", "other": "1"}
    assert request.query == {"api_key": "q1", "x": "2"}
    assert request.remote_addr == "10.0.0.5"
    assert "abc" not in repr(request) and "q1" not in repr(request) and "h1" not in repr(request)


def test_principal_default_identity_for_basic() -> None:
    basic = BasicAuthenticator(lambda user, password: password == "pw")
    header = "Basic " + base64.b64encode(b"carol:pw").decode()
    assert basic.authenticate(request_with({"Authorization": header})) == \
        Principal(identity="carol")
