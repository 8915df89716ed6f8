"""Everything the app serves is routed by the core's route table: with an authenticator on,
the card and the keys are public, the inspector page checks its own callers, and the
bindings' paths ask for credentials, each refusal in the shape of its binding.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from support import wsgi_calls

from a2a_core.models import Message
from a2a_core.signing import SigningKey
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._telemetry import ACCESS_LOGGER
from a2a_wsgi.auth import APIKeyAuthenticator
from a2a_wsgi.settings import CardSettings

CARD_PATH = "/.well-known/agent-card.json"
JWKS_PATH = "/.well-known/jwks.json"


class Hello(Agent):
    name = "Hello"
    description = "Says hello"

    def handle_message(self, msg: Message, ctx: AgentContext) -> object:
        return reply("hello")


@pytest.fixture
def app() -> Iterator[A2AApp]:
    served = A2AApp(Hello(), auth=[APIKeyAuthenticator("X-API-Key", keys={"k-1": "user:1"})],
                    inspector=True, card=CardSettings(signing_keys=(SigningKey.generate("c1"),)))
    yield served
    served.close()


def test_the_card_and_the_keys_are_public(app: A2AApp) -> None:
    status, _, body = wsgi_calls.call(app, wsgi_calls.environ("GET", CARD_PATH))
    assert status == "200 OK" and json.loads(body)["name"] == "Hello"
    status, headers, body = wsgi_calls.call(app, wsgi_calls.environ("GET", JWKS_PATH))
    assert status == "200 OK" and dict(headers)["Content-Type"] == "application/jwk-set+json"
    assert [key["kid"] for key in json.loads(body)["keys"]] == ["c1"]


def test_the_inspector_checks_its_own_callers(app: A2AApp) -> None:
    local = wsgi_calls.call(app, wsgi_calls.environ("GET", "/inspector/"))
    assert local[0] == "200 OK" and b"<html" in local[2].lower()
    remote = wsgi_calls.environ("GET", "/inspector/")
    remote["REMOTE_ADDR"] = "203.0.113.9"
    assert wsgi_calls.call(app, remote)[0].startswith("403")


def test_the_bindings_ask_for_credentials_in_their_own_shape(app: A2AApp) -> None:
    rpc = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                      "params": {"id": "t-1"}}).encode()
    status, _, body = wsgi_calls.call(app, wsgi_calls.environ(
        "POST", "/", rpc, a2a_version="1.0"))
    assert status.startswith("401") and json.loads(body)["error"]["code"] == -31401
    status, _, body = wsgi_calls.call(app, wsgi_calls.environ(
        "GET", "/rest/tasks/t-1", a2a_version="1.0"))
    assert status.startswith("401") and "error" in json.loads(body)
    allowed = wsgi_calls.call(app, wsgi_calls.environ(
        "POST", "/", rpc, a2a_version="1.0", x_api_key="k-1"))
    assert allowed[0] == "200 OK" and json.loads(allowed[2])["error"]["code"] != -31401


@pytest.mark.parametrize("access_level", [logging.WARNING, logging.INFO])
def test_the_answers_are_the_same_whether_or_not_anyone_logs_them(
        app: A2AApp, access_level: int, caplog: pytest.LogCaptureFixture) -> None:
    wsgi_calls.call(app, wsgi_calls.environ("GET", CARD_PATH))  # assembled
    caplog.set_level(access_level, logger=ACCESS_LOGGER)
    answers = [wsgi_calls.call(app, wsgi_calls.environ("GET", path, x_request_id="req-1"))
               for path in (CARD_PATH, JWKS_PATH)]
    assert [status for status, _, _ in answers] == ["200 OK", "200 OK"]
    assert all(dict(headers)["X-Request-Id"] == "req-1" for _, headers, _ in answers)
    logged = [r for r in caplog.records if r.name == ACCESS_LOGGER]
    assert len(logged) == (2 if access_level == logging.INFO else 0)
