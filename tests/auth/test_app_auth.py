"""``A2AApp(auth=...)`` over real HTTP: every authenticator, good and bad, in each binding.

Each scheme guards one served app. For every scheme, each of its credential
cases (good, missing, malformed, expired, another audience or issuer, the
wrong key, ``alg: none``, an oversized header…) is sent as a SendMessage in
JSON-RPC 0.3, JSON-RPC 1.0 and HTTP+JSON. A refusal must be 401 (403 for a
missing scope) with a challenge naming the scheme, in the body that binding's
client reads; an accepted call reaches the agent with the caller's identity.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest
import requests
from app_auth_support import (
    BINDINGS,
    Caller,
    WhoAgent,
    assert_refused,
    result,
    task_of,
    texts_of,
)
from auth_support import AUDIENCE, ISSUER, NOW, JWKSApp, jwt_for, self_signed, unsigned_jwt
from support.a2a_http import served
from support.wsgi_server import Served

from a2a_core.auth import Principal
from a2a_core.models import OAuthFlow, OAuthFlows
from a2a_core.signing import SigningKey
from a2a_wsgi import A2AApp
from a2a_wsgi.auth import (
    AllOf,
    APIKeyAuthenticator,
    AuthPolicy,
    BasicAuthenticator,
    BearerAuthenticator,
    JWTBearerAuthenticator,
    JWTVerifier,
    MutualTLSAuthenticator,
    OAuth2Authenticator,
    OpenIDConnectAuthenticator,
)
from a2a_wsgi.settings import CardSettings, LimitSettings, ProtocolSettings

KEY = SigningKey.generate("k1", "ES256")
#: Another key under the same kid: what a forger holds.
FORGER = SigningKey.generate("k1", "ES256")
STRANGER = SigningKey.generate("k9", "EdDSA")
CERT, CERT_PEM = self_signed("client-1")
_, EXPIRED_PEM = self_signed("client-1", not_before=NOW - 7200, not_after=NOW - 60)
_, OTHER_PEM = self_signed("client-2")


@dataclass(frozen=True)
class Creds:
    """Where a request carries its credentials."""

    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)


def bearer(token: str) -> Creds:
    return Creds(headers={"Authorization": f"Bearer {token}"})


def basic(user: str, password: str) -> Creds:
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
    return Creds(headers={"Authorization": f"Basic {encoded}"})


def cert(pem: bytes) -> Creds:
    return Creds(headers={"X-Client-Cert": quote(pem.decode())})


def both(*creds: Creds) -> Creds:
    return Creds(headers={k: v for c in creds for k, v in c.headers.items()})


def _fingerprint() -> str:
    from cryptography.hazmat.primitives import hashes

    return str(CERT.fingerprint(hashes.SHA256()).hex())


INTROSPECTION: dict[str, dict[str, Any]] = {
    "opaque-alice": {"active": True, "sub": "alice", "scope": "a2a", "exp": NOW + 300,
                     "iss": ISSUER, "aud": AUDIENCE},
    "opaque-expired": {"active": True, "sub": "alice", "scope": "a2a", "exp": NOW - 999},
    "opaque-inactive": {"active": False},
    "opaque-other-aud": {"active": True, "sub": "alice", "scope": "a2a", "exp": NOW + 300,
                         "aud": "https://other.example"},
    "opaque-no-scope": {"active": True, "sub": "alice", "exp": NOW + 300},
}


def _verifier(**options: Any) -> JWTVerifier:
    settings: dict[str, Any] = {"issuer": ISSUER, "audience": AUDIENCE, "keys": [KEY],
                                "clock": lambda: NOW}
    settings.update(options)
    return JWTVerifier(**settings)


@dataclass(frozen=True)
class Scheme:
    """One way in: how to build it (given the JWKS server's URL) and the cases to send."""

    make: Callable[[str], Any]
    challenge: str
    good: Creds
    identity: str
    refused: dict[str, Creds]
    #: Cases answered 403 rather than 401.
    forbidden: dict[str, Creds] = field(default_factory=dict)
    #: Cases whose challenge names another scheme (the credential still missing).
    challenged: dict[str, str] = field(default_factory=dict)


OVERSIZED = "a" * 9000
JWT_CASES = {
    "missing": Creds(),
    "malformed": bearer("not-a-jwt"),
    "expired": bearer(jwt_for(KEY, exp=NOW - 999)),
    "not-yet-valid": bearer(jwt_for(KEY, nbf=NOW + 999)),
    "wrong-audience": bearer(jwt_for(KEY, aud="https://other.example")),
    "wrong-issuer": bearer(jwt_for(KEY, iss="https://evil.example")),
    "wrong-key": bearer(jwt_for(FORGER)),
    "unknown-kid": bearer(jwt_for(STRANGER)),
    "alg-none": bearer(unsigned_jwt("none")),
    "alg-hs256": bearer(unsigned_jwt("HS256")),
    "oversized": bearer(OVERSIZED),
}

SCHEMES: dict[str, Scheme] = {
    "bearer": Scheme(
        lambda _: BearerAuthenticator({"tok-alice": "alice"}.get), "Bearer",
        bearer("tok-alice"), "alice",
        {"missing": Creds(), "wrong": bearer("tok-mallory"),
         "malformed": Creds(headers={"Authorization": "Bearer tok alice"}),
         "empty": Creds(headers={"Authorization": "Bearer "}),
         "other-scheme": basic("alice", "tok-alice"), "oversized": bearer(OVERSIZED)}),
    "basic": Scheme(
        lambda _: BasicAuthenticator(lambda u, p: u == "alice" and p == "pw-alice"), "Basic",
        basic("alice", "pw-alice"), "alice",
        {"missing": Creds(), "wrong-password": basic("alice", "pw-bob"),
         "malformed": Creds(headers={"Authorization": "Basic !!!"}),
         "no-colon": Creds(headers={"Authorization": "Basic " +
                                    base64.b64encode(b"alice").decode()}),
         "oversized": Creds(headers={"Authorization": "Basic " + OVERSIZED})}),
    "jwt": Scheme(
        lambda _: JWTBearerAuthenticator(_verifier()), "Bearer", bearer(jwt_for(KEY)), "alice",
        JWT_CASES),
    "jwt-jwks-url": Scheme(
        lambda jwks: JWTBearerAuthenticator(_verifier(keys=None, jwks_url=jwks + "/jwks.json")),
        "Bearer", bearer(jwt_for(KEY, sub="bob")), "bob",
        {"missing": Creds(), "wrong-key": bearer(jwt_for(FORGER)),
         "alg-none": bearer(unsigned_jwt("none"))}),
    "jwt-scope": Scheme(
        lambda _: JWTBearerAuthenticator(_verifier(), scopes=["a2a:call"]), "Bearer",
        bearer(jwt_for(KEY, scope="a2a:call other")), "alice",
        {"missing": Creds(), "expired": bearer(jwt_for(KEY, scope="a2a:call", exp=NOW - 999))},
        forbidden={"no-scope": bearer(jwt_for(KEY)),
                   "other-scope": bearer(jwt_for(KEY, scope="a2a:read"))}),
    "oauth2-introspection": Scheme(
        lambda _: OAuth2Authenticator(
            flows=OAuthFlows(client_credentials=OAuthFlow(token_url="https://idp.example/token",
                                                          scopes={"a2a": "Call the agent"})),
            introspect=INTROSPECTION.get, scopes=["a2a"], issuer=ISSUER, audience=AUDIENCE,
            clock=lambda: NOW),
        "Bearer", bearer("opaque-alice"), "alice",
        {"missing": Creds(), "unknown": bearer("opaque-mallory"),
         "expired": bearer("opaque-expired"), "inactive": bearer("opaque-inactive"),
         "wrong-audience": bearer("opaque-other-aud"), "oversized": bearer(OVERSIZED)},
        forbidden={"no-scope": bearer("opaque-no-scope")}),
    "oidc": Scheme(
        lambda jwks: OpenIDConnectAuthenticator.from_discovery(
            jwks + "/.well-known/openid-configuration", audience=AUDIENCE,
            verifier_options={"clock": lambda: NOW}),
        "Bearer", bearer(jwt_for(KEY, sub="carol")), "carol",
        {"missing": Creds(), "wrong-issuer": bearer(jwt_for(KEY, iss="https://evil.example")),
         "expired": bearer(jwt_for(KEY, exp=NOW - 999)), "wrong-key": bearer(jwt_for(FORGER)),
         "alg-none": bearer(unsigned_jwt("none"))}),
    "apikey-header": Scheme(
        lambda _: APIKeyAuthenticator("X-API-Key", keys={"key-alice": "alice"}), "ApiKey",
        Creds(headers={"X-API-Key": "key-alice"}), "alice",
        {"missing": Creds(), "wrong": Creds(headers={"X-API-Key": "key-mallory"}),
         "oversized": Creds(headers={"X-API-Key": OVERSIZED})}),
    "apikey-query": Scheme(
        lambda _: APIKeyAuthenticator("api_key", "query", keys={"key-alice": "alice"}), "ApiKey",
        Creds(query={"api_key": "key-alice"}), "alice",
        {"missing": Creds(), "wrong": Creds(query={"api_key": "key-mallory"}),
         "in-a-header": Creds(headers={"api_key": "key-alice"})}),
    "apikey-cookie": Scheme(
        lambda _: APIKeyAuthenticator("a2a_key", "cookie", keys={"key-alice": "alice"}),
        "ApiKey", Creds(cookies={"a2a_key": "key-alice"}), "alice",
        {"missing": Creds(), "wrong": Creds(cookies={"a2a_key": "key-mallory"})}),
    "mtls": Scheme(
        lambda _: MutualTLSAuthenticator(trusted_proxies=["127.0.0.1"], clock=lambda: NOW),
        "MutualTLS", cert(CERT_PEM), "CN=client-1",
        {"missing": Creds(), "expired": cert(EXPIRED_PEM),
         "malformed": Creds(headers={"X-Client-Cert": "not a certificate"}),
         "oversized": Creds(headers={"X-Client-Cert": "A" * 40000})}),
    "mtls-pinned": Scheme(
        lambda _: MutualTLSAuthenticator(trusted_proxies=["127.0.0.1"], clock=lambda: NOW,
                                         fingerprints={_fingerprint(): "alice"}),
        "MutualTLS", cert(CERT_PEM), "alice",
        {"unknown-cert": cert(OTHER_PEM), "missing": Creds()}),
    "mtls-and-bearer": Scheme(
        lambda _: AllOf(MutualTLSAuthenticator(trusted_proxies=["127.0.0.1"], clock=lambda: NOW),
                        BearerAuthenticator({"tok-alice": "alice"}.get)),
        "MutualTLS", both(cert(CERT_PEM), bearer("tok-alice")), "CN=client-1",
        {"bearer-only": bearer("tok-alice"), "cert-only": cert(CERT_PEM), "missing": Creds(),
         "bad-bearer": both(cert(CERT_PEM), bearer("tok-mallory"))},
        challenged={"cert-only": "Bearer", "bad-bearer": "Bearer"}),
}


@pytest.fixture(scope="module")
def jwks_url() -> Iterator[str]:
    keys = JWKSApp([KEY])
    server = Served(keys)
    keys.discovery = {"issuer": ISSUER, "jwks_uri": server.url + "/jwks.json"}
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def apps(jwks_url: str) -> Iterator[dict[str, str]]:
    """scheme name -> base URL of an app guarded by it (started on first use)."""
    with ExitStack() as stack:
        started: dict[str, str] = {}

        class Lazy(dict[str, str]):
            def __missing__(self, name: str) -> str:
                app = A2AApp(WhoAgent(), auth=SCHEMES[name].make(jwks_url))
                started[name] = stack.enter_context(served(app)).url
                return started[name]

        yield Lazy()


def _caller(base: str, binding: str, creds: Creds) -> Caller:
    return Caller(base, binding, headers=creds.headers, query=creds.query, cookies=creds.cookies)


def _cases(kind: str) -> list[Any]:
    out = []
    for name, scheme in SCHEMES.items():
        cases = scheme.refused if kind == "refused" else scheme.forbidden
        out += [pytest.param(name, case, binding, id=f"{name}-{case}-{binding}")
                for case in cases for binding in BINDINGS]
    return out


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("name", list(SCHEMES))
def test_good_credentials_reach_the_agent_as_the_caller(apps: dict[str, str], name: str,
                                                        binding: str) -> None:
    scheme = SCHEMES[name]
    answer = result(_caller(apps[name], binding, scheme.good).send("who"), binding)
    task = task_of(answer, binding)
    assert texts_of(task) == [f"caller={scheme.identity}"]


@pytest.mark.parametrize(("name", "case", "binding"), _cases("refused"))
def test_refused_credentials_answer_401_naming_the_scheme(apps: dict[str, str], name: str,
                                                          case: str, binding: str) -> None:
    scheme = SCHEMES[name]
    response = _caller(apps[name], binding, scheme.refused[case]).send("who")
    expected = scheme.challenged.get(case, scheme.challenge)
    error = assert_refused(response, binding, status=401, scheme=expected)
    assert "who" not in json.dumps(error)


@pytest.mark.parametrize(("name", "case", "binding"), _cases("forbidden"))
def test_a_missing_scope_answers_403(apps: dict[str, str], name: str, case: str,
                                     binding: str) -> None:
    response = _caller(apps[name], binding, SCHEMES[name].forbidden[case]).send("who")
    assert_refused(response, binding, status=403, scheme="Bearer")
    assert 'error="insufficient_scope"' in response.headers["WWW-Authenticate"]


@pytest.mark.parametrize("name", list(SCHEMES))
def test_the_card_stays_public_and_declares_the_scheme(apps: dict[str, str], name: str) -> None:
    base = apps[name]
    dual = requests.get(base + "/.well-known/agent-card.json", timeout=5)
    strict = requests.get(base + "/.well-known/agent-card.json",
                          headers={"A2A-Version": "1.0"}, timeout=5)
    assert dual.status_code == strict.status_code == 200
    authenticator = SCHEMES[name].make("http://unused.invalid") if name not in (
        "oidc", "jwt-jwks-url") else None
    for doc in (dual.json(), strict.json()):
        assert doc["securitySchemes"], doc
        assert doc["securityRequirements"]
        if authenticator is not None:
            assert set(doc["securitySchemes"]) == set(authenticator.security_schemes())
    assert dual.json()["security"]  # the 0.3 spelling, in the dual card only
    assert "security" not in strict.json()


def test_a_certificate_header_from_an_untrusted_peer_is_a_forgery() -> None:
    app = A2AApp(WhoAgent(), auth=MutualTLSAuthenticator(trusted_proxies=["10.9.9.9"],
                                                         clock=lambda: NOW))
    with served(app) as handle:
        for binding in BINDINGS:
            response = _caller(handle.url, binding, cert(CERT_PEM)).send()
            assert_refused(response, binding, scheme="MutualTLS")
            assert "untrusted peer" in response.headers["WWW-Authenticate"]


def test_a_wrong_credential_is_refused_even_where_anonymous_callers_are_allowed(
        jwks_url: str) -> None:
    app = A2AApp(WhoAgent(), auth=AuthPolicy([JWTBearerAuthenticator(_verifier())],
                                             required=False))
    with served(app) as handle:
        for binding in BINDINGS:
            anonymous = _caller(handle.url, binding, Creds())
            assert texts_of(task_of(result(anonymous.send(), binding), binding)) == \
                ["caller=anonymous"]
            expired = _caller(handle.url, binding, bearer(jwt_for(KEY, exp=NOW - 999)))
            assert_refused(expired.send(), binding, scheme="Bearer")


def test_every_path_but_the_card_and_the_jwks_needs_credentials() -> None:
    app = A2AApp(
        WhoAgent(),
        auth=BearerAuthenticator({"tok-alice": "alice"}.get),
        card=CardSettings(signing_keys=(SigningKey.generate("card-1"),)),
    )
    with served(app) as handle:
        assert requests.get(handle.url + "/.well-known/jwks.json", timeout=5).status_code == 200
        for method, path in [("GET", "/"), ("GET", "/nowhere"), ("DELETE", "/rest/tasks/x"),
                             ("GET", "/rest/tasks"), ("PUT", "/.well-known/other.json")]:
            response = requests.request(method, handle.url + path, timeout=5)
            assert response.status_code == 401, (method, path, response.status_code)
            assert response.headers["WWW-Authenticate"].startswith("Bearer ")
        good = requests.get(handle.url + "/nowhere", timeout=5,
                            headers={"Authorization": "Bearer tok-alice"})
        assert good.status_code == 404


def test_the_body_is_not_read_before_the_caller_is_known() -> None:
    """An unauthenticated caller gets 401 for a body the parser would refuse or choke on."""
    app = A2AApp(
        WhoAgent(),
        auth=BearerAuthenticator({"tok-alice": "alice"}.get),
        limits=LimitSettings(max_body_bytes=64),
    )
    with served(app) as handle:
        for body in (b"{not json", b"[" * 5000, b"x" * 10_000):
            response = requests.post(handle.url + "/", data=body, timeout=5,
                                     headers={"Content-Type": "application/json"})
            assert_refused(response, "jsonrpc-0.3", scheme="Bearer")
            assert response.json()["id"] is None


def test_several_schemes_challenge_with_each(jwks_url: str) -> None:
    app = A2AApp(WhoAgent(), auth=[APIKeyAuthenticator("X-API-Key", keys={"k": "alice"}),
                                   BasicAuthenticator(lambda u, p: False)])
    with served(app) as handle:
        response = requests.post(handle.url + "/", json={}, timeout=5)
        assert response.status_code == 401
        challenges = response.raw.headers.getlist("WWW-Authenticate")
        assert [c.split(" ", 1)[0] for c in challenges] == ["ApiKey", "Basic"]
        good = _caller(handle.url, "jsonrpc-1.0", Creds(headers={"X-API-Key": "k"}))
        assert texts_of(task_of(result(good.send(), "jsonrpc-1.0"), "jsonrpc-1.0")) == \
            ["caller=alice"]


def test_a_jwt_principal_reaches_authorize_task_and_the_agent_with_its_claims() -> None:
    seen: list[Any] = []

    def authorize(operation: Any, task: Any, context: Any) -> bool:
        seen.append(context.identity)
        return True

    agent = WhoAgent()
    app = A2AApp(
        agent,
        auth=JWTBearerAuthenticator(_verifier(), tenant_claim="org"),
        protocol=ProtocolSettings(authorize_task=authorize),
    )
    with served(app) as handle:
        caller = _caller(handle.url, "jsonrpc-1.0", bearer(jwt_for(KEY, org="acme", role="ops")))
        task = task_of(result(caller.send(), "jsonrpc-1.0"), "jsonrpc-1.0")
        result(caller.get(task["id"]), "jsonrpc-1.0")
    principal = agent.seen[0]
    assert isinstance(principal, Principal) and principal.identity == "alice"
    assert principal.tenant == "acme" and principal.claims["role"] == "ops"
    assert seen and all(isinstance(p, Principal) and p.identity == "alice" for p in seen)


def test_an_auth_option_of_the_wrong_type_is_refused_at_once() -> None:
    with pytest.raises(TypeError):
        A2AApp(WhoAgent(), auth="Bearer")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        A2AApp(WhoAgent(), auth=[lambda request: None])  # type: ignore[list-item]
