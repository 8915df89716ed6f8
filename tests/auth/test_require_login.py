"""``require_login`` on the Django and Flask adapters, through real sites under gunicorn.

tests/auth/login_django_site.py and login_flask_site.py mount one greeting
agent four ways (see their docstrings). Over HTTP: without the switch an
anonymous caller gets through; with ``True`` it gets 401 in its binding's
shape with the site's challenge (the session ``Cookie`` challenge, or the
app's ``Bearer`` one under ``auth=``); with a callable, the site's login
redirect. The card stays public. A session login and a framework-signed token
(through ``auth=``) reach the agent as the same identity type.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import flask
import pytest
import requests
from app_auth_support import Caller, assert_refused, result, task_of, texts_of
from greeter_agent import Greeter
from host_site_checks import PASSWORD, running_site

from a2a_wsgi import A2AApp, Agent

PRINCIPAL = "(a2a_core.auth.Principal)"


@dataclass(frozen=True)
class LoginSite:
    """A served site: where it logs in, its session cookie, how it names users."""

    kind: str
    base: str
    login_path: str
    token_path: str
    cookie: str
    #: ``alice``'s identity as the agent sees it.
    alice: str

    def session(self, user: str = "alice") -> requests.Session:
        browser = requests.Session()
        answer = browser.post(self.base + self.login_path, timeout=10,
                              data={"username": user, "password": PASSWORD})
        assert answer.status_code == 200, answer.text
        assert self.cookie in browser.cookies
        return browser

    def token(self, user: str = "alice") -> str:
        answer = requests.post(self.base + self.token_path, timeout=10,
                               data={"username": user, "password": PASSWORD})
        assert answer.status_code == 200, answer.text
        token = answer.json()["token"]
        assert isinstance(token, str)
        return token

    def caller(self, mount: str, binding: str = "jsonrpc-1.0", *,
               session: requests.Session | None = None, token: str | None = None) -> Caller:
        return Caller(f"{self.base}/{mount}", binding,
                      cookies=session.cookies.get_dict() if session is not None else None,
                      headers={"Authorization": f"Bearer {token}"} if token else None)


@pytest.fixture(scope="module", params=["django", "flask"])
def site(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoginSite]:
    kind = request.param
    tmp = tmp_path_factory.mktemp(f"login_{kind}")
    if kind == "django":
        pytest.importorskip("django")
        with running_site("login_django_site:application", tmp,
                          {"DJANGO_SITE_DB": str(tmp / "site.sqlite3")}) as base:
            yield LoginSite(kind, base, "/accounts/login/", "/accounts/token/", "sessionid",
                            "user:1")
    else:
        pytest.importorskip("flask_login")
        with running_site("login_flask_site:site", tmp, {}) as base:
            yield LoginSite(kind, base, "/login", "/token", "session", "user:alice")


def _greeting(answer: requests.Response, binding: str = "jsonrpc-1.0") -> str:
    texts = texts_of(task_of(result(answer, binding), binding))
    assert len(texts) == 1, texts
    return texts[0]


@pytest.mark.slow
def test_without_the_switch_anonymous_callers_get_through(site: LoginSite) -> None:
    assert _greeting(site.caller("open").send()) == "Hello anonymous"
    assert _greeting(site.caller("open", session=site.session()).send()) == \
        f"Hello {site.alice} {PRINCIPAL}"


@pytest.mark.slow
def test_require_login_true_answers_401_with_the_session_challenge(site: LoginSite) -> None:
    card = requests.get(site.base + "/members/.well-known/agent-card.json", timeout=10)
    assert card.status_code == 200  # public: a client reads it to learn how to log in
    for binding in ("jsonrpc-1.0", "jsonrpc-0.3", "rest"):
        anonymous = site.caller("members", binding).send()
        assert_refused(anonymous, binding, scheme="Cookie")
        challenge = anonymous.headers["WWW-Authenticate"]
        assert challenge.startswith(f'Cookie realm="a2a", cookie-name="{site.cookie}"')
        if site.kind == "django":
            assert 'form-action="/accounts/login/"' in challenge
    forged = Caller(site.base + "/members", "jsonrpc-1.0", cookies={site.cookie: "forged"})
    assert_refused(forged.send(), "jsonrpc-1.0", scheme="Cookie")
    # Any other path below the mount is refused too, as the app refuses it.
    other = requests.get(site.base + "/members/no/such/path", timeout=10)
    assert other.status_code == 401 and other.json()["error"]["code"] == 401

    alice = site.session()
    answer = site.caller("members", session=alice).send()
    assert _greeting(answer) == f"Hello {site.alice} {PRINCIPAL}"
    rest = site.caller("members", "rest", session=alice).send()
    assert _greeting(rest, "rest") == f"Hello {site.alice} {PRINCIPAL}"


@pytest.mark.slow
def test_require_login_callable_answers_with_the_sites_login_redirect(site: LoginSite) -> None:
    assert requests.get(site.base + "/portal/.well-known/agent-card.json",
                        timeout=10).status_code == 200
    anonymous = requests.post(site.base + "/portal/", json={}, timeout=10,
                              allow_redirects=False)
    assert anonymous.status_code == 302
    location = anonymous.headers["Location"]
    assert location.split("?")[0].endswith(site.login_path.rstrip("/") +
                                           ("/" if site.kind == "django" else "")), location
    assert "next=" in location and "portal" in location
    assert _greeting(site.caller("portal", session=site.session()).send()) == \
        f"Hello {site.alice} {PRINCIPAL}"


@pytest.mark.slow
def test_a_signed_token_and_a_session_reach_the_agent_as_the_same_type(site: LoginSite) -> None:
    token = site.token()
    if site.kind == "django":
        assert token.count(":") == 2  # django.core.signing.dumps, as minted by default
    else:
        assert token.count(".") == 2  # itsdangerous' URLSafeTimedSerializer
    by_token = _greeting(site.caller("a2a", token=token).send())
    by_session = _greeting(site.caller("a2a", session=site.session()).send())
    assert by_token == by_session == f"Hello {site.alice} {PRINCIPAL}"
    # Nobody: the app's own challenge (its auth= declares Bearer); a bad token: its refusal.
    for binding in ("jsonrpc-1.0", "rest"):
        assert_refused(site.caller("a2a", binding).send(), binding, scheme="Bearer")
        wrong = site.caller("a2a", binding, token=token[:-2] + "xx").send()
        assert_refused(wrong, binding, scheme="Bearer")
        assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]


def test_require_login_refuses_what_is_neither_a_switch_nor_a_callable() -> None:
    from a2a_wsgi.frameworks.flask import mount

    app = A2AApp(Agent.from_function(lambda msg, ctx: "hi", name="Hi"))
    with pytest.raises(TypeError, match="require_login is True, False or a callable"):
        mount(flask.Flask(__name__), "/a2a", app, require_login="yes")  # type: ignore[arg-type]
    pytest.importorskip("django")
    from a2a_wsgi.frameworks.django import a2a_urls

    with pytest.raises(TypeError, match="require_login is True, False or a callable"):
        a2a_urls(app, require_login=1)  # type: ignore[arg-type]


def test_require_login_overrides_a_policy_that_admits_anonymous_callers(serve: Any) -> None:
    from a2a_wsgi.auth import AuthPolicy, BearerAuthenticator
    from a2a_wsgi.frameworks.flask import mount

    app = A2AApp(Greeter(), auth=AuthPolicy([BearerAuthenticator({"tok-1": "user:1"}.get)],
                                            required=False))
    site = flask.Flask(__name__)
    mount(site, "/open", app, endpoint="open")
    mount(site, "/closed", app, require_login=True, endpoint="closed")
    try:
        base = serve(site).url
        assert _greeting(Caller(base + "/open", "jsonrpc-1.0").send()) == "Hello anonymous"
        assert_refused(Caller(base + "/closed", "jsonrpc-1.0").send(), "jsonrpc-1.0",
                       scheme="Bearer")
        head = requests.head(base + "/closed/rest/tasks", timeout=10)
        assert head.status_code == 401 and head.content == b""
        with_token = Caller(base + "/closed", "rest", headers={"Authorization": "Bearer tok-1"})
        assert _greeting(with_token.send(), "rest") == f"Hello user:1 {PRINCIPAL}"
    finally:
        app.close()
