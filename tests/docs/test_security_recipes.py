"""Every Python snippet of docs/security.md, run as written, then called over HTTP.

Each ```python block is taken from the page, written to a module of its own in
a temporary folder, and served by gunicorn from that folder (``--chdir``, the
checkout on ``PYTHONPATH``, as "from the checkout's folder" says); the test
then calls it as the page says a caller would. The page's shell block runs in
tests/docs/test_doc_commands.py. A new snippet on the page fails
:func:`test_every_snippet_is_run_here` until a test here runs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from support.gunicorn import ServerProcess, free_port, gunicorn_argv

from a2a_client import A2AClient

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "security.md"
PASSWORD = "recipe-pass"

pytestmark = pytest.mark.slow

#: A phrase only its snippet has, for every snippet a test below runs.
SNIPPETS = {
    "intro": "signing_keys=(SigningKey.from_pem",
    "members": 'mount(site, "/members", members',
    "flask": "def agent_card():",
    "django": 'DispatcherMiddleware(site_application, {"/agent"',
}


def snippet(name: str) -> str:
    """The one ```python block of the page holding ``SNIPPETS[name]``."""
    found = [b for b in _blocks() if SNIPPETS[name] in b]
    assert len(found) == 1, f"{len(found)} python blocks of docs/security.md hold {name!r}"
    return found[0]


def _blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), re.S | re.M)


def test_every_snippet_is_run_here() -> None:
    untested = [b for b in _blocks() if not any(phrase in b for phrase in SNIPPETS.values())]
    assert untested == [], f"docs/security.md snippets no test runs: {untested}"


@contextmanager
def served(tmp_path: Path, module: str, code: str, attr: str, ready: str,
           env: dict[str, str] | None = None) -> Iterator[str]:
    """``code`` as ``module.py`` in ``tmp_path``, gunicorn serving ``module:attr`` from there."""
    (tmp_path / f"{module}.py").write_text(code)
    port = free_port()
    argv = gunicorn_argv(f"{module}:{attr}", port=port, workers=1)
    argv[-1:-1] = ["--chdir", str(tmp_path)]
    full_env = {**(env or {}), "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
                "DEMO_PASSWORD": PASSWORD, "A2A_STORE": "memory"}
    base = f"http://127.0.0.1:{port}"
    with ServerProcess(argv, port=port, log_path=tmp_path / "gunicorn.log",
                       env=full_env) as server:
        deadline = time.monotonic() + 60
        while True:
            assert server.proc.poll() is None, server.log()
            assert time.monotonic() < deadline, f"{module} did not start:\n{server.log()}"
            try:
                if requests.get(base + ready, timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.2)
        yield base


def _send(url: str, text: str, **kwargs: object) -> requests.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}]}}}
    headers = {"A2A-Version": "1.0", **kwargs.pop("headers", {})}  # type: ignore[dict-item]
    return requests.post(url, json=body, headers=headers, timeout=10, **kwargs)  # type: ignore[arg-type]


def _reply(answer: requests.Response) -> str:
    assert answer.status_code == 200, answer.text
    text = answer.json()["result"]["task"]["artifacts"][0]["parts"][0]["text"]
    assert isinstance(text, str)
    return text


def test_the_token_and_signed_card_snippet(tmp_path: Path) -> None:
    pytest.importorskip("jwt")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())  # what the page's openssl line makes
    (tmp_path / "card-key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    with served(tmp_path, "recipe_intro", snippet("intro"), "app",
                "/.well-known/agent-card.json") as base:
        card = requests.get(base + "/.well-known/agent-card.json", timeout=10).json()
        assert card["signatures"][0]["protected"] and "bearer" in card["securitySchemes"]
        assert _send(base + "/", "hi").status_code == 401
        assert _reply(_send(base + "/", "hi", headers={"Authorization": "Bearer tok-alice"})) \
            == "hello, alice: hi"
        extended = requests.post(base + "/", timeout=10, json={
            "jsonrpc": "2.0", "id": 2, "method": "GetExtendedAgentCard"},
            headers={"A2A-Version": "1.0", "Authorization": "Bearer tok-bob"})
        assert extended.json()["result"]["name"] == "Members of bob"


def _flask_login(base: str) -> requests.Session:
    browser = requests.Session()
    answer = browser.post(base + "/login", data={"username": "alice", "password": PASSWORD},
                          timeout=10, allow_redirects=False)
    assert answer.status_code == 302 and "session" in browser.cookies, answer.text
    return browser


def _flask_token(base: str) -> str:
    answer = requests.post(base + "/token", data={"username": "alice", "password": PASSWORD},
                           timeout=10)
    token = answer.json()["token"]
    assert isinstance(token, str)
    return token


def test_the_flask_pattern_serves_its_card_so_a2a_client_works(tmp_path: Path) -> None:
    pytest.importorskip("flask_login")
    with served(tmp_path, "recipe_flask", snippet("flask"), "site",
                "/agent/.well-known/agent-card.json") as base:
        url = base + "/agent/"
        card = requests.get(url + ".well-known/agent-card.json", timeout=10).json()
        assert {face["url"] for face in card["supportedInterfaces"]} == {url}
        with A2AClient(url, auth=_flask_token(base)) as client:
            task = client.send_message("hi")
            assert task.artifacts[0].parts[0].text == "hello, user:alice: hi"  # type: ignore[union-attr]
        with A2AClient(url) as anonymous, pytest.raises(Exception, match="401"):
            anonymous.send_message("hi")
        browser = _flask_login(base)
        assert _reply(_send(url, "by session", cookies=browser.cookies)) == \
            "hello, user:alice: by session"


def test_the_flask_require_login_snippet(tmp_path: Path) -> None:
    pytest.importorskip("flask_login")
    with served(tmp_path, "recipe_members", snippet("members"), "site",
                "/members/.well-known/agent-card.json") as base:
        anonymous = _send(base + "/members/", "hi")
        assert anonymous.status_code == 401
        assert anonymous.headers["WWW-Authenticate"] == \
            'Cookie realm="a2a", cookie-name="session"'
        redirected = _send(base + "/portal/", "hi", allow_redirects=False)
        assert redirected.status_code == 302
        assert redirected.headers["Location"].startswith("/login?next=")
        browser = _flask_login(base)
        for mount in ("members", "portal"):
            assert _reply(_send(f"{base}/{mount}/", "hi", cookies=browser.cookies)) == \
                "hello, user:alice: hi"


def test_the_django_wsgi_pattern_loads_the_session_user(tmp_path: Path) -> None:
    pytest.importorskip("django")
    env = {"DJANGO_SITE_DB": str(tmp_path / "site.sqlite3")}
    # The example site's first start migrates its database and creates alice (user:1).
    subprocess.run([sys.executable, "-c", "import examples.django_site.wsgi"], cwd=ROOT,
                   env={**os.environ, **env, "DEMO_PASSWORD": PASSWORD}, check=True,
                   timeout=120, capture_output=True)
    with served(tmp_path, "recipe_django", snippet("django"), "application",
                "/agent/.well-known/agent-card.json", env) as base:
        url = base + "/agent/"
        refused = _send(url, "hi")
        assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith(
            "Bearer")
        browser = requests.Session()
        page = browser.get(base + "/accounts/login/", timeout=10)
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert csrf, page.text
        logged_in = browser.post(base + "/accounts/login/", timeout=10, allow_redirects=False,
                                 data={"username": "alice", "password": PASSWORD,
                                       "csrfmiddlewaretoken": csrf.group(1)})
        assert logged_in.status_code == 302, logged_in.text
        assert _reply(_send(url, "by session", cookies=browser.cookies)) == \
            "hello, user:1: by session"
        # The site's token is Django-signed ("MQ:1xZl79:..."): the app's own auth= reads it.
        token = requests.post(base + "/accounts/token/", timeout=10, data={
            "username": "alice", "password": PASSWORD}).json()["token"]
        assert token.count(":") == 2
        assert _reply(_send(url, "by token", headers={"Authorization": f"Bearer {token}"})) \
            == "hello, user:1: by token"


def test_without_a_card_route_only_a_pinned_client_reaches_the_agent() -> None:
    """What the page says of a view that routes the endpoint and not the card."""
    import flask
    from support.wsgi_server import Served

    from a2a_wsgi import A2AApp
    from a2a_wsgi.settings import ProtocolSettings
    from examples.caller_agent import CallerAgent

    a2a = A2AApp(CallerAgent(), protocol=ProtocolSettings(json_rpc_path="agent", rest_path=None))
    site = flask.Flask(__name__)
    site.add_url_rule("/agent/", "agent", lambda: a2a, methods=["POST"])
    served = Served(site)
    try:
        url = served.url + "/agent/"
        with A2AClient(url) as client, pytest.raises(Exception, match="404"):
            client.send_message("hi")
        with A2AClient(url, endpoint=url, version="1.0", binding="JSONRPC") as pinned:
            task = pinned.send_message("hi")
            assert task.artifacts[0].parts[0].text == "hello, anonymous: hi"  # type: ignore[union-attr]
    finally:
        served.stop()
        a2a.close()
