"""No credential a caller sends an authenticating A2AApp ends up anywhere but the request.

Good and bad credentials of every header-borne kind (bearer tokens, a JWT,
Basic passwords, API keys, a callback that quotes the token when it fails)
are sent over real HTTP, across both JSON-RPC versions and HTTP+JSON,
successful calls included. Afterwards no log record of ours (any level), no
answer, no repr the app shows and no row of the SQLite store (every table,
every column, the lease payloads and event logs included) holds any of them,
nor does what the agent was handed. The HTTP server's own access log is not
ours: it prints query strings, which is why an API key belongs in a header.
"""

from __future__ import annotations

import base64
import logging
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from app_auth_support import BINDINGS, Caller, WhoAgent, result, task_of
from auth_support import AUDIENCE, ISSUER, NOW, jwt_for
from support.a2a_http import served

from a2a_core.models import Message
from a2a_core.signing import SigningKey
from a2a_wsgi import A2AApp, AgentContext, reply
from a2a_wsgi.auth import (
    APIKeyAuthenticator,
    BasicAuthenticator,
    BearerAuthenticator,
    JWTBearerAuthenticator,
    JWTVerifier,
)
from a2a_wsgi.settings import CardSettings

KEY = SigningKey.generate("k1")
SECRETS = {
    "token": f"tok-{uuid.uuid4().hex}",
    "wrong-token": f"tok-{uuid.uuid4().hex}",
    "leaky-token": f"leak-{uuid.uuid4().hex}",
    "password": f"pw-{uuid.uuid4().hex}",
    "wrong-password": f"pw-{uuid.uuid4().hex}",
    "api-key": f"key-{uuid.uuid4().hex}",
    "wrong-api-key": f"key-{uuid.uuid4().hex}",
}
GOOD_JWT = jwt_for(KEY, sub="jwt-user")
EXPIRED_JWT = jwt_for(KEY, sub="jwt-user", exp=NOW - 999)


class RecordingAgent(WhoAgent):
    """Also keeps what each call handed the agent (its metadata), to search it afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[str] = []

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        self.handed.append(repr((msg, ctx.metadata, ctx.identity, ctx.extensions)))
        super().handle_message(msg, ctx)
        return reply("ok")


def _verify_bearer(token: str) -> str | None:
    if token == SECRETS["leaky-token"]:
        raise RuntimeError(f"backend refused {token}")  # a careless callback quoting it
    return "alice" if token == SECRETS["token"] else None


def _basic(user: str, password: str) -> bool:
    return user == "bob" and password == SECRETS["password"]


def _auth() -> list[Any]:
    return [BearerAuthenticator(_verify_bearer, scheme_name="opaque"),
            BasicAuthenticator(_basic),
            APIKeyAuthenticator("X-API-Key", keys={SECRETS["api-key"]: "carol"}),
            JWTBearerAuthenticator(JWTVerifier(issuer=ISSUER, audience=AUDIENCE, keys=[KEY],
                                               clock=lambda: NOW), scheme_name="jwt")]


def _basic_header(password: str) -> str:
    return "Basic " + base64.b64encode(f"bob:{password}".encode()).decode()


#: (credential headers, accepted?) for each call.
CALLS = [
    ({"Authorization": f"Bearer {SECRETS['token']}"}, True),
    ({"Authorization": f"Bearer {SECRETS['wrong-token']}"}, False),
    ({"Authorization": f"Bearer {SECRETS['leaky-token']}"}, False),
    ({"Authorization": _basic_header(SECRETS["password"])}, True),
    ({"Authorization": _basic_header(SECRETS["wrong-password"])}, False),
    ({"X-API-Key": SECRETS["api-key"]}, True),
    ({"X-API-Key": SECRETS["wrong-api-key"]}, False),
    ({"Authorization": f"Bearer {GOOD_JWT}"}, True),
    ({"Authorization": f"Bearer {EXPIRED_JWT}"}, False),
]


def _needles() -> list[str]:
    """Every secret, and the signature part of each JWT (the part that is the credential)."""
    basic = [_basic_header(SECRETS[p]).split()[1] for p in ("password", "wrong-password")]
    jwt_parts = [GOOD_JWT, EXPIRED_JWT, GOOD_JWT.rsplit(".", 1)[1], EXPIRED_JWT.rsplit(".", 1)[1]]
    return [*SECRETS.values(), *basic, *jwt_parts]


def _stored_text(path: Path) -> str:
    """Every value of every row of every table of the SQLite store, as text."""
    out: list[str] = []
    with closing(sqlite3.connect(path)) as db, db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert tables, "the store made no tables"
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        out.append(value.decode("utf-8", "replace"))
                    else:
                        out.append(str(value))
    return "\n".join(out)


def test_no_credential_in_logs_answers_reprs_or_stored_rows(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    database = tmp_path / "tasks.sqlite3"
    agent = RecordingAgent()
    app = A2AApp(
        agent,
        auth=_auth(),
        store=f"sqlite:///{database}",
        card=CardSettings(overrides={"capabilities": {"push_notifications": True}}),
    )
    answers: list[str] = []
    accepted = 0
    with served(app) as handle:
        for headers, ok in CALLS:
            for binding in BINDINGS:
                caller = Caller(handle.url, binding, headers=headers)
                response = caller.send("remember me", blocking=True)
                answers.append(repr(dict(response.headers)) + response.text)
                if not ok:
                    assert response.status_code == 401, response.text
                    continue
                accepted += 1
                task = task_of(result(response, binding), binding)
                for follow_up in (caller.get(task["id"]), caller.list() if binding != "jsonrpc-0.3"
                                  else caller.get(task["id"]),
                                  caller.push_set(task["id"], "cfg-1", "https://hooks.example/x")):
                    answers.append(follow_up.text)
                    assert follow_up.status_code == 200, follow_up.text
        shown = [repr(app), repr(app.dispatcher), repr(app._assembly)]
    assert accepted == 4 * len(BINDINGS)
    assert caplog.records, "refusals are logged"
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    stored = _stored_text(database)
    assert "remember me" in stored  # the rows searched are the ones the calls wrote
    for needle in _needles():
        assert needle not in logged, needle
        assert needle not in stored, needle
        assert all(needle not in text for text in answers), needle
        assert all(needle not in text for text in shown), needle
        assert all(needle not in text for text in agent.handed), needle
    assert "RuntimeError" in logged  # the leaky callback's failure is logged, by class only
