"""``a2a inspect``: the page and the proxy, against a separately served agent, over real HTTP.

The agent (the echo example plus ``hang`` and ``count:N``) runs on its own
port with ``a2a_wsgi.serve``; the inspector runs as ``python -m
a2a_client._inspect`` in a child process, or in this process with
:func:`a2a_client._inspect.start_inspector`. Everything goes over sockets
with plain ``requests``.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
import requests
from inspector_support import ROOT, new_agent_app
from support.processes import stop

from a2a_client._inspect import main, start_inspector
from a2a_wsgi import A2AApp, serve

pytestmark = pytest.mark.slow


class Recorder:
    """WSGI middleware: notes each request's headers, adds headers a proxy must not pass on."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self.requests: list[dict[str, str]] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        self.requests.append({key: str(value) for key, value in environ.items()
                              if key.startswith("HTTP_") or key == "PATH_INFO"})

        def start(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
            extra = [("Set-Cookie", "tracker=1"), ("Keep-Alive", "timeout=5"),
                     ("X-Agent-Header", "kept")]
            return start_response(status, [*headers, *extra], *rest)

        return self.app(environ, start)


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, Recorder, A2AApp]]:
    app = new_agent_app()
    recorder = Recorder(app)
    with serve(recorder) as handle:
        yield handle.url, recorder, app
    app.close()


@pytest.fixture()
def inspector(agent: tuple[str, Recorder, A2AApp]) -> Iterator[str]:
    """A fresh in-process inspector (it has read no card yet); its origin."""
    with start_inspector(agent[0] + "/") as handle:
        yield handle.url.removesuffix("/inspector/")


