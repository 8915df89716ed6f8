"""Callers authenticated by ``A2AApp(auth=...)`` see only their own tasks, in every store.

Alice and Bob hold bearer tokens. Alice's task (held WORKING, so it can still
be canceled and subscribed to) is then asked for by Bob with every operation
that names a task: get, cancel, subscribe, a message continuing it, and the
four push-config operations; Bob's ListTasks must not show it. Each of Bob's
answers must equal, byte for byte once the id is swapped, the answer for a
task id nobody ever used, and Alice's task must be untouched afterwards. This
runs over JSON-RPC 0.3 and 1.0 and HTTP+JSON, against the memory, SQLite and
PostgreSQL stores, because the owner scoping is each store's query.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from app_auth_support import BINDINGS, Caller, WhoAgent, result, task_of
from auth_support import AUDIENCE, ISSUER, NOW, jwt_for
from support.a2a_http import served

from a2a_core.signing import SigningKey
from a2a_wsgi import A2AApp
from a2a_wsgi.auth import BearerAuthenticator, JWTBearerAuthenticator, JWTVerifier
from a2a_wsgi.settings import CardSettings

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}
PUSH = {"capabilities": {"push_notifications": True}}  # configs stored, never delivered


def _sqlite(tmp: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp / 'tasks.sqlite3'}"


def _postgres(tmp: Path) -> Iterator[str]:
    from support.postgres import schema_url, temporary_schema

    with temporary_schema() as schema:
        yield schema_url(schema)


STORES: dict[str, Callable[[Path], Iterator[str]]] = {
    "memory": lambda tmp: iter(["memory"]),
    "sqlite": _sqlite,
    "postgres": _postgres,
}


@pytest.fixture(scope="module", params=list(STORES),
                ids=lambda name: name)
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[str]:
    if request.param == "postgres":
        request.applymarker(pytest.mark.postgres)
    stores = STORES[request.param](tmp_path_factory.mktemp(request.param))
    store = next(stores)
    app = A2AApp(
        WhoAgent(),
        auth=BearerAuthenticator(TOKENS.get),
        store=store,
        card=CardSettings(overrides=PUSH),
    )
    with served(app) as handle:
        yield handle.url
    app.runtime.close(wait=True)
    app.runtime.store.close()
    for _ in stores:  # let the store's context end (drops the PostgreSQL schema)
        pass


def _as(base: str, binding: str, token: str) -> Caller:
    return Caller(base, binding, headers={"Authorization": f"Bearer {token}"})


def _answer(response: requests.Response, task_id: str) -> tuple[int, str]:
    """Status and body with the task id and the JSON-RPC request id made neutral."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    if isinstance(body, dict) and "jsonrpc" in body:
        body = {**body, "id": None}
    return response.status_code, json.dumps(body, sort_keys=True).replace(task_id, "<id>")


