"""A framework's own login (``put_identity``) and ``A2AApp(auth=...)`` together, over real HTTP.

The decision under test (docs/security.md): an identity a middleware recorded
wins, and the authenticators are not asked; without one they run as usual.
Three deployments: a plain WSGI middleware, a Flask site whose view returns the
A2A app (its session set by a login route, as Flask-Login's would be), and a
Django project with real users and sessions under gunicorn, the A2A app wrapped
by the pattern the docs give.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import flask
import pytest
import requests
from app_auth_support import BINDINGS, Caller, WhoAgent, assert_refused, result, task_of, texts_of
from support.a2a_http import served
from support.gunicorn import ServerProcess, free_port, gunicorn_argv

from a2a_core.models import AgentCard
from a2a_wsgi import A2AApp, put_identity, serve
from a2a_wsgi.auth import AuthPolicy, BearerAuthenticator
from a2a_wsgi.settings import CardSettings, ProtocolSettings

HERE = Path(__file__).resolve().parent
TOKENS = {"tok-alice": "alice"}


def session_middleware(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """A stand-in for a framework: ``Cookie: session=dora`` is a logged-in user."""

    def middleware(environ: dict[str, Any], start_response: Callable[..., Any]
                   ) -> Iterable[bytes]:
        if "session=dora" in environ.get("HTTP_COOKIE", ""):
            put_identity(environ, "user:dora")
        return app(environ, start_response)

    return middleware


def _answer_text(caller: Caller) -> str:
    texts = texts_of(task_of(result(caller.send("who"), caller.binding), caller.binding))
    assert len(texts) == 1
    return texts[0]


@pytest.fixture(scope="module")
def composed() -> Iterator[str]:
    app = A2AApp(
        WhoAgent(),
        auth=BearerAuthenticator(TOKENS.get),
        card=CardSettings(extended_card=lambda ctx: AgentCard(name="Members only")),
    )
    with served(session_middleware(app)) as handle:
        yield handle.url
    app.close()


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_framework_identity_wins_and_tokens_still_work(composed: str, binding: str) -> None:
    session = Caller(composed, binding, cookies={"session": "dora"})
    assert _answer_text(session) == "caller=user:dora"
    assert result(session.extended_card(), binding)["name"] == "Members only"
    token = Caller(composed, binding, headers={"Authorization": "Bearer tok-alice"})
    assert _answer_text(token) == "caller=alice"
    both = Caller(composed, binding, cookies={"session": "dora"},
                  headers={"Authorization": "Bearer tok-mallory"})
    assert _answer_text(both) == "caller=user:dora"  # the authenticators are not asked
    assert_refused(Caller(composed, binding).send(), binding, scheme="Bearer")
    assert_refused(Caller(composed, binding, cookies={"session": "eve"}).extended_card(),
                   binding, scheme="Bearer")


def test_framework_callers_own_their_tasks_too(composed: str) -> None:
    dora = Caller(composed, "jsonrpc-1.0", cookies={"session": "dora"})
    task = task_of(result(dora.send("mine"), "jsonrpc-1.0"), "jsonrpc-1.0")
    alice = Caller(composed, "jsonrpc-1.0", headers={"Authorization": "Bearer tok-alice"})
    assert alice.get(task["id"]).json()["error"]["code"] == -32001
    assert result(dora.get(task["id"]), "jsonrpc-1.0")["id"] == task["id"]


# -- Flask: the view returns the A2A app, before_request records the session's user ----------


@pytest.fixture(scope="module")
def flask_site() -> Iterator[str]:
    a2a = A2AApp(
        WhoAgent(),
        auth=AuthPolicy([BearerAuthenticator(TOKENS.get)], required=True),
        card=CardSettings(path=None),
        protocol=ProtocolSettings(json_rpc_path="agent", rest_path=None),
    )
    site = flask.Flask(__name__)
    site.secret_key = "test-only"

    @site.post("/login")
    def login() -> str:
        flask.session["user"] = flask.request.form["user"]
        return "in"

    @site.before_request
    def a2a_identity() -> None:
        user = flask.session.get("user")
        if user:
            put_identity(flask.request.environ, f"user:{user}")

    @site.route("/agent/", methods=["POST"])
    def agent_endpoint() -> Any:
        return a2a

    handle = serve(site, "127.0.0.1:0")
    try:
        yield handle.url
    finally:
        handle.stop()
        a2a.close()


def _rpc(session: requests.Session, url: str, **headers: str) -> requests.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m-flask", "role": "ROLE_USER", "parts": [{"text": "who"}]}}}
    return session.post(url + "/agent/", data=json.dumps(body), timeout=10,
                        headers={"Content-Type": "application/json", "A2A-Version": "1.0",
                                 **headers})


def test_a_flask_login_session_is_the_caller(flask_site: str) -> None:
    browser = requests.Session()
    assert_refused(_rpc(browser, flask_site), "jsonrpc-1.0", scheme="Bearer")
    assert browser.post(flask_site + "/login", data={"user": "dora"}, timeout=5).text == "in"
    task = _rpc(browser, flask_site).json()["result"]["task"]
    assert texts_of(task) == ["caller=user:dora"]
    agent = _rpc(requests.Session(), flask_site, Authorization="Bearer tok-alice")
    assert texts_of(agent.json()["result"]["task"]) == ["caller=alice"]


# -- Django: real users, real sessions, under gunicorn --------------------------------------


@pytest.mark.slow
def test_a_django_login_is_the_caller(tmp_path: Path) -> None:
    pytest.importorskip("django")
    port = free_port()
    argv = gunicorn_argv("django_site:application", port=port)
    env = {"DJANGO_SITE_DB": str(tmp_path / "site.sqlite3"),
           "A2A_STORE": "memory", "PYTHONPATH": f"{HERE}:{HERE.parents[1]}"}
    with ServerProcess(argv, port=port, log_path=tmp_path / "gunicorn.log", env=env) as server:
        base = f"http://127.0.0.1:{port}"
        _wait(base + "/a2a/.well-known/agent-card.json", server)
        browser = requests.Session()
        anonymous = Caller(base + "/a2a", "jsonrpc-1.0")
        assert_refused(anonymous.send(), "jsonrpc-1.0", scheme="Bearer")
        refused = browser.post(base + "/login", data={"username": "dora", "password": "nope"},
                               timeout=10)
        assert refused.status_code == 403
        logged_in = browser.post(base + "/login", data={"username": "dora",
                                                        "password": "pw-dora"}, timeout=10)
        assert logged_in.text == "in", server.log()
        dora = Caller(base + "/a2a", "jsonrpc-1.0", cookies=browser.cookies.get_dict())
        assert _answer_text(dora) == "caller=user:1"
        assert result(dora.extended_card(), "jsonrpc-1.0")["name"] == "Members only"
        token = Caller(base + "/a2a", "rest", headers={"Authorization": "Bearer tok-agent"})
        assert _answer_text(token) == "caller=agent-7"
        forged = Caller(base + "/a2a", "jsonrpc-1.0", cookies={"sessionid": "forged"})
        assert_refused(forged.send(), "jsonrpc-1.0", scheme="Bearer")


def _wait(url: str, server: ServerProcess) -> None:
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.proc.poll() is None, server.log()
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise AssertionError(f"the Django site did not start:\n{server.log()}")