def proxied(inspector: str, url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{inspector}/proxy/{scheme}/{rest}"


def rpc(inspector: str, agent_url: str, method: str, params: Any, *,
        version: str | None = "1.0", **kwargs: Any) -> requests.Response:
    headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
    if version:
        headers["A2A-Version"] = version
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return requests.post(proxied(inspector, agent_url + "/"), data=json.dumps(body),
                         headers=headers, timeout=kwargs.pop("timeout", 10), **kwargs)


def raw_post(origin: str, path: str) -> tuple[int, bytes]:
    """POST ``path`` exactly as written (no client-side normalization)."""
    host = origin.removeprefix("http://")
    connection = http.client.HTTPConnection(host, timeout=5)
    try:
        connection.request("POST", path, body=b"{}", headers={"Host": host})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def message(text: str) -> dict[str, Any]:
    return {"message": {"role": "ROLE_USER", "messageId": f"m-{time.monotonic_ns()}",
                        "parts": [{"text": text}]}}


def cancel_working_tasks(agent_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks",
            "params": {"status": "TASK_STATE_WORKING"}}
    listed = requests.post(agent_url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=10)
    for task in listed.json()["result"]["tasks"]:
        requests.post(agent_url + "/", headers={"A2A-Version": "1.0"}, timeout=10, json={
            "jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task["id"]}})


# -- the command -------------------------------------------------------------------------


def test_python_m_a2a_client_inspect_serves_the_page_and_stops_on_ctrl_c(
        agent: tuple[str, Recorder, A2AApp]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "a2a_client._inspect", agent[0] + "/", "--no-open", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.startswith(f"A2A inspector for {agent[0]}/ at http://127.0.0.1:"), line
        page = line.split(" at ", 1)[1].split()[0]
        assert page.endswith("/inspector/")
        response = requests.get(page, timeout=5)
        assert response.status_code == 200 and b"A2A Inspector" in response.content
        assert response.headers["Content-Security-Policy"].startswith("default-src 'self';")
        config = requests.get(page + "config.json", timeout=5).json()
        assert config == {"agentUrl": agent[0] + "/",
                          "cardUrl": agent[0] + "/.well-known/agent-card.json",
                          "proxy": "/proxy/"}
        card = requests.get(proxied(page.removesuffix("/inspector/"), config["cardUrl"]), timeout=5)
        assert card.json()["name"] == "Echo Agent"
        _, err = stop(child, signal.SIGINT)
        assert child.returncode == 0, err
    finally:
        stop(child, signal.SIGKILL, grace=5)


def test_the_command_refuses_a_url_that_is_not_http(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ftp://example.com/", "--no-open"]) == 2
    assert "not an http(s) URL" in capsys.readouterr().err
    assert main(["--no-open"]) == 2


def test_the_root_leads_to_the_page(inspector: str) -> None:
    response = requests.get(inspector + "/", allow_redirects=False, timeout=5)
    assert response.status_code == 302 and response.headers["Location"] == "/inspector/"


# -- forwarding --------------------------------------------------------------------------


def test_the_card_comes_through_with_its_validators_and_variants(
        agent: tuple[str, Recorder, A2AApp], inspector: str) -> None:
    card_url = agent[0] + "/.well-known/agent-card.json"
    for headers in ({}, {"A2A-Version": "1.0"}):
        direct = requests.get(card_url, headers=headers, timeout=5)
        through = requests.get(proxied(inspector, card_url), headers=headers, timeout=5)
        assert through.status_code == 200
        assert through.content == direct.content
        assert through.headers["ETag"] == direct.headers["ETag"]
        assert through.headers["Cache-Control"] == direct.headers["Cache-Control"]
        again = requests.get(proxied(inspector, card_url), timeout=5,
                             headers={**headers, "If-None-Match": direct.headers["ETag"]})
        assert again.status_code == 304


def test_a_call_goes_through_before_the_card_was_read(
        agent: tuple[str, Recorder, A2AApp], inspector: str) -> None:
    response = rpc(inspector, agent[0], "SendMessage", message("through the proxy"))
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "through the proxy"}]
    legacy = rpc(inspector, agent[0], "message/send", {"message": {
        "kind": "message", "role": "user", "messageId": "m-03",
        "parts": [{"kind": "text", "text": "old"}]}}, version=None)
    assert legacy.json()["result"]["status"]["state"] == "completed"


def test_a_stream_arrives_event_by_event(agent: tuple[str, Recorder, A2AApp],
                                         inspector: str) -> None:
    body = {"jsonrpc": "2.0", "id": 7, "method": "SendStreamingMessage",
            "params": message("count:6")}
    arrivals: list[tuple[float, str]] = []
    with requests.post(proxied(inspector, agent[0] + "/"), json=body, stream=True, timeout=10,
                       headers={"A2A-Version": "1.0", "Accept": "text/event-stream"}) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        assert "Content-Length" not in response.headers
        for line in response.iter_lines(chunk_size=1, decode_unicode=True):
            if line.startswith("data:"):
                arrivals.append((time.monotonic(), line))
    events = [json.loads(line[5:])["result"] for _, line in arrivals]
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    chunks = [e for e in events if "artifactUpdate" in e]
    assert len(chunks) == 6
    # Six chunks 0.15 s apart: the first reached us long before the last (not buffered).
    assert arrivals[-1][0] - arrivals[1][0] > 0.5


def test_hop_by_hop_cookie_and_fetch_headers_stay_behind(
        agent: tuple[str, Recorder, A2AApp], inspector: str) -> None:
    recorder = agent[1]
    recorder.requests.clear()
    response = rpc(inspector, agent[0], "GetTask", {"id": "nope"}, headers={
        "Authorization": "Bearer secret", "X-Custom": "yes", "Cookie": "inspector=1",
        "Connection": "keep-alive, X-Hop-Only", "X-Hop-Only": "1", "Keep-Alive": "timeout=3",
        "Sec-Fetch-Mode": "cors", "Referer": "http://127.0.0.1/inspector/",
    })
    assert response.json()["error"]["code"] == -32001
    seen = recorder.requests[-1]
    assert seen["HTTP_AUTHORIZATION"] == "Bearer secret"
    assert seen["HTTP_X_CUSTOM"] == "yes"
    assert seen["HTTP_A2A_VERSION"] == "1.0"
    assert seen["HTTP_ACCEPT_ENCODING"] == "identity"
    for dropped in ("HTTP_COOKIE", "HTTP_X_HOP_ONLY", "HTTP_KEEP_ALIVE", "HTTP_SEC_FETCH_MODE",
                    "HTTP_REFERER", "HTTP_ORIGIN"):
        assert dropped not in seen, dropped
    assert response.headers["X-Agent-Header"] == "kept"
    assert "Set-Cookie" not in response.headers
    assert "Keep-Alive" not in response.headers


def handmade_agent(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """A card listing every kind of interface; any other path answers what it was sent."""
    base = f"http://{environ['HTTP_HOST']}"
    if environ["PATH_INFO"] == "/.well-known/agent-card.json":
        doc: dict[str, Any] = {
            "name": "Handmade", "url": base + "/legacy", "preferredTransport": "JSONRPC",
            "additionalInterfaces": [{"url": base + "/v03rest", "transport": "HTTP+JSON"}],
            "supportedInterfaces": [
                {"url": base + "/rest/", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": base + "/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            ]}
    else:
        doc = {"rawUri": environ.get("RAW_URI"), "method": environ["REQUEST_METHOD"]}
    body = json.dumps(doc).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]


@pytest.fixture(scope="module")
def handmade() -> Iterator[str]:
    with serve(handmade_agent) as handle:
        yield handle.url


def test_each_interface_binding_opens_its_own_urls(handmade: str) -> None:
    with start_inspector(handmade + "/") as handle:
        origin = handle.url.removesuffix("/inspector/")
        allowed = ["/rest", "/rest/", "/rest/tasks/t-1:cancel", "/legacy", "/legacy/",
                   "/v03rest/v1/tasks"]
        for path in allowed:
            response = requests.post(proxied(origin, handmade + path), data=b"{}", timeout=5)
            assert response.status_code == 200, path
            assert response.json() == {"rawUri": path, "method": "POST"}
        for path in ["/restless", "/legacy/x", "/grpc", "/"]:
            response = requests.post(proxied(origin, handmade + path), data=b"{}", timeout=5)
            assert response.status_code == 403, path


def test_escapes_in_the_path_and_query_reach_the_agent_unchanged(handmade: str) -> None:
    with start_inspector(handmade + "/") as handle:
        origin = handle.url.removesuffix("/inspector/")
        sent = "/rest/tasks/a%2Fb%20c?historyLength=2&pageToken=x%2By"
        response = requests.get(proxied(origin, handmade + sent), timeout=5)
        assert response.json() == {"rawUri": sent, "method": "GET"}


# -- refusals ----------------------------------------------------------------------------


def test_targets_other_than_the_agents_own_urls_are_refused(
        agent: tuple[str, Recorder, A2AApp], inspector: str) -> None:
    base = agent[0]
    port = base.rsplit(":", 1)[1]
    for url in (f"{base}/admin", f"{base}/.well-known/other.json",
                f"http://user@127.0.0.1:{port}/"):
        response = requests.post(proxied(inspector, url), data=b"{}", timeout=5)
        assert response.status_code == 403, url
        assert b"not one of the agent's URLs" in response.content
    for url in ("http://example.com/", f"http://localhost:{port}/"):
        response = requests.post(proxied(inspector, url), data=b"{}", timeout=5)
        assert response.status_code == 403, url
        assert b"not the origin you named" in response.content
    # Dot segments, sent as they are (requests would resolve them first).
    for path in ("/x/../", "/x/%2e%2e/", "/./", "/.well-known/./agent-card.json"):
        status, body = raw_post(inspector, proxied("", base + path))
        assert status == 403, path
        assert b"not one of the agent's URLs" in body
    assert requests.get(f"{inspector}/proxy/ftp/example.com/", timeout=5).status_code == 404
    assert requests.get(f"{inspector}/proxy/", timeout=5).status_code == 404


@pytest.mark.parametrize("headers", [
    {"Host": "attacker.example"},
    {"Origin": "http://attacker.example"},
    {"Sec-Fetch-Site": "cross-site"},
], ids=["rebound-host", "foreign-origin", "cross-site-fetch"])
def test_requests_not_from_the_inspector_page_are_refused(
        agent: tuple[str, Recorder, A2AApp], inspector: str, headers: dict[str, str]) -> None:
    for path in ("/inspector/", "/inspector/config.json"):
        assert requests.get(inspector + path, headers=headers, timeout=5).status_code == 403
    response = rpc(inspector, agent[0], "GetTask", {"id": "x"}, headers=headers)
    assert response.status_code == 403


def test_the_pages_own_requests_are_accepted(agent: tuple[str, Recorder, A2AApp],
                                             inspector: str) -> None:
    own = {"Origin": inspector, "Sec-Fetch-Site": "same-origin"}
    assert rpc(inspector, agent[0], "GetTask", {"id": "x"}, headers=own).status_code == 200


def test_a_silent_agent_times_out_and_a_missing_one_is_a_bad_gateway(
        agent: tuple[str, Recorder, A2AApp]) -> None:
    with start_inspector(agent[0] + "/", timeout=1.0) as handle:
        origin = handle.url.removesuffix("/inspector/")
        started = time.monotonic()
        response = rpc(origin, agent[0], "SendMessage", message("hang"))
        assert response.status_code == 504
        assert time.monotonic() - started < 8
        assert b"did not answer" in response.content
    cancel_working_tasks(agent[0])
    stopped = new_agent_app()
    with serve(stopped) as gone:
        url = gone.url
    stopped.close()
    with start_inspector(url + "/") as handle:
        origin = handle.url.removesuffix("/inspector/")
        response = requests.get(proxied(origin, url + "/.well-known/agent-card.json"), timeout=10)
        assert response.status_code == 502
        assert b"could not reach the agent" in response.content