@pytest.fixture
def alices_task(base: str, request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(binding, task id) of a task Alice holds WORKING; canceled at the end."""
    binding = request.param
    alice = _as(base, binding, "tok-alice")
    task = task_of(result(alice.send("wait", blocking=False), binding), binding)
    yield binding, task["id"]
    alice.cancel(task["id"])


ALL = pytest.mark.parametrize("alices_task", BINDINGS, indirect=True)


def _same_as_unknown(bob_call: Callable[[str], requests.Response], task_id: str) -> None:
    """Bob's answer about Alice's task is the answer about a task that never existed."""
    unknown = f"tsk-{uuid.uuid4().hex}"
    theirs = _answer(bob_call(task_id), task_id)
    nobodys = _answer(bob_call(unknown), unknown)
    assert theirs == nobodys
    status, body = theirs
    assert ("TASK_NOT_FOUND" in body) or ("-32001" in body), body
    assert status in (200, 404)


@ALL
def test_get_and_cancel_of_anothers_task_are_not_found(base: str,
                                                       alices_task: tuple[str, str]) -> None:
    binding, task_id = alices_task
    bob = _as(base, binding, "tok-bob")
    _same_as_unknown(bob.get, task_id)
    _same_as_unknown(bob.cancel, task_id)
    _same_as_unknown(lambda tid: bob.send("steer", task_id=tid), task_id)
    alice = _as(base, binding, "tok-alice")
    state = result(alice.get(task_id), binding)["status"]["state"]
    assert state in ("submitted", "working", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")


@ALL
def test_a_send_into_anothers_context_is_not_found(base: str,
                                                   alices_task: tuple[str, str]) -> None:
    binding, task_id = alices_task
    alice = _as(base, binding, "tok-alice")
    context_id = result(alice.get(task_id), binding)["contextId"]
    bob = _as(base, binding, "tok-bob")
    status, body = _answer(bob.send("into alice's context", context_id=context_id), task_id)
    assert ("TASK_NOT_FOUND" in body) or ("-32001" in body), body
    assert status in (200, 404) and context_id in body
    # Alice may go on using it, with a new task.
    again = task_of(result(alice.send("more", context_id=context_id), binding), binding)
    assert again["contextId"] == context_id and again["id"] != task_id
    fresh = f"ctx-{uuid.uuid4().hex}"  # a context nobody uses is anyone's to start
    assert task_of(result(bob.send("hi", context_id=fresh), binding), binding)["contextId"] == fresh


@ALL
def test_subscribing_to_anothers_task_is_not_found(base: str,
                                                   alices_task: tuple[str, str]) -> None:
    binding, task_id = alices_task
    bob = _as(base, binding, "tok-bob")

    def subscribe(tid: str) -> requests.Response:
        with bob.subscribe(tid) as response:
            response.content  # noqa: B018 - a plain error is the whole answer
            return response

    _same_as_unknown(subscribe, task_id)
    with _as(base, binding, "tok-alice").subscribe(task_id) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")


@ALL
def test_push_configs_of_anothers_task_are_not_found(base: str,
                                                     alices_task: tuple[str, str]) -> None:
    binding, task_id = alices_task
    alice, bob = _as(base, binding, "tok-alice"), _as(base, binding, "tok-bob")
    result(alice.push_set(task_id, "cfg-alice", "https://hooks.example/alice"), binding)
    _same_as_unknown(lambda tid: bob.push_set(tid, "cfg-bob", "https://hooks.example/bob"),
                     task_id)
    _same_as_unknown(lambda tid: bob.push_get(tid, "cfg-alice"), task_id)
    _same_as_unknown(bob.push_list, task_id)
    _same_as_unknown(lambda tid: bob.push_delete(tid, "cfg-alice"), task_id)
    kept = result(alice.push_get(task_id, "cfg-alice"), binding)
    assert "https://hooks.example/alice" in json.dumps(kept)
    assert "hooks.example/bob" not in json.dumps(result(alice.push_list(task_id), binding))


@pytest.mark.parametrize("alices_task", ["jsonrpc-1.0", "rest"], indirect=True)
def test_list_shows_each_caller_only_its_own_tasks(base: str,
                                                   alices_task: tuple[str, str]) -> None:
    binding, task_id = alices_task
    alice, bob = _as(base, binding, "tok-alice"), _as(base, binding, "tok-bob")
    bobs = task_of(result(bob.send("mine"), binding), binding)["id"]
    alice_sees = {t["id"] for t in result(alice.list(), binding)["tasks"]}
    bob_sees = {t["id"] for t in result(bob.list(), binding)["tasks"]}
    assert task_id in alice_sees and bobs not in alice_sees
    assert bobs in bob_sees and task_id not in bob_sees
    assert result(bob.list(), binding)["totalSize"] == len(bob_sees)


def test_the_same_identity_through_another_token_is_the_same_owner() -> None:
    """Ownership follows the identity, not the credential: a later JWT for Alice (new
    ``iat``/``exp``, other claims) sees the tasks of the first, and Bob's does not."""
    key = SigningKey.generate("k1")
    verifier = JWTVerifier(issuer=ISSUER, audience=AUDIENCE, keys=[key], clock=lambda: NOW)
    app = A2AApp(WhoAgent(), auth=JWTBearerAuthenticator(verifier))
    with served(app) as handle:
        first = _as(handle.url, "jsonrpc-1.0", jwt_for(key, iat=NOW - 100, exp=NOW + 60))
        task = task_of(result(first.send(), "jsonrpc-1.0"), "jsonrpc-1.0")
        later = _as(handle.url, "jsonrpc-1.0", jwt_for(key, exp=NOW + 3600, scope="more"))
        assert result(later.get(task["id"]), "jsonrpc-1.0")["id"] == task["id"]
        bob = _as(handle.url, "jsonrpc-1.0", jwt_for(key, sub="bob"))
        assert bob.get(task["id"]).json()["error"]["code"] == -32001
