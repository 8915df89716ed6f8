"""Which bearer tokens are read: what frameworks mint passes, what is malformed is refused.

The tokens are minted by the real libraries: Django's ``django.core.signing``
(in a fresh interpreter, since Django's settings are process-wide) and
itsdangerous (Flask's ``URLSafeTimedSerializer``). Each reaches ``verify``
exactly as minted, in process and over HTTP; a malformed one is refused with
``invalid_request`` before ``verify`` sees it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import requests
from auth_support import request_with
from itsdangerous import Signer, TimestampSigner, URLSafeSerializer, URLSafeTimedSerializer

from a2a_core.auth import Principal
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.auth import DEFAULT_MAX_CREDENTIAL_BYTES, BearerAuthenticator, InvalidCredentialsError

pytest.importorskip("django")

#: Mints one token of each of Django's default kinds and prints them (JSON).
_DJANGO_MINT = """
import json
from django.conf import settings
settings.configure(SECRET_KEY="test-only-not-secret")
from django.core import signing
print(json.dumps({
    "dumps(pk)": signing.dumps(1),
    "dumps(dict)": signing.dumps({"user": 1, "scope": ["a2a"]}, salt="site.tokens"),
    "dumps(compress)": signing.dumps("x" * 400, compress=True),
    "TimestampSigner.sign(user:1)": signing.TimestampSigner().sign("user:1"),
    "TimestampSigner.sign(email)": signing.TimestampSigner().sign("alice+a2a@example.com"),
    "TimestampSigner.sign_object": signing.TimestampSigner(salt="s").sign_object({"id": 7}),
    "Signer.sign": signing.Signer().sign("42"),
}))
"""


def _django_tokens() -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", _DJANGO_MINT], capture_output=True, text=True,
                          timeout=60, check=True)
    minted = json.loads(done.stdout)
    assert isinstance(minted, dict)
    return minted


def _itsdangerous_tokens() -> dict[str, str]:
    secret = "test-only-not-secret"
    return {
        "URLSafeTimedSerializer": URLSafeTimedSerializer(secret, salt="tok").dumps({"id": 1}),
        "URLSafeTimedSerializer(compressed)":
            URLSafeTimedSerializer(secret).dumps("x" * 400),
        "URLSafeSerializer": URLSafeSerializer(secret).dumps(["alice", 7]),
        "TimestampSigner": TimestampSigner(secret).sign("alice").decode(),
        "Signer": Signer(secret).sign("user:1").decode(),
    }


MINTED: dict[str, str] = {**_django_tokens(), **_itsdangerous_tokens()}


class Recorder:
    """A verify callback that accepts every token it is handed, and keeps them."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, token: str) -> str:
        self.seen.append(token)
        return "user:1"


def test_the_minted_tokens_are_of_the_kinds_users_meet() -> None:
    # Django's separators are ':'; a compressed payload starts with '.'; itsdangerous uses '.'.
    assert MINTED["dumps(pk)"].count(":") == 2
    assert MINTED["dumps(compress)"].startswith(".")
    assert "@" in MINTED["TimestampSigner.sign(email)"]
    assert MINTED["URLSafeTimedSerializer"].count(".") == 2
    assert MINTED["URLSafeTimedSerializer(compressed)"].startswith(".")


@pytest.mark.parametrize("kind", sorted(MINTED))
def test_every_minted_token_reaches_verify_as_minted(kind: str) -> None:
    verify = Recorder()
    bearer = BearerAuthenticator(verify)
    token = MINTED[kind]
    found = bearer.authenticate(request_with({"Authorization": f"Bearer {token}"}))
    assert found == Principal(identity="user:1") and isinstance(found, Principal)
    assert verify.seen == [token]


def test_an_itsdangerous_token_verifies_with_its_own_library() -> None:
    tokens = URLSafeTimedSerializer("test-only-not-secret", salt="tok")
    bearer = BearerAuthenticator(lambda token: f"user:{tokens.loads(token)['id']}")
    token = tokens.dumps({"id": 3})
    found = bearer.authenticate(request_with({"Authorization": f"Bearer {token}"}))
    assert found == "user:3"


_MALFORMED = {
    "a space inside": "MQ:1xZl79 :abc",
    "a tab inside": "MQ:1xZl79\t:abc",
    "NUL": "MQ:1xZl79:\x00abc",
    "a control character": "MQ:\x01:abc",
    "DEL": "abc\x7f",
    "non-ASCII": "tök",
    "a line break inside": "abc\ndef",
}


@pytest.mark.parametrize("kind", sorted(_MALFORMED))
def test_malformed_tokens_are_refused_before_verify(kind: str) -> None:
    verify = Recorder()
    bearer = BearerAuthenticator(verify)
    with pytest.raises(InvalidCredentialsError) as caught:
        bearer.authenticate(request_with({"Authorization": "Bearer " + _MALFORMED[kind]}))
    assert caught.value.error == "invalid_request"
    assert caught.value.reason == "malformed bearer token"
    assert verify.seen == []


@pytest.mark.parametrize("value", ["Bearer", "Bearer ", "Bearer    "])
def test_an_empty_token_is_refused(value: str) -> None:
    verify = Recorder()
    with pytest.raises(InvalidCredentialsError) as caught:
        BearerAuthenticator(verify).authenticate(request_with({"Authorization": value}))
    assert caught.value.error == "invalid_request" and verify.seen == []


def test_an_over_long_token_is_refused_unread() -> None:
    verify = Recorder()
    bearer = BearerAuthenticator(verify)
    fits = "a" * (DEFAULT_MAX_CREDENTIAL_BYTES - len("Bearer "))
    assert bearer.authenticate(request_with({"Authorization": f"Bearer {fits}"})) == "user:1"
    with pytest.raises(InvalidCredentialsError) as caught:
        bearer.authenticate(request_with({"Authorization": f"Bearer {fits}a"}))
    assert caught.value.reason == "Authorization header too large"
    assert verify.seen == [fits]


class Greeter(Agent):
    name = "Greeter"

    def handle_message(self, msg: Any, ctx: AgentContext) -> Any:
        return reply(f"Hello {ctx.identity}")


def _send(base: str, token: str) -> requests.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    return requests.post(base + "/", json=body, timeout=10, headers={
        "A2A-Version": "1.0", "Authorization": f"Bearer {token}"})


def test_over_http_a_django_token_is_the_caller_and_a_spaced_one_is_refused(serve: Any) -> None:
    token = MINTED["dumps(pk)"]
    app = A2AApp(Greeter(), auth=BearerAuthenticator({token: "user:1"}.get))
    try:
        served = serve(app)
        answer = _send(served.url, token)
        assert answer.status_code == 200, answer.text
        parts = answer.json()["result"]["task"]["artifacts"][0]["parts"]
        assert parts == [{"text": "Hello user:1"}]
        spaced = _send(served.url, token.replace(":", ": ", 1))
        assert spaced.status_code == 401
        assert 'error="invalid_request"' in spaced.headers["WWW-Authenticate"]
        assert spaced.json()["error"]["message"] == "malformed bearer token"
    finally:
        app.close()
