"""Every transport or HTTP failure of the ``a2a`` command is one line: what happened, what to try.

Real sockets throughout: a closed port, an unresolvable name, an agent behind a bearer
token, plain WSGI apps answering error statuses, one that answers too slowly.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from client_peers import Peer, card_v10
from support.wsgi_server import Served
from werkzeug.wrappers import Response

from a2a_client.cli import main
from a2a_core.models import AgentSkill
from a2a_wsgi import A2AApp, Agent, reply
from a2a_wsgi.auth import BearerAuthenticator


def run(capsys: Any, *argv: str) -> tuple[int, str]:
    """The exit code and stderr of one in-process ``a2a`` run (stdout must stay empty)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert out == ""
    return code, err


def one_line(err: str) -> str:
    assert err.startswith("a2a: ") and err.endswith("\n") and err.count("\n") == 1, err
    return err


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("url", ["localhost:8000", "127.0.0.1:8000/"])
def test_a_url_without_a_scheme_is_a_usage_error_that_shows_the_fix(
        capsys: Any, url: str) -> None:
    code, err = run(capsys, "card", url)
    assert code == 2
    assert f"try 'http://{url}'" in one_line(err)
    assert "connection adapters" not in err


def test_another_scheme_is_a_usage_error(capsys: Any) -> None:
    code, err = run(capsys, "card", "ftp://127.0.0.1/")
    assert code == 2 and "must be http or https" in one_line(err)


def test_connection_refused_names_the_host_and_asks_if_the_agent_runs(capsys: Any) -> None:
    port = closed_port()
    code, err = run(capsys, "card", f"http://127.0.0.1:{port}/")
    assert code == 5
    assert one_line(err) == (f"a2a: cannot connect to 127.0.0.1:{port}: connection refused; "
                             "is the agent running there?\n")


def test_an_unknown_host_name_says_check_the_url(capsys: Any) -> None:
    code, err = run(capsys, "card", "http://no-such-host.invalid/")
    assert code == 5 and "cannot resolve the host name in no-such-host.invalid" in one_line(err)
    assert "Max retries" not in err


@pytest.fixture
def serve() -> Iterator[Callable[[Any], str]]:
    """serve(wsgi_app) -> its base URL; every server stops at teardown."""
    servers: list[Served] = []

    def start(app: Any) -> str:
        servers.append(Served(app))
        return servers[-1].url

    yield start
    for served in servers:
        served.stop()


def _whoami(message: Any, context: Any) -> Any:
    return reply("hi")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_401_says_to_pass_a_token(serve: Callable[[Any], str], capsys: Any,
                                    binding: str) -> None:
    app = A2AApp(Agent.from_function(_whoami, name="Guarded",
                                     skills=[AgentSkill(id="w", name="w")]),
                 auth=BearerAuthenticator({"tok": "alice"}.get))
    try:
        url = serve(app) + "/"
        code, err = run(capsys, "send", url, "hello", "--binding", binding)
        assert code == 6
        line = one_line(err)
        assert line.startswith(f"a2a: HTTP 401 Unauthorized from {url}")
        assert "the agent wants Bearer credentials; pass --token TOKEN" in line
        assert len(line) < 300
        assert main(["send", url, "hello", "--binding", binding, "--token", "tok"]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == "hi"
    finally:
        app.close()


def _status(code: int, body: str, mimetype: str) -> Any:
    def app(environ: Any, start_response: Any) -> Any:
        return Response(body, status=code, mimetype=mimetype)(environ, start_response)
    return app


@pytest.mark.parametrize(("status", "body", "mimetype", "expected"), [
    (404, "<html><body>" + "x" * 500 + "</body></html>", "text/html",
     "HTTP 404 Not Found from {url}.well-known/agent-card.json: check the URL "
     "(the agent's base URL, or its card URL)"),
    (502, '{"error": {"message": "upstream down"}, "pad": "' + "y" * 400 + '"}',
     "application/json",
     "HTTP 502 Bad Gateway from {url}.well-known/agent-card.json (upstream down): "
     "the agent (or a proxy before it) failed"),
    (403, "no " * 100, "text/plain",
     "HTTP 403 Forbidden from {url}.well-known/agent-card.json (no no"),
])
def test_http_statuses_get_a_reason_and_a_next_step(
        serve: Callable[[Any], str], capsys: Any, status: int, body: str, mimetype: str,
        expected: str) -> None:
    url = serve(_status(status, body, mimetype)) + "/"
    code, err = run(capsys, "card", url)
    assert code == 6
    line = one_line(err)
    assert expected.format(url=url) in line
    assert len(line) < 300 and "xxxx" not in line and "yyyy" not in line


def test_a_read_timeout_suggests_a_larger_timeout(serve: Callable[[Any], str],
                                                  capsys: Any) -> None:
    release = threading.Event()

    def slow(environ: Any, start_response: Any) -> Any:
        release.wait(10)
        return Response("{}", mimetype="application/json")(environ, start_response)

    url = serve(slow) + "/"
    try:
        code, err = run(capsys, "card", url, "--timeout", "0.3")
    finally:
        release.set()
    assert code == 5 and "sent nothing for 0.3s" in one_line(err)
    assert "try a larger --timeout" in err


@pytest.mark.parametrize("url", ["http://", "https:///path", "http://:8000/"])
def test_a_url_without_a_host_says_so(capsys: Any, url: str) -> None:
    code, err = run(capsys, "send", url, "x")
    assert code == 2
    assert one_line(err) == (f"a2a: {url!r} names no host; give the agent's URL, "
                             "e.g. 'http://127.0.0.1:8000/'\n")


def test_a_failure_names_the_url_that_failed_not_the_card_url(
        serve: Callable[[Any], str], capsys: Any) -> None:
    """The card sends calls to another server (not an A2A one): its 501 names that URL."""
    elsewhere = serve(_status(501, "no POST here", "text/plain")) + "/rpc"
    peer = Peer(card=lambda url: card_v10(elsewhere))
    peer.url = serve(peer)
    code, err = run(capsys, "send", peer.url, "x")
    assert code == 6
    assert one_line(err).startswith(
        f"a2a: HTTP 501 Not Implemented from {elsewhere} (no POST here): the agent")
    assert peer.url not in err


def test_a_refused_token_says_it_was_refused(serve: Callable[[Any], str], capsys: Any) -> None:
    app = A2AApp(Agent.from_function(_whoami, name="Guarded",
                                     skills=[AgentSkill(id="w", name="w")]),
                 auth=BearerAuthenticator({"tok": "alice"}.get))
    try:
        url = serve(app) + "/"
        for given in (["--token", "wrong"], ["--header", "Authorization: Bearer wrong"]):
            code, err = run(capsys, "send", url, "hello", *given)
            assert code == 6
            line = one_line(err)
            assert line.startswith(f"a2a: HTTP 401 Unauthorized from {url}")
            assert "the agent refused the credentials given; check the token" in line
            assert "pass --token" not in line and "wrong" not in line
    finally:
        app.close()
