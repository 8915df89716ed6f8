"""What both site examples must show under gunicorn: the host's login is the agent's caller.

``check_site`` runs one scenario against a served site (examples/django_site
or examples/flask_site.py): a browser-style session login and a site token
each own their tasks, another user gets not-found, anonymous callers and bad
credentials get 401 with the card's ``Bearer`` challenge, the extended card
is for logged-in users only, SSE streams and push configs pass through the
adapter, and the card advertises the mount.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests
from app_auth_support import Caller, assert_refused, error_of, result, task_of, texts_of
from support.a2a_http import parse_sse
from support.gunicorn import ROOT, ServerProcess, free_port, gunicorn_argv

__all__ = ["Site", "check_plain_http", "check_site", "running_site"]

PASSWORD = "s3cret-for-tests"


@dataclass(frozen=True)
class Site:
    """A served site: its URL, how to log a browser in, and how to get a token."""

    base: str
    #: A requests.Session logged in through the site's own form, for a user name.
    login: Callable[[str], requests.Session]
    #: The site's token path (POST username/password -> {"token": ...}).
    token_path: str
    #: The identity the agent sees for a user name.
    identity_of: Callable[[str], str]

    def token(self, user: str) -> str:
        answer = requests.post(self.base + self.token_path,
                               data={"username": user, "password": PASSWORD}, timeout=10)
        assert answer.status_code == 200, answer.text
        token = answer.json()["token"]
        assert isinstance(token, str)
        return token


@contextmanager
def running_site(app: str, tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    """gunicorn -w 2 serving ``app`` from the checkout (or from tests/auth); yields its URL."""
    port = free_port()
    argv = gunicorn_argv(app, port=port, workers=2, threads=8)
    # Both workers share one SQLite file, so any worker answers for any task.
    env = {**env, "DEMO_PASSWORD": PASSWORD,
           "PYTHONPATH": f"{ROOT}:{Path(__file__).resolve().parent}",
           "A2A_STORE": f"sqlite:///{tmp_path / 'tasks.sqlite3'}"}
    with ServerProcess(argv, port=port, log_path=tmp_path / "gunicorn.log", env=env) as server:
        base = f"http://127.0.0.1:{port}"
        _wait(base + "/a2a/.well-known/agent-card.json", server)
        yield base


def _wait(url: str, server: ServerProcess) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert server.proc.poll() is None, server.log()
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the site did not start:\n{server.log()}")


def _agent(site: Site, binding: str, *, session: requests.Session | None = None,
           token: str | None = None) -> Caller:
    return Caller(site.base + "/a2a", binding,
                  cookies=session.cookies.get_dict() if session is not None else None,
                  headers={"Authorization": f"Bearer {token}"} if token else None)


def check_site(site: Site) -> None:
    card = requests.get(site.base + "/a2a/.well-known/agent-card.json", timeout=10)
    assert card.status_code == 200
    urls = [face["url"] for face in card.json()["supportedInterfaces"]]
    assert site.base + "/a2a/" in urls and site.base + "/a2a/rest" in urls, urls
    assert "bearer" in card.json()["securitySchemes"]

    # Anonymous, and credentials the site does not accept: 401 with the card's challenge.
    for binding in ("jsonrpc-1.0", "rest"):
        assert_refused(_agent(site, binding).send(), binding, scheme="Bearer")
        assert_refused(_agent(site, binding, token="not-a-token").send(), binding,
                       scheme="Bearer")
        assert_refused(_agent(site, binding).extended_card(), binding, scheme="Bearer")
    forged = Caller(site.base + "/a2a", "jsonrpc-1.0", cookies={"sessionid": "forged",
                                                                "session": "forged"})
    assert_refused(forged.send(), "jsonrpc-1.0", scheme="Bearer")

    # Alice logs in through the site's form; her session is the caller (no CSRF token sent).
    alice_session = site.login("alice")
    alice = _agent(site, "jsonrpc-1.0", session=alice_session)
    task = task_of(result(alice.send("from alice"), "jsonrpc-1.0"), "jsonrpc-1.0")
    assert texts_of(task) == [f"hello, {site.identity_of('alice')}: from alice"]
    assert result(alice.extended_card(), "jsonrpc-1.0")["name"] == "Caller Agent (members)"

    # Bob, a program, uses the site's token: his own task, and not-found for alice's.
    bob_token = site.token("bob")
    bob_rest = _agent(site, "rest", token=bob_token)
    bobs = task_of(result(bob_rest.send("from bob"), "rest"), "rest")
    assert texts_of(bobs) == [f"hello, {site.identity_of('bob')}: from bob"]
    assert result(bob_rest.extended_card(), "rest")["name"] == "Caller Agent (members)"
    assert bob_rest.get(task["id"]).status_code == 404
    bob_rpc = _agent(site, "jsonrpc-1.0", token=bob_token)
    assert error_of(bob_rpc.get(task["id"]), "jsonrpc-1.0")["code"] == -32001
    listed = [t["id"] for t in result(bob_rest.list(), "rest")["tasks"]]
    assert bobs["id"] in listed and task["id"] not in listed
    # Alice reads hers over either binding (any of the two workers answers).
    alice_rest = _agent(site, "rest", session=alice_session)
    for _ in range(4):
        assert result(alice_rest.get(task["id"]), "rest")["id"] == task["id"]
    assert alice_rest.get(bobs["id"]).status_code == 404

    # A stream goes out through the adapter as it is produced.
    with _stream(alice_rest, "streamed") as events:
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        artifact = next(e["artifactUpdate"] for e in events if "artifactUpdate" in e)
        assert artifact["artifact"]["parts"] == [
            {"text": f"hello, {site.identity_of('alice')}: streamed"}]

    # Push configs: alice's, invisible to bob.
    hook = "https://hooks.example.com/a2a/alice"
    result(alice.push_set(task["id"], "cfg-alice", hook), "jsonrpc-1.0")
    assert hook in json.dumps(result(alice_rest.push_get(task["id"], "cfg-alice"), "rest"))
    assert bob_rest.push_get(task["id"], "cfg-alice").status_code == 404
    assert error_of(bob_rpc.push_list(task["id"]), "jsonrpc-1.0")["code"] == -32001


@contextmanager
def _stream(caller: Caller, text: str) -> Iterator[list[dict[str, object]]]:
    body = {"message": {"messageId": f"m-{text}", "role": "ROLE_USER",
                        "parts": [{"text": text}]}}
    response = caller.rest("POST", "/message:stream", body, stream=True)
    try:
        assert response.status_code == 200, response.text
        assert response.headers["Content-Type"].startswith("text/event-stream")
        assert "Content-Length" not in response.headers
        yield [event.data for event in parse_sse(response.iter_lines(decode_unicode=True))]
    finally:
        response.close()


def check_plain_http(site: Site) -> None:
    """The card's HEAD and 304, and a chunked body, pass through the adapter unchanged."""
    card_url = site.base + "/a2a/.well-known/agent-card.json"
    card = requests.get(card_url, timeout=10)
    head = requests.head(card_url, timeout=10)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["ETag"] == card.headers["ETag"]
    again = requests.get(card_url, headers={"If-None-Match": card.headers["ETag"]}, timeout=10)
    assert again.status_code == 304 and again.content == b""

    def chunks() -> Iterator[bytes]:
        body = json.dumps({"jsonrpc": "2.0", "id": "chunked", "method": "SendMessage",
                           "params": {"message": {"messageId": "m-chunked", "role": "ROLE_USER",
                                                  "parts": [{"text": "in chunks"}]}}}).encode()
        yield body[:20]
        yield body[20:]

    answer = requests.post(site.base + "/a2a/", data=chunks(), timeout=10,
                           headers={"Content-Type": "application/json", "A2A-Version": "1.0",
                                    "Authorization": f"Bearer {site.token('alice')}"})
    assert answer.status_code == 200, answer.text
    task = answer.json()["result"]["task"]
    assert texts_of(task) == [f"hello, {site.identity_of('alice')}: in chunks"]
