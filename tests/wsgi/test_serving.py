"""Per-request overrides, custom card routes, Flask and Django mounts, serve(), gunicorn."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import requests
from support.a2a_http import Peer, served, state_of, texts, user_message
from support.gunicorn import ServerProcess, free_port, gunicorn_argv

from a2a_core.models import AgentSkill, Message
from a2a_wsgi import (
    A2AApp,
    Agent,
    AgentContext,
    get_agent_card,
    get_base_url,
    get_identity,
    get_metadata,
    put_base_url,
    put_identity,
    put_metadata,
    reply,
)
from a2a_wsgi._cli import serve_main
from a2a_wsgi._serve import parse_addr, serve
from a2a_wsgi.settings import CardSettings, ProtocolSettings


class MetadataEcho(Agent):
    """Replies with the metadata it was given, so a test can see what reached the agent."""

    name = "Metadata Echo"
    skills = [AgentSkill(id="meta", name="Meta", description="Shows metadata")]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        meta = dict(ctx.metadata or {})
        return reply(" ".join(f"{k}={meta[k]}" for k in sorted(meta)))


def reply_text(task: dict[str, Any]) -> str:
    return texts(task["artifacts"][0]["parts"])[0]


# -- overrides ---------------------------------------------------------------------------


def test_override_helpers_round_trip() -> None:
    environ: dict[str, Any] = {}
    assert (get_base_url(environ), get_metadata(environ), get_identity(environ)) == (None,) * 3
    put_base_url(environ, "https://t1.example/a2a/")
    put_metadata(environ, {"a": 1})
    put_metadata(environ, {"b": 2, "a": 3})
    put_identity(environ, "alice")
    assert get_base_url(environ) == "https://t1.example/a2a/"
    assert get_metadata(environ) == {"a": 3, "b": 2}
    assert get_identity(environ) == "alice"
    with pytest.raises(ValueError):
        put_base_url(environ, "")


def tenant_middleware(app: A2AApp) -> Any:
    """A plain WSGI middleware: tenant from a header -> URL, metadata, identity."""

    def middleware(environ: dict[str, Any], start_response: Any) -> Any:
        tenant = environ.get("HTTP_X_TENANT")
        if tenant:
            put_base_url(environ, f"https://{tenant}.example/a2a/")
            put_metadata(environ, {"tenant": tenant, "layer": "request"})
            put_identity(environ, f"user-of-{tenant}")
        return app(environ, start_response)

    return middleware


def test_wsgi_middleware_overrides_url_metadata_and_identity() -> None:
    app = A2AApp(
        MetadataEcho(),
        base_url="https://default.example/",
        protocol=ProtocolSettings(metadata={"static": "yes", "layer": "static"}),
    )
    with served(tenant_middleware(app)) as handle:
        card_url = handle.url + "/.well-known/agent-card.json"
        plain = requests.get(card_url, timeout=5)
        tenant = requests.get(card_url, headers={"X-Tenant": "t1"}, timeout=5)
        assert plain.json()["supportedInterfaces"][0]["url"] == "https://default.example/"
        assert tenant.json()["supportedInterfaces"][0]["url"] == "https://t1.example/a2a/"
        assert plain.headers["ETag"] != tenant.headers["ETag"]
        peer = Peer(handle.url, "1.0")
        params = {"message": user_message("hi", "1.0"),
                  "metadata": {"layer": "params", "a2a.auth": "forged"}}
        response = peer.rpc("send", params, headers={"X-Tenant": "t1"})
        text = reply_text(response["result"]["task"])
    assert "static=yes" in text and "tenant=t1" in text and "layer=params" in text
    assert "forged" not in text and "user-of-t1" in text


def test_flask_before_request_and_custom_card_route() -> None:
    flask = pytest.importorskip("flask")
    a2a = A2AApp(
        MetadataEcho(),
        card=CardSettings(path=None),
        protocol=ProtocolSettings(json_rpc_path="agent"),
    )
    site = flask.Flask("site")

    @site.before_request
    def tenant() -> None:
        put_metadata(flask.request.environ, {"tenant": "flask"})
        put_base_url(flask.request.environ, flask.request.host_url)

    @site.post("/agent/")
    def agent_endpoint() -> Any:
        return a2a  # Flask calls a returned WSGI app with the request environ

    @site.get("/card.json")
    def card() -> Any:
        status, headers, body = get_agent_card(a2a, flask.request.environ)
        return flask.Response(body, status=int(status.split()[0]), headers=headers)

    with served(site) as handle:
        card_response = requests.get(handle.url + "/card.json", timeout=5)
        assert card_response.json()["supportedInterfaces"][0]["url"] == handle.url + "/agent/"
        cached = requests.get(handle.url + "/card.json", timeout=5,
                              headers={"If-None-Match": card_response.headers["ETag"]})
        assert cached.status_code == 304
        task = Peer(handle.url + "/agent", "1.0").send("hi")
    assert reply_text(task) == "tenant=flask"


def test_flask_mount_example_serves_under_the_prefix() -> None:
    from examples import flask_mount

    with served(flask_mount.app) as handle:
        assert "Flask" in requests.get(handle.url + "/", timeout=5).text
        put_url = handle.url + "/a2a/"
        flask_mount.a2a_app.base_url = put_url
        card = requests.get(handle.url + "/a2a/.well-known/agent-card.json", timeout=5).json()
        assert card["supportedInterfaces"][0]["url"] == put_url
        task = Peer(put_url, "0.3").send("mounted")
        assert reply_text(task) == "mounted"
        root_card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5)
        assert root_card.status_code == 404


def test_django_mount_example_serves_under_the_prefix() -> None:
    pytest.importorskip("django")
    from examples import django_mount

    with served(django_mount.application) as handle:
        assert "Django" in requests.get(handle.url + "/", timeout=5).text
        django_mount.a2a_app.base_url = handle.url + "/a2a/"
        card = requests.get(handle.url + "/a2a/.well-known/agent-card.json", timeout=5)
        assert card.json()["supportedInterfaces"][0]["url"] == handle.url + "/a2a/"
        peer = Peer(handle.url + "/a2a/", "1.0")
        task = peer.send("via django")
        assert reply_text(task) == "via django" and state_of(task) == "completed"


# -- serve() and the command line --------------------------------------------------------


@pytest.mark.parametrize(("addr", "expected"), [
    ("127.0.0.1:0", ("127.0.0.1", 0)),
    (":8080", ("127.0.0.1", 8080)),
    ("8080", ("127.0.0.1", 8080)),
    ("0.0.0.0:9", ("0.0.0.0", 9)),
    ("[::1]:80", ("::1", 80)),
    ("host:with:colons:81", ("host:with:colons", 81)),
])
def test_parse_addr(addr: str, expected: tuple[str, int]) -> None:
    assert parse_addr(addr) == expected


@pytest.mark.parametrize("addr", ["host:", "host:http", "host:70000"])
def test_parse_addr_rejects(addr: str) -> None:
    with pytest.raises(ValueError):
        parse_addr(addr)


def test_serve_handle_advertises_the_request_url_and_frees_the_port() -> None:
    app = A2AApp(MetadataEcho())
    handle = serve(app, "0.0.0.0:0")
    try:
        assert handle.url == f"http://127.0.0.1:{handle.port}" and handle.port > 0
        assert app.base_url is None  # the card says where each request came in
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
        assert card["supportedInterfaces"][0]["url"] == handle.url + "/"
        local = f"http://localhost:{handle.port}"
        card = requests.get(local + "/.well-known/agent-card.json", timeout=5).json()
        assert card["supportedInterfaces"][0]["url"] == local + "/"
    finally:
        handle.stop()
        app.close()
    handle.close()  # idempotent
    with socket.socket() as sock:
        # SO_REUSEADDR: connections the server closed may sit in TIME_WAIT, but Linux still
        # refuses the bind while any socket listens on the port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("0.0.0.0", handle.port))  # the port is free again


def test_serve_main_rejects_bad_targets(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve_main(["serve", "no_colon_here"]) == 2
    assert serve_main(["examples.echo:app", "--bind", "host:http"]) == 2
    assert "HOST:PORT" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("how", ["gunicorn", "a2a-serve"])
def test_gunicorn_serves_the_echo_example(how: str, tmp_path: Path) -> None:
    port = free_port()
    bind = f"127.0.0.1:{port}"
    if how == "gunicorn":
        argv = gunicorn_argv("examples.echo:app", port=port, threads=4, graceful_timeout=None)
    else:
        argv = [sys.executable, "-m", "a2a_wsgi._cli", "serve", "examples.echo:app",
                "--bind", bind, "--threads", "4"]
    env = {"A2A_BASE_URL": f"http://{bind}/"}
    with ServerProcess(argv, port=port, log_path=tmp_path / "server.log", env=env) as server:
        assert server.wait_ready().json()["name"] == "Echo Agent"
        peer = Peer(server.url, "1.0")
        assert reply_text(peer.send("over gunicorn")) == "over gunicorn"
        message = {"message": user_message("streamed", "1.0")}
        with peer.stream("stream", message) as (response, events):
            assert response.headers["Content-Type"].startswith("text/event-stream")
            assert "task" in next(iter(events)).data["result"]


@pytest.mark.parametrize("version", ["0.3", "1.0"])
def test_calc_example_adds_and_asks_when_there_are_no_numbers(version: str) -> None:
    from examples.calc import CalcAgent

    with served(A2AApp(CalcAgent())) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
        assert card["name"] == "Calc Agent" and card["skills"][0]["id"] == "calc"
        peer = Peer(handle.url, version)
        assert reply_text(peer.send("add 2 and 3")) == "The sum is 5."
        asked = peer.send("add them please")
        assert state_of(asked) == "input-required"
        done = peer.send("1.5 and 2", task_id=asked["id"], context_id=asked["contextId"])
        assert reply_text(done) == "The sum is 3.5."


def test_tck_agent_keeps_tasks_working_and_cancels() -> None:
    from examples.tck_agent import ConformanceAgent

    with served(A2AApp(ConformanceAgent(), base_url="http://localhost:9999/")) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
        assert card["supportedInterfaces"][0]["url"] == "http://localhost:9999/"
        assert card["capabilities"]["streaming"] is True
        peer = Peer(handle.url, "1.0")
        task = peer.send("Hello from TCK!")
        assert state_of(task) == "working"
        again = peer.send("more", task_id=task["id"], context_id=task["contextId"])
        assert again["id"] == task["id"] and state_of(again) == "working"
        assert state_of(peer.rpc("cancel", {"id": task["id"]})["result"]) == "canceled"
