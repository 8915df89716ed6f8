"""The card tells the truth about where it is served, and untrusted Hosts stay out of it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from support.a2a_http import Peer
from support.gunicorn import start_gunicorn
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.test import Client

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, put_base_url, reply
from a2a_wsgi._public_url import LOOPBACK_HOSTS, UntrustedHostError, normalize_hosts
from a2a_wsgi._public_url import request_base_url as base_url_of
from a2a_wsgi.settings import CardSettings

CARD = "/.well-known/agent-card.json"


class Echo(Agent):
    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return reply(message.text or "")


def _urls(response: Any) -> list[str]:
    return [i["url"] for i in response.get_json()["supportedInterfaces"]]


def _environ(host: str, **extra: str) -> dict[str, str]:
    return {"wsgi.url_scheme": "http", "HTTP_HOST": host, "SERVER_NAME": "x",
            "SERVER_PORT": "80", **extra}


@pytest.mark.parametrize("host, url", [
    ("127.0.0.1:9000", "http://127.0.0.1:9000/"),
    ("LOCALHOST:9001", "http://localhost:9001/"),
    ("[::1]:9002", "http://[::1]:9002/"),
    ("127.0.0.1:80", "http://127.0.0.1/"),
])
def test_loopback_hosts_are_trusted_by_default(host: str, url: str) -> None:
    assert base_url_of(_environ(host), LOOPBACK_HOSTS).lower() == url.lower()


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example:80", "", "a b",
                                  "localhost:99999"])
def test_other_hosts_are_not(host: str) -> None:
    with pytest.raises(UntrustedHostError, match="base_url=") as caught:
        base_url_of(_environ(host), LOOPBACK_HOSTS)
    assert "trusted_hosts" in str(caught.value) and "put_base_url" in str(caught.value)


def test_trusted_hosts_match_exactly_by_suffix_or_anything() -> None:
    hosts = normalize_hosts(["Agents.Example.com", ".corp.example", "[::2]"])
    assert hosts == ("agents.example.com", ".corp.example", "::2")
    assert base_url_of(_environ("agents.example.com"), hosts) == "http://agents.example.com/"
    assert base_url_of(_environ("a.b.corp.example:8443"), hosts) == "http://a.b.corp.example:8443/"
    assert base_url_of(_environ("corp.example"), hosts) == "http://corp.example/"
    with pytest.raises(UntrustedHostError):
        base_url_of(_environ("notcorp.example"), hosts)
    assert base_url_of(_environ("anything.example"), ("*",)) == "http://anything.example/"


def test_trusted_hosts_come_from_the_environment_when_not_given() -> None:
    assert normalize_hosts(None, {}) == LOOPBACK_HOSTS
    assert normalize_hosts(None, {"A2A_TRUSTED_HOSTS": "a.example, .b.example"}) == (
        "a.example", ".b.example")


def test_the_mount_point_and_scheme_are_kept() -> None:
    environ = _environ("127.0.0.1:8000", SCRIPT_NAME="/team a2a/")
    environ["wsgi.url_scheme"] = "https"
    assert base_url_of(environ, LOOPBACK_HOSTS) == "https://127.0.0.1:8000/team%20a2a/"


def test_a_card_request_with_an_untrusted_host_is_refused_and_rpc_still_works() -> None:
    app = A2AApp(Echo())
    client = Client(app)
    refused = client.get(CARD, headers={"Host": "evil.example"})
    assert refused.status_code == 400 and "base_url=" in refused.get_data(as_text=True)
    assert _urls(client.get(CARD, headers={"Host": "127.0.0.1:8123"})) == [
        "http://127.0.0.1:8123/", "http://127.0.0.1:8123/", "http://127.0.0.1:8123/rest"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    answer = client.post("/", json=body, headers={"Host": "evil.example",
                                                  "A2A-Version": "1.0"}).get_json()
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    app.close()


def test_explicit_urls_win_over_the_request() -> None:
    app = A2AApp(Echo(), base_url="https://agents.example/echo/")
    assert _urls(Client(app).get(CARD, headers={"Host": "evil.example"}))[0] == (
        "https://agents.example/echo/")

    def tenant(environ: dict[str, Any], start_response: Any) -> Any:
        put_base_url(environ, "https://tenant.example/")
        return app(environ, start_response)

    assert _urls(Client(tenant).get(CARD))[0] == "https://tenant.example/"
    app.close()


def test_behind_proxy_fix_the_forwarded_host_is_advertised_when_trusted() -> None:
    app = A2AApp(Echo(), card=CardSettings(trusted_hosts=("agents.example",)))
    proxied = ProxyFix(app, x_for=1, x_proto=1, x_host=1)
    headers = {"X-Forwarded-Host": "agents.example", "X-Forwarded-Proto": "https"}
    assert _urls(Client(proxied).get(CARD, headers=headers))[0] == "https://agents.example/"
    # Without ProxyFix the forwarded headers are ignored: the Host is what counts.
    assert Client(app).get(CARD, headers=headers).status_code == 400
    app.close()


def test_a_mounted_app_advertises_its_prefix() -> None:
    app = A2AApp(Echo())
    site = DispatcherMiddleware(lambda e, s: [], {"/a2a": app})
    response = Client(site).get("/a2a" + CARD, headers={"Host": "localhost:8000"})
    assert _urls(response)[0] == "http://localhost:8000/a2a/"
    app.close()


# -- the examples under real gunicorn, on a port that is not the default -------------------


@pytest.fixture()
def echo_on_a_port(tmp_path: Path) -> Iterator[Any]:
    with start_gunicorn("examples.echo:app", log_path=tmp_path / "gunicorn.log") as gunicorn:
        gunicorn.wait_ready()
        yield gunicorn


@pytest.mark.slow
def test_gunicorn_serving_the_echo_example_advertises_its_own_port(echo_on_a_port: Any) -> None:
    url = echo_on_a_port.url
    assert not url.endswith(":8000/")
    card = requests.get(url + CARD.lstrip("/"), timeout=5).json()
    assert {i["url"] for i in card["supportedInterfaces"]} == {url, url + "rest"}
    assert Peer(card["supportedInterfaces"][0]["url"]).send("hi")["status"]["state"] == (
        "TASK_STATE_COMPLETED")


@pytest.mark.slow
def test_the_flask_mount_under_two_workers_advertises_its_prefix_and_shares_tasks(
        tmp_path: Path) -> None:
    env = {"A2A_DB": str(tmp_path / "tasks.sqlite3")}
    with start_gunicorn("examples.flask_mount:app", log_path=tmp_path / "gunicorn.log",
                        env=env, workers=2) as gunicorn:
        card = _wait_json(gunicorn.url + "a2a" + CARD)  # the site's root is Flask's
        endpoint = card["supportedInterfaces"][0]["url"]
        assert endpoint == gunicorn.url + "a2a/"
        task = Peer(endpoint).send("hi", blocking=False)
        for _ in range(20):  # fresh connections reach both workers
            session = requests.Session()
            got = Peer(endpoint, session=session).rpc("get", {"id": task["id"]})
            session.close()
            assert got["result"]["id"] == task["id"], got


def _wait_json(url: str) -> Any:
    deadline = time.monotonic() + 30
    while True:
        try:
            return requests.get(url, timeout=5).json()
        except requests.RequestException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
