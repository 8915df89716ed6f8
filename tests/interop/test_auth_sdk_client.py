"""The official SDK's client with its ``AuthInterceptor``, against examples/secure.py (gunicorn).

``gunicorn examples.secure:app`` runs as a deployment would: two workers, a
shared SQLite store, ``A2A_BASE_URL``, the tokens in ``$SECURE_TOKENS`` and the
card key in the PEM file ``$SECURE_SIGNING_KEY``. The SDK (a2a-sdk 1.3.0)
resolves the card, checks its signature with the keys its ``jku`` names, and
adds the bearer token itself: its ``AuthInterceptor`` reads the card's
security requirements and asks a ``CredentialService`` for that scheme. Over
JSON-RPC and HTTP+JSON it sends, reads its task back, is refused another
caller's task, and fetches the extended card; without a token it is refused.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import pytest
from interop_support import require_sdk

require_sdk()
if os.environ.get("CI") != "true":  # the test extra has it: in CI, a missing PyJWT fails
    pytest.importorskip("jwt", reason="a2a.utils.signing needs PyJWT (a2a-sdk[signing])")

import httpx  # noqa: E402
import requests  # noqa: E402
from a2a.client import (  # noqa: E402
    AuthInterceptor,
    ClientCallContext,
    ClientConfig,
    CredentialService,
    create_client,
)
from a2a.client.errors import A2AClientError  # noqa: E402
from a2a.types import a2a_pb2 as pb  # noqa: E402
from a2a.utils.errors import TaskNotFoundError  # noqa: E402
from a2a.utils.signing import create_signature_verifier  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from jwt.api_jwk import PyJWK  # noqa: E402
from support.gunicorn import ROOT, ServerProcess, free_port, gunicorn_argv  # noqa: E402

pytestmark = pytest.mark.slow

T = TypeVar("T")
TOKENS = "alice=tok-alice,bob=tok-bob"
BINDINGS = ["JSONRPC", "HTTP+JSON"]


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await asyncio.wait_for(coro, 30)
    return asyncio.run(main())


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """examples.secure:app under gunicorn (two workers sharing a SQLite store)."""
    tmp = tmp_path_factory.mktemp("secure")
    key = ec.generate_private_key(ec.SECP256R1())
    pem = tmp / "card-key.pem"
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"SECURE_TOKENS": TOKENS, "SECURE_SIGNING_KEY": str(pem), "A2A_BASE_URL": base + "/",
           "A2A_STORE": f"sqlite:///{tmp / 'tasks.sqlite3'}", "PYTHONPATH": str(ROOT)}
    argv = gunicorn_argv("examples.secure:app", port=port, workers=2)
    with ServerProcess(argv, port=port, log_path=tmp / "gunicorn.log", env=env) as server:
        assert server.wait_ready().status_code == 200
        yield base
        log = server.log()
    for secret in ("tok-alice", "tok-bob"):
        assert secret not in log


class Token(CredentialService):
    """One bearer token for the card's ``bearer`` scheme (and the schemes it was asked for)."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self.asked: list[str] = []

    async def get_credentials(self, security_scheme_name: str,
                              context: ClientCallContext | None) -> str | None:
        self.asked.append(security_scheme_name)
        return self.token


def _jku_verifier() -> Any:
    """The SDK's verifier, keys taken from the JWKS each signature's ``jku`` names."""
    fetched: list[str] = []

    def key_provider(kid: str | None, jku: str | None) -> PyJWK:
        assert jku is not None
        fetched.append(jku)
        keys = requests.get(jku, timeout=5).json()["keys"]
        return PyJWK(next(k for k in keys if k["kid"] == kid))

    verifier = create_signature_verifier(key_provider, ["ES256"])
    verifier.fetched = fetched  # type: ignore[attr-defined]
    return verifier


@asynccontextmanager
async def sdk_client(base: str, token: str | None, binding: str,
                     verifier: Any = None) -> AsyncIterator[Any]:
    credentials = Token(token)
    paths: list[str] = []

    async def record(request: httpx.Request) -> None:
        if request.method != "GET" or "/rest/" in request.url.path:
            paths.append(request.url.path)

    async with httpx.AsyncClient(timeout=10, event_hooks={"request": [record]}) as http:
        config = ClientConfig(httpx_client=http, streaming=False,
                              supported_protocol_bindings=[binding])
        client = await create_client(base, config, interceptors=[AuthInterceptor(credentials)],
                                     signature_verifier=verifier)
        try:
            yield client
        finally:
            await client.close()
    assert credentials.asked and set(credentials.asked) == {"bearer"}  # read from the card
    assert paths and all(p.startswith("/rest/") == (binding == "HTTP+JSON") for p in paths)


def _message(text: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=f"m-{time.monotonic_ns()}", role=pb.Role.ROLE_USER, parts=[pb.Part(text=text)]))


async def _send(client: Any, text: str) -> pb.Task:
    events = [event async for event in client.send_message(_message(text))]
    task: pb.Task = events[0].task
    return task


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_sdk_authenticates_from_the_card_and_verifies_its_signature(
        secure: str, binding: str) -> None:
    verifier = _jku_verifier()

    async def scenario() -> tuple[pb.Task, pb.Task, pb.AgentCard]:
        async with sdk_client(secure, "tok-alice", binding, verifier) as client:
            task = await _send(client, "whoami")
            again = await client.get_task(pb.GetTaskRequest(id=task.id))
            extended = await client.get_extended_agent_card(
                pb.GetExtendedAgentCardRequest(), signature_verifier=verifier)
            return task, again, extended

    task, again, extended = run(scenario())
    assert task.status.state == pb.TaskState.TASK_STATE_COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["You are alice."]
    assert again.id == task.id
    assert [s.id for s in extended.skills] == ["echo", "whoami"]
    assert verifier.fetched and set(verifier.fetched) == {secure + "/.well-known/jwks.json"}


@pytest.mark.parametrize("binding", BINDINGS)
def test_another_callers_task_is_not_found_through_the_sdk(secure: str, binding: str) -> None:
    async def scenario() -> None:
        async with sdk_client(secure, "tok-alice", binding) as alice, \
                sdk_client(secure, "tok-bob", binding) as bob:
            task = await _send(alice, "mine")
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(pb.GetTaskRequest(id=task.id))
            with pytest.raises(TaskNotFoundError):
                await bob.cancel_task(pb.CancelTaskRequest(id=task.id))
            listed = await bob.list_tasks(pb.ListTasksRequest())
            assert task.id not in {t.id for t in listed.tasks}

    run(scenario())


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("token", [None, "tok-mallory"])
def test_without_a_good_token_the_sdk_is_refused_with_401(secure: str, binding: str,
                                                          token: str | None) -> None:
    async def scenario() -> None:
        async with sdk_client(secure, token, binding) as client:
            with pytest.raises(A2AClientError) as refused:
                await _send(client, "hi")
            assert "401" in str(refused.value)

    run(scenario())
    response = requests.post(secure + "/", json={}, timeout=5)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith('Bearer realm="a2a"')


def test_the_public_card_declares_bearer_in_both_spellings(secure: str) -> None:
    dual = requests.get(secure + "/.well-known/agent-card.json", timeout=5).json()
    assert dual["security"] == [{"bearer": []}]
    assert dual["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    scheme = dual["securitySchemes"]["bearer"]
    assert scheme["type"] == "http" and scheme["scheme"] == "Bearer"
    assert scheme["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert [s["id"] for s in dual["skills"]] == ["echo"]
    assert dual["supportsAuthenticatedExtendedCard"] is True
