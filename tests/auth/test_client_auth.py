"""Client credentials against real local servers: tokens, refresh on 401, card verification."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

import pytest
import requests
from auth_support import JWKSApp
from support.wsgi_server import Served

from a2a_client.auth import (
    BearerAuth,
    CardVerifier,
    ClientCredentials,
    TokenAuth,
    TokenRequestError,
    as_auth,
    verify_card,
)
from a2a_core.models import AgentCard, AgentInterface
from a2a_core.signing import (
    InvalidSignatureError,
    SigningKey,
    UnknownKeyError,
    add_signature,
)
from a2a_core.wire._card import encode_card_dual

CLIENT_ID, CLIENT_SECRET = "agent-client", "c1ient:s3cret/with+odd chars"


class TokenServer:
    """An OAuth 2.0 token endpoint (client credentials) and a resource that needs its tokens."""

    def __init__(self, expires_in: int | None = 3600) -> None:
        self.valid: set[str] = set()
        self.issued = 0
        self.expires_in = expires_in
        self.seen: list[str | None] = []
        self.secret_ok = True
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start: Callable[..., Any]) -> list[bytes]:
        if environ["PATH_INFO"] == "/token":
            return self._token(environ, start)
        header = environ.get("HTTP_AUTHORIZATION")
        with self._lock:
            self.seen.append(header)
        if header is None or not header.startswith("Bearer ") or \
                header.split(" ", 1)[1] not in self.valid:
            start("401 Unauthorized", [("WWW-Authenticate", 'Bearer error="invalid_token"'),
                                       ("Content-Type", "application/json")])
            return [b'{"error": "unauthorized"}']
        start("200 OK", [("Content-Type", "application/json")])
        return [json.dumps({"ok": True, "body": environ["wsgi.input"].read(
            int(environ.get("CONTENT_LENGTH") or 0)).decode()}).encode()]

    def _token(self, environ: dict[str, Any], start: Callable[..., Any]) -> list[bytes]:
        form = dict(parse_qsl(environ["wsgi.input"].read(
            int(environ.get("CONTENT_LENGTH") or 0)).decode()))
        expected = "Basic " + base64.b64encode(
            b"agent-client:c1ient%3As3cret%2Fwith%2Bodd%20chars").decode()
        if form.get("grant_type") != "client_credentials" or not self.secret_ok or \
                environ.get("HTTP_AUTHORIZATION") != expected:
            start("401 Unauthorized", [("Content-Type", "application/json")])
            return [json.dumps({"error": "invalid_client",
                                "error_description": f"bad secret {CLIENT_SECRET}"}).encode()]
        with self._lock:
            self.issued += 1
            token = f"tok-{self.issued}-{form.get('scope', '')}".replace(" ", "_")
            self.valid.add(token)
        body: dict[str, Any] = {"access_token": token, "token_type": "bearer"}
        if self.expires_in is not None:
            body["expires_in"] = self.expires_in
        start("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(body).encode()]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def tokens(serve: Callable[[Any], Served]) -> tuple[TokenServer, str]:
    server = TokenServer()
    return server, serve(server).url


def test_bearer_auth(tokens: tuple[TokenServer, str]) -> None:
    server, url = tokens
    server.valid.add("static-token")
    assert requests.get(f"{url}/r", auth=BearerAuth("static-token"), timeout=5).ok
    assert requests.get(f"{url}/r", auth=BearerAuth("other"), timeout=5).status_code == 401
    assert "static-token" not in repr(BearerAuth("static-token"))
    for bad in ("two\nlines", "cr\rlf", "nul\x00", "", "  "):
        with pytest.raises(ValueError):
            BearerAuth(bad)
    session = requests.Session()
    session.auth = TokenAuth(lambda: "injected\r\nX-Evil: 1")
    with pytest.raises(ValueError):
        session.get(f"{url}/r", timeout=5)


def test_client_credentials_token_is_cached_then_renewed_before_expiry(
        tokens: tuple[TokenServer, str]) -> None:
    server, url = tokens
    clock = Clock()
    provider = ClientCredentials(f"{url}/token", CLIENT_ID, CLIENT_SECRET,
                                 scope=["agent:call", "read"], clock=clock, margin=30)
    session = requests.Session()
    session.auth = TokenAuth(provider)
    assert session.get(f"{url}/r", timeout=5).ok
    assert session.post(f"{url}/r", data=b"payload", timeout=5).json()["body"] == "payload"
    assert server.issued == 1 and server.seen[-1] == "Bearer tok-1-agent:call_read"
    clock.now += 3600 - 29  # inside the safety margin: a new token before the old one expires
    assert session.get(f"{url}/r", timeout=5).ok
    assert server.issued == 2


def test_a_401_renews_the_token_and_resends_once(tokens: tuple[TokenServer, str]) -> None:
    server, url = tokens
    provider = ClientCredentials(f"{url}/token", CLIENT_ID, CLIENT_SECRET)
    session = requests.Session()
    session.auth = TokenAuth(provider)
    assert session.get(f"{url}/r", timeout=5).ok
    server.valid.clear()  # the agent revokes every token
    before = len(server.seen)
    response = session.post(f"{url}/r", data=b"again", timeout=5)
    assert response.ok and response.json()["body"] == "again"
    assert [r.status_code for r in response.history] == [401]
    assert server.issued == 2 and len(server.seen) - before == 2


def test_a_second_401_is_returned_not_retried(tokens: tuple[TokenServer, str]) -> None:
    server, url = tokens
    calls: list[int] = []

    def provider() -> str:
        calls.append(1)
        return "never-valid"

    session = requests.Session()
    session.auth = TokenAuth(provider)
    before = len(server.seen)
    response = session.get(f"{url}/r", timeout=5)
    assert response.status_code == 401 and len(server.seen) - before == 2 and len(calls) == 2


def test_token_endpoint_errors_name_the_code_not_the_secret(
        tokens: tuple[TokenServer, str]) -> None:
    server, url = tokens
    server.secret_ok = False
    provider = ClientCredentials(f"{url}/token", CLIENT_ID, CLIENT_SECRET)
    with pytest.raises(TokenRequestError, match="401 \\(invalid_client\\)") as caught:
        provider()
    assert CLIENT_SECRET not in str(caught.value) and CLIENT_SECRET not in repr(provider)
    with pytest.raises(TokenRequestError, match="ConnectionError"):
        ClientCredentials("http://127.0.0.1:9/token", CLIENT_ID, CLIENT_SECRET, timeout=1)()


def test_client_secret_post(serve: Callable[[Any], Served]) -> None:
    seen: list[dict[str, str]] = []

    def endpoint(environ: dict[str, Any], start: Callable[..., Any]) -> list[bytes]:
        seen.append(dict(parse_qsl(environ["wsgi.input"].read(
            int(environ["CONTENT_LENGTH"])).decode())))
        start("200 OK", [("Content-Type", "application/json")])
        return [b'{"access_token": "t", "token_type": "Bearer"}']

    url = serve(endpoint).url
    provider = ClientCredentials(url, CLIENT_ID, CLIENT_SECRET, audience="https://agent",
                                 client_auth="client_secret_post")
    assert provider() == "t" and provider() == "t"
    assert seen == [{"grant_type": "client_credentials", "audience": "https://agent",
                     "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}]


def test_as_auth() -> None:
    assert as_auth("tok") == BearerAuth("tok")
    assert isinstance(as_auth(("u", "p")), requests.auth.HTTPBasicAuth)
    assert isinstance(as_auth(lambda: "tok"), TokenAuth)
    basic = requests.auth.HTTPBasicAuth("u", "p")
    assert as_auth(basic) is basic and as_auth(None) is None
    with pytest.raises(TypeError):
        as_auth(42)


def test_a2a_client_with_token_auth_against_a_guarded_app(
        tokens: tuple[TokenServer, str], serve: Callable[[Any], Served]) -> None:
    """Today's seam: a middleware authenticates and calls put_identity; the client's session
    carries TokenAuth. The agent sees the identity the token names."""
    from a2a_client import A2AClient, HTTPStatusError
    from a2a_core.models import Message
    from a2a_wsgi import A2AApp, Agent, AgentContext, put_base_url, put_identity, reply
    from a2a_wsgi.auth import AuthError, AuthPolicy, AuthRequest, BearerAuthenticator

    server, token_url = tokens

    class WhoAmI(Agent):
        name = "WhoAmI"
        description = "Says who is calling"

        def handle_message(self, message: Message, context: AgentContext) -> object:
            return reply(f"hello {context.identity.identity}")

    app = A2AApp(WhoAmI())
    policy = AuthPolicy([BearerAuthenticator(
        lambda t: f"client-{t.split('-')[1]}" if t in server.valid else None)])

    def guarded(environ: dict[str, Any], start: Callable[..., Any]) -> Any:
        put_base_url(environ, f"http://{environ['HTTP_HOST']}/")
        if environ["PATH_INFO"].startswith("/.well-known/"):
            return app(environ, start)  # the public card stays public
        try:
            put_identity(environ, policy.authenticate(AuthRequest.from_environ(environ)))
        except AuthError as exc:
            response = exc.response()
            start(f"{response.status} Unauthorized", response.headers)
            return [response.body]
        return app(environ, start)

    url = serve(guarded).url
    session = requests.Session()
    session.auth = TokenAuth(ClientCredentials(f"{token_url}/token", CLIENT_ID, CLIENT_SECRET))
    try:
        with A2AClient(url + "/", session=session) as agent:
            task = agent.send_and_wait("hi")
            assert task.artifacts[0].parts[0].text == "hello client-1"  # type: ignore[union-attr]
            server.valid.clear()  # revoked: the client renews once and goes on
            again = agent.send_and_wait("hi")
            assert again.artifacts[0].parts[0].text == "hello client-2"  # type: ignore[union-attr]
        with A2AClient(url + "/") as anonymous, pytest.raises(HTTPStatusError) as caught:
            anonymous.send_message("hi")
        assert caught.value.status_code == 401
    finally:
        app.close()


# -- card verification ------------------------------------------------------------------


def _signed_card(key: SigningKey) -> dict[str, Any]:
    card = AgentCard(name="Signed", description="A signed card", supported_interfaces=[
        AgentInterface(url="https://agent.example/a2a", protocol_version="1.0")])
    signed: dict[str, Any] = json.loads(json.dumps(add_signature(encode_card_dual(card), key)))
    return signed


def test_verify_card_with_pinned_keys() -> None:
    key = SigningKey.generate("pinned", "EdDSA")
    card = _signed_card(key)
    assert verify_card(card, key.public_jwk()).kid == "pinned"
    assert CardVerifier(key.public_key())(card).kid == "pinned"
    card["description"] = "changed"
    with pytest.raises(InvalidSignatureError):
        verify_card(card, key.public_jwk())


def test_card_verifier_fetches_and_refreshes_the_jwks(serve: Callable[[Any], Served]) -> None:
    old, new = SigningKey.generate("2025", "ES256"), SigningKey.generate("2026", "RS256")
    keys = JWKSApp([old])
    url = serve(keys).url + "/jwks.json"
    clock = Clock()
    verifier = CardVerifier(jwks_url=url, clock=clock, min_refresh=10)
    assert verifier(_signed_card(old)).kid == "2025"
    assert verifier(_signed_card(old)).kid == "2025" and keys.hits == 1
    keys.keys = [old, new]
    clock.now += 11
    assert verifier(_signed_card(new)).kid == "2026" and keys.hits == 2
    with pytest.raises(UnknownKeyError):
        verifier(_signed_card(SigningKey.generate("forged", "ES256")))
    assert keys.hits == 2  # too soon to ask again
    tampered = _signed_card(new)
    tampered["supportedInterfaces"][0]["url"] = "https://evil.example/a2a"
    with pytest.raises(InvalidSignatureError):
        verifier(tampered)


def test_card_verifier_configuration() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        CardVerifier()
