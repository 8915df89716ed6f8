"""Client credentials and card signatures end to end, against the real A2AApp.

The agent sits behind a tiny WSGI middleware that demands ``Authorization: Bearer
<token>`` on everything but the public card, and records what each request carried,
so the tests see exactly where a credential went: to the agent's own origin over
either binding; never along a redirect to another origin, nor to an interface the
card names on another origin unless the caller allows that origin. Signed cards are
made by a second middleware that signs the card the app serves (public and extended).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from support.wsgi_server import Served

from a2a_client import A2AClient, HTTPStatusError, agent, agent_tools
from a2a_client.auth import BearerAuth, CardVerifier
from a2a_core.errors import TaskNotFoundError
from a2a_core.models import AgentCard, AgentSkill, Message, Task, TaskState
from a2a_core.signing import (
    InvalidSignatureError,
    MissingSignatureError,
    SignatureError,
    SigningKey,
    UnknownKeyError,
    add_signature,
    jwks,
)
from a2a_core.wire._card import decode_card
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.settings import CardSettings

A2A = Path(sys.executable).with_name("a2a")
BINDINGS = ["JSONRPC", "HTTP+JSON"]
CARD_PATH = "/.well-known/agent-card.json"


def _echo(msg: Message, ctx: AgentContext) -> Any:
    return reply(f"echo: {msg.text}")


def _app(**options: Any) -> A2AApp:
    agent_ = Agent.from_function(_echo, name="Guarded", skills=[AgentSkill(id="e", name="e")])
    return A2AApp(agent_, **options)


class RequireBearer:
    """Every request but the public card needs ``Bearer <one of tokens>``; each request's
    (method, path, Authorization) is recorded."""

    def __init__(self, app: Callable[..., Any], *tokens: str) -> None:
        self.app = app
        self.tokens = set(tokens)
        self.seen: list[tuple[str, str, str | None]] = []
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        header = environ.get("HTTP_AUTHORIZATION")
        path = environ["PATH_INFO"]
        with self._lock:
            self.seen.append((environ["REQUEST_METHOD"], path, header))
        if path == CARD_PATH or header in {f"Bearer {t}" for t in self.tokens}:
            return self.app(environ, start_response)
        start_response("401 Unauthorized", [("WWW-Authenticate", 'Bearer realm="agent"'),
                                            ("Content-Type", "application/json")])
        return [b'{"error": "unauthorized"}']

    def credentials(self) -> list[str | None]:
        """What each non-card request carried."""
        return [auth for _, path, auth in self.seen if path != CARD_PATH]

    def close(self) -> None:
        close = getattr(self.app, "close", None)
        if callable(close):
            close()


@pytest.fixture
def guarded(serve: Callable[[Callable[..., Any]], Served]) -> Iterator[tuple[str, RequireBearer]]:
    app = _app(card=CardSettings(extended_card=lambda ctx: AgentCard(name="Guarded (extended)")))
    guard = RequireBearer(app, "s3cret")
    yield serve(guard).url, guard
    app.close()


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_bearer_token_string(guarded: tuple[str, RequireBearer], binding: str) -> None:
    url, guard = guarded
    with A2AClient(url, auth="s3cret", binding=binding) as client:
        task = client.send_message("hi")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert client.get_task(task.id).id == task.id
        assert [type(e).__name__ for e in client.stream_message("streamed")][0] == "Task"
        assert client.get_extended_card().name == "Guarded (extended)"
    assert guard.credentials() and set(guard.credentials()) == {"Bearer s3cret"}


@pytest.mark.parametrize("binding", BINDINGS)
def test_without_credentials_the_401_is_an_http_status_error(
        guarded: tuple[str, RequireBearer], binding: str) -> None:
    url, _ = guarded
    with A2AClient(url, binding=binding) as client:
        with pytest.raises(HTTPStatusError) as info:
            client.send_message("hi")
    assert info.value.status_code == 401
    assert info.value.headers["WWW-Authenticate"].startswith("Bearer")


def test_an_auth_base_and_a_refreshing_provider(guarded: tuple[str, RequireBearer]) -> None:
    url, guard = guarded
    with A2AClient(url, auth=BearerAuth("s3cret")) as client:
        assert isinstance(client.send_message("auth base"), Task)

    class Provider:
        """A cached token with ``refresh()`` (as ClientCredentials has): renewed on a 401."""

        def __init__(self) -> None:
            self.token, self.refreshed = "expired", 0

        def __call__(self) -> str:
            return self.token

        def refresh(self) -> str:
            self.refreshed += 1
            self.token = "s3cret"
            return self.token

    provider = Provider()
    with A2AClient(url, auth=provider, binding="HTTP+JSON") as client:
        assert isinstance(client.send_message("renewed"), Task)
        assert isinstance(client.send_message("cached"), Task)
    assert provider.refreshed == 1
    assert guard.credentials()[-3:] == ["Bearer expired", "Bearer s3cret", "Bearer s3cret"]


def test_a_token_provider_renews_once_on_401(guarded: tuple[str, RequireBearer]) -> None:
    url, guard = guarded
    calls: list[int] = []

    def provider() -> str:
        calls.append(1)
        return "old" if len(calls) == 1 else "s3cret"

    with A2AClient(url, auth=provider) as client:
        client.get_card()  # the card GET (public) spends the first token
        calls.clear()
        assert isinstance(client.send_message("renewed"), Task)
    assert guard.credentials() == ["Bearer old", "Bearer s3cret"]
    assert len(calls) == 2  # asked once per request, once more on the 401, never in a loop


# -- where credentials go --------------------------------------------------------------------


class Redirect:
    """Every request is answered 307 to ``target`` + the same path (and query)."""

    def __init__(self, target: Callable[[], str]) -> None:
        self.target = target
        self.seen: list[str | None] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        self.seen.append(environ.get("HTTP_AUTHORIZATION"))
        query = environ.get("QUERY_STRING")
        location = self.target() + environ["PATH_INFO"] + (f"?{query}" if query else "")
        start_response("307 Temporary Redirect", [("Location", location)])
        return [b""]


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_redirect_to_another_origin_carries_no_credentials(
        guarded: tuple[str, RequireBearer], serve: Callable[[Callable[..., Any]], Served],
        binding: str) -> None:
    url, guard = guarded
    redirect = Redirect(lambda: url)
    hop = serve(redirect).url
    path = "/" if binding == "JSONRPC" else "/rest"
    with A2AClient(hop, endpoint=hop + path, version="1.0", binding=binding,
                   auth="s3cret", headers={"X-Custom": "also-secret"}) as client:
        with pytest.raises(HTTPStatusError) as info:
            client.send_message("follow me")
    assert info.value.status_code == 401
    assert redirect.seen == ["Bearer s3cret"]  # the agent's own origin got it
    assert guard.credentials() == [None]        # the other origin did not


def test_a_same_origin_redirect_keeps_credentials(serve: Callable[[Callable[..., Any]], Served]
                                                  ) -> None:
    app = _app()
    guard = RequireBearer(app, "s3cret")

    def moved(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ["PATH_INFO"].startswith("/moved"):
            start_response("307 Temporary Redirect", [("Location", "/")])
            return [b""]
        return guard(environ, start_response)

    url = serve(moved).url
    try:
        with A2AClient(url, endpoint=url + "/moved", version="1.0", auth="s3cret") as client:
            assert isinstance(client.send_message("moved"), Task)
    finally:
        app.close()
    assert guard.credentials() == ["Bearer s3cret"]


class CardElsewhere:
    """Serves, on its own origin, the card of an agent on another origin."""

    def __init__(self, agent_url: str) -> None:
        self.agent_url = agent_url

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        body = requests.get(self.agent_url + CARD_PATH, timeout=5).content
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]


def test_an_interface_on_another_origin_needs_auth_origins(
        guarded: tuple[str, RequireBearer], serve: Callable[[Callable[..., Any]], Served],
        caplog: pytest.LogCaptureFixture) -> None:
    url, guard = guarded
    directory = serve(CardElsewhere(url)).url
    with caplog.at_level(logging.WARNING, logger="a2a_client"):
        with A2AClient(directory, auth="s3cret") as client:
            assert client.endpoint.url.startswith(url)
            with pytest.raises(HTTPStatusError):
                client.send_message("not yet")
    assert guard.credentials() == [None]
    assert "not one of the agent's origins" in caplog.text and "s3cret" not in caplog.text
    with A2AClient(directory, auth="s3cret", auth_origins=[url]) as client:
        assert isinstance(client.send_message("allowed"), Task)
    assert guard.credentials()[-1] == "Bearer s3cret"


def test_a_card_in_hand_trusts_its_own_interface(guarded: tuple[str, RequireBearer]) -> None:
    url, guard = guarded
    card = decode_card(requests.get(url + CARD_PATH, timeout=5).json())
    with A2AClient(card, auth="s3cret") as client:
        assert isinstance(client.send_message("card in hand"), Task)
    assert guard.credentials() == ["Bearer s3cret"]


def test_credentials_never_show_in_reprs(guarded: tuple[str, RequireBearer]) -> None:
    url, _ = guarded
    client = A2AClient(url, auth="s3cret")
    assert "s3cret" not in repr(client) and "s3cret" not in repr(client._transport)
    assert "s3cret" not in repr(agent(url + CARD_PATH, auth="s3cret"))


def test_a_token_with_a_line_break_is_refused_before_any_request() -> None:
    with pytest.raises(ValueError):
        A2AClient("http://127.0.0.1:9", auth="tok\r\nX-Evil: 1")


# -- agent tools and the command line --------------------------------------------------------


def test_agent_tools_pass_auth_through(guarded: tuple[str, RequireBearer]) -> None:
    url, guard = guarded
    (tool,) = agent_tools(agent(url + CARD_PATH, auth="s3cret", poll_every=20))
    result = tool.execute({"task": "from a tool"})
    assert (result.output, result.is_error) == ("echo: from a tool", False)
    (bare,) = agent_tools(agent(url + CARD_PATH, poll_every=20))
    refused = bare.execute({"task": "no token"})
    assert refused.is_error and refused.output.startswith("HTTP 401")
    assert "Bearer s3cret" in guard.credentials()


def _a2a(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(A2A), *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("binding", BINDINGS)
def test_cli_token_and_header(guarded: tuple[str, RequireBearer], binding: str) -> None:
    url, guard = guarded
    refused = _a2a("send", url, "no token", "--binding", binding)
    assert refused.returncode == 6 and "HTTP 401" in refused.stderr
    with_token = _a2a("send", url, "with token", "--token", "s3cret", "--binding", binding,
                      "--json")
    assert with_token.returncode == 0, with_token.stderr
    assert json.loads(with_token.stdout)["status"]["state"] == "TASK_STATE_COMPLETED"
    from_env = _a2a("send", url, "token from env", "--token", "${A2A_TEST_TOKEN}",
                    "--binding", binding, env={"A2A_TEST_TOKEN": "s3cret"})
    assert from_env.returncode == 0, from_env.stderr
    header = _a2a("send", url, "header", "--header", "Authorization:Bearer ${A2A_TEST_TOKEN}",
                  "--binding", binding, env={"A2A_TEST_TOKEN": "s3cret"})
    assert header.returncode == 0, header.stderr
    assert guard.credentials()[-3:] == ["Bearer s3cret"] * 3


def test_cli_refuses_an_empty_token() -> None:
    result = _a2a("card", "http://127.0.0.1:9", "--token", "${A2A_UNSET_VARIABLE_X}")
    assert result.returncode == 2 and "empty" in result.stderr


# -- signed cards ------------------------------------------------------------------------------


class SignCards:
    """Signs the cards the app answers: the public card, and the extended card over either
    binding. ``tamper`` changes the name after signing."""

    def __init__(self, app: A2AApp, key: SigningKey, *, tamper: bool = False) -> None:
        self.app = app
        self.key = key
        self.tamper = tamper
        self.card_gets = 0

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ["PATH_INFO"]
        if path == CARD_PATH:
            self.card_gets += 1
        captured: dict[str, Any] = {}

        def keep(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            captured.update(status=status, headers=headers)
            return lambda data: None

        chunks = self.app(environ, keep)
        try:
            body = b"".join(chunks)
        finally:
            getattr(chunks, "close", lambda: None)()
        body = self._signed(path, body) if captured["status"].startswith("200") else body
        headers = [(k, v) for k, v in captured["headers"]
                   if k.lower() not in ("content-length", "etag")]
        start_response(captured["status"], [*headers, ("Content-Length", str(len(body)))])
        return [body]

    def _signed(self, path: str, body: bytes) -> bytes:
        value = json.loads(body)
        if path == CARD_PATH or path.endswith("/extendedAgentCard"):
            return json.dumps(self._sign(value)).encode()
        if isinstance(value, dict) and isinstance(value.get("result"), dict) \
                and "skills" in value["result"]:
            return json.dumps({**value, "result": self._sign(value["result"])}).encode()
        return body

    def _sign(self, card: dict[str, Any]) -> dict[str, Any]:
        signed = add_signature(card, self.key)
        return {**signed, "name": "Forged"} if self.tamper else signed


@pytest.fixture(scope="module")
def key() -> SigningKey:
    pytest.importorskip("cryptography")
    return SigningKey.generate("card-key", "ES256")


def _signed_app(serve: Callable[[Callable[..., Any]], Served], key: SigningKey,
                **options: Any) -> tuple[str, SignCards]:
    app = _app(card=CardSettings(extended_card=lambda ctx: AgentCard(name="Guarded (extended)")))
    signer = SignCards(app, key, **options)
    return serve(signer).url, signer


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("trust", ["public key", "jwk", "jwks", "verifier"])
def test_a_signed_card_verifies(serve: Callable[[Callable[..., Any]], Served], key: SigningKey,
                                binding: str, trust: str) -> None:
    url, _ = _signed_app(serve, key)
    keys: Any = {"public key": key.public_key(), "jwk": key.public_jwk(),
                 "jwks": jwks([key]), "verifier": CardVerifier(jwks([key]))}[trust]
    with A2AClient(url, verify_card=keys, binding=binding) as client:
        assert client.get_card().name == "Guarded"
        assert isinstance(client.send_message("signed"), Task)
        assert client.get_extended_card().name == "Guarded (extended)"


@pytest.mark.parametrize(("options", "trusted", "error"), [
    ({"tamper": True}, "same", InvalidSignatureError),
    ({}, "other", UnknownKeyError),
])
def test_a_card_that_does_not_verify_is_refused_and_not_kept(
        serve: Callable[[Callable[..., Any]], Served], key: SigningKey, options: dict[str, Any],
        trusted: str, error: type[SignatureError]) -> None:
    url, signer = _signed_app(serve, key, **options)
    keys = jwks([key if trusted == "same" else SigningKey.generate("other", "ES256")])
    with A2AClient(url, verify_card=keys) as client:
        with pytest.raises(error):
            client.get_card()
        with pytest.raises(error):
            client.send_message("never sent")
    assert signer.card_gets == 2  # the refused card was not cached: asked again


def test_an_unsigned_card_is_refused_when_signatures_are_required(
        guarded: tuple[str, RequireBearer], key: SigningKey) -> None:
    url, guard = guarded
    with A2AClient(url, verify_card=jwks([key]), auth="s3cret") as client:
        with pytest.raises(MissingSignatureError):
            client.send_message("unsigned")
    assert guard.credentials() == []  # nothing but the card was requested


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_extended_card_that_does_not_verify_is_refused(
        serve: Callable[[Callable[..., Any]], Served], key: SigningKey, binding: str) -> None:
    app = _app(card=CardSettings(extended_card=lambda ctx: AgentCard(name="Guarded (extended)")))
    signer = SignCards(app, key)
    url = serve(signer).url
    with A2AClient(url, verify_card=jwks([key]), binding=binding) as client:
        assert client.get_card().name == "Guarded"
        signer.tamper = True  # from now on every card is forged after signing
        with pytest.raises(InvalidSignatureError):
            client.get_extended_card()
        signer.tamper = False
        assert client.card.name == "Guarded"  # the held card was dropped and fetched again
    assert signer.card_gets == 2


# -- against the server's own authentication (A2AApp(auth=...), signed cards) ----------------


@pytest.fixture(scope="module")
def secured() -> Iterator[str]:
    """Bearer tokens for alice and bob, an extended card, every card signed (JWKS served)."""
    from a2a_wsgi import serve
    from a2a_wsgi.auth import BearerAuthenticator

    pytest.importorskip("cryptography")

    def whoami(msg: Message, ctx: AgentContext) -> Any:
        return reply(f"you are {getattr(ctx.identity, 'identity', ctx.identity)}")

    app = A2AApp(
        Agent.from_function(whoami, name="Secured", skills=[AgentSkill(id="w",
                                                                               name="w")]),
        auth=BearerAuthenticator({"tok-alice": "alice", "tok-bob": "bob"}.get),
        card=CardSettings(
            extended_card=lambda ctx: AgentCard(name="Secured (extended)"),
            signing_keys=(SigningKey.generate("served-key", "ES256"),),
        ),
    )
    handle = serve(app)
    yield handle.url
    handle.stop()
    app.close()


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_servers_own_authentication(secured: str, binding: str) -> None:
    verifier = CardVerifier(jwks_url=secured + "/.well-known/jwks.json")
    for auth in (None, "tok-mallory"):
        with A2AClient(secured, binding=binding, auth=auth) as client:
            with pytest.raises(HTTPStatusError) as refused:
                client.send_message("let me in")
        assert refused.value.status_code == 401
        assert refused.value.headers["WWW-Authenticate"].startswith("Bearer")
    with A2AClient(secured, binding=binding, auth="tok-alice", verify_card=verifier) as alice:
        task = alice.send_message("whoami")
        assert isinstance(task, Task)
        assert task.artifacts[0].parts[0].text == "you are alice"  # type: ignore[union-attr]
        assert alice.get_extended_card().name == "Secured (extended)"
    with A2AClient(secured, binding=binding, auth=lambda: "tok-bob") as bob:
        with pytest.raises(TaskNotFoundError):
            bob.get_task(task.id)
    with A2AClient(secured, binding=binding) as anonymous:
        with pytest.raises(HTTPStatusError) as refused:
            anonymous.get_extended_card()
        assert refused.value.status_code == 401


def test_the_cli_against_the_servers_own_authentication(secured: str) -> None:
    assert _a2a("send", secured, "whoami", "--binding", "HTTP+JSON").returncode == 6
    answered = _a2a("send", secured, "whoami", "--binding", "HTTP+JSON", "--token", "tok-bob")
    assert answered.returncode == 0, answered.stderr
    assert "you are bob" in answered.stdout
