"""``a2a inspect`` stays on the origin the user typed, whatever the card says.

Two real servers on two loopback ports: the agent, whose card lists
interfaces on the other port, on a metadata address and under another name
for the same host; and a bystander that records every request it gets. The
bystander must see nothing unless ``--allow-origin`` names it, and then no
credential.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from a2a_client._inspect import MAX_CARD, main, start_inspector
from a2a_client._inspect_addresses import address_problem
from a2a_wsgi import serve

pytestmark = pytest.mark.slow

Start = Callable[..., Any]


class Bystander:
    """Another service on loopback: answers 200 and writes down every request it gets."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    def __call__(self, environ: dict[str, Any], start_response: Start) -> list[bytes]:
        self.seen.append({key: str(value) for key, value in environ.items()
                          if key.startswith("HTTP_") or key == "PATH_INFO"})
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
        return [b"{}"]


@pytest.fixture(scope="module")
def bystander() -> Iterator[tuple[str, Bystander]]:
    app = Bystander()
    with serve(app) as handle:
        yield handle.url, app


def greedy_agent(other: str) -> Callable[[dict[str, Any], Start], list[bytes]]:
    """An agent whose card points at the bystander, the metadata service and ``localhost``."""

    def app(environ: dict[str, Any], start_response: Start) -> list[bytes]:
        base = f"http://{environ['HTTP_HOST']}"
        port = environ["HTTP_HOST"].rsplit(":", 1)[1]
        if environ["PATH_INFO"] == "/.well-known/agent-card.json":
            rest = "HTTP+JSON"
            doc: Any = {"name": "Greedy", "url": base + "/rpc", "preferredTransport": "JSONRPC",
                        "supportedInterfaces": [
                            {"url": other + "/rpc", "protocolBinding": "JSONRPC"},
                            {"url": other + "/rest", "protocolBinding": rest},
                            {"url": "http://169.254.169.254/latest", "protocolBinding": rest},
                            {"url": f"http://localhost:{port}/rest", "protocolBinding": rest},
                        ]}
        else:
            doc = {"agent": environ["PATH_INFO"],
                   "authorization": environ.get("HTTP_AUTHORIZATION")}
        body = json.dumps(doc).encode()
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(body)))])
        return [body]

    return app


def proxied(origin: str, url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{origin}/proxy/{scheme}/{rest}"


CREDENTIALS = {"Authorization": "Bearer typed-into-the-page", "X-Api-Key": "k-123",
               "A2A-Version": "1.0", "Content-Type": "application/json"}


def test_the_cards_other_origins_are_refused_and_see_no_request(
        bystander: tuple[str, Bystander]) -> None:
    other, seen = bystander[0], bystander[1].seen
    seen.clear()
    with serve(greedy_agent(other)) as agent, start_inspector(agent.url + "/") as handle:
        origin = handle.url.removesuffix("/inspector/")
        card = requests.get(proxied(origin, agent.url + "/.well-known/agent-card.json"), timeout=5)
        assert card.status_code == 200  # the proxy has now read the card's interfaces
        port = agent.url.rsplit(":", 1)[1]
        for url in (other + "/rpc", other + "/rest/tasks", "http://169.254.169.254/latest/x",
                    f"http://localhost:{port}/rest/tasks"):
            response = requests.post(proxied(origin, url), data=b"{}", headers=CREDENTIALS,
                                     timeout=5)
            assert response.status_code == 403, url
            assert b"not the origin you named" in response.content, url
            assert b"--allow-origin" in response.content
        own = requests.post(proxied(origin, agent.url + "/rpc"), data=b"{}", headers=CREDENTIALS,
                            timeout=5)
        assert own.json() == {"agent": "/rpc", "authorization": "Bearer typed-into-the-page"}
    assert seen == []


def test_an_allowed_origin_gets_the_cards_interfaces_but_no_credentials(
        bystander: tuple[str, Bystander]) -> None:
    other, seen = bystander[0], bystander[1].seen
    seen.clear()
    with serve(greedy_agent(other)) as agent, \
            start_inspector(agent.url + "/", allow_origins=[other]) as handle:
        origin = handle.url.removesuffix("/inspector/")
        response = requests.post(proxied(origin, other + "/rest/tasks"), data=b"{}",
                                 headers=CREDENTIALS, timeout=5)
        assert response.status_code == 200
        # Allowed as an origin, yet only the URLs the card lists there.
        assert requests.post(proxied(origin, other + "/admin"), data=b"{}",
                             timeout=5).status_code == 403
        metadata = requests.post(proxied(origin, "http://169.254.169.254/latest/x"), timeout=5)
        assert metadata.status_code == 403
    assert [request["PATH_INFO"] for request in seen] == ["/rest/tasks"]
    assert seen[0]["HTTP_A2A_VERSION"] == "1.0"
    for credential in ("HTTP_AUTHORIZATION", "HTTP_X_API_KEY", "HTTP_COOKIE"):
        assert credential not in seen[0], credential


@pytest.mark.parametrize("argv", [
    ["http://169.254.169.254/"],
    ["http://[fd00:ec2::254]/"],
    ["http://127.0.0.1:9/", "--allow-origin", "http://[::ffff:169.254.169.254]"],
    ["http://127.0.0.1:9/", "--allow-origin", "http://127.0.0.1:8/path"],
], ids=["metadata", "metadata-v6", "mapped-link-local", "not-an-origin"])
def test_the_command_refuses_metadata_and_link_local_targets(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--no-open"]) == 2
    assert "a2a inspect:" in capsys.readouterr().err


def test_every_form_of_a_link_local_address_is_judged_as_itself() -> None:
    for text in ("169.254.1.2", "fe80::1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",
                 "fd00:ec2::254", "100.100.100.200", "0.0.0.0", "fe80::1%lo"):
        assert address_problem(text) is not None, text
    for text in ("127.0.0.1", "::1", "10.0.0.1", "93.184.216.34", "not-an-address"):
        assert address_problem(text) is None, text


class HugeCard:
    """An agent whose card never ends (hundreds of MB): counts what it managed to send."""

    def __init__(self) -> None:
        self.sent = 0

    def __call__(self, environ: dict[str, Any], start_response: Start) -> Iterator[bytes]:
        start_response("200 OK", [("Content-Type", "application/json")])
        chunk = b" " * 65536
        yield b'{"name": "huge", "pad": "'
        for _ in range(400 * 16):  # 400 MB
            self.sent += len(chunk)
            yield chunk
        yield b'"}'


def test_a_huge_card_is_not_read_whole_by_the_proxy_or_its_re_read() -> None:
    app = HugeCard()
    with serve(app) as agent, start_inspector(agent.url + "/") as handle:
        origin = handle.url.removesuffix("/inspector/")
        # A miss on the agent's origin re-reads the card: refused, and read no further.
        missed = requests.post(proxied(origin, agent.url + "/rpc"), data=b"{}", timeout=30)
        assert missed.status_code == 403
        through = requests.get(proxied(origin, agent.url + "/.well-known/agent-card.json"),
                               timeout=30)
        assert through.status_code == 502
        assert f"over {MAX_CARD} bytes".encode() in through.content
    # Both reads stopped after MAX_CARD; the rest is what socket buffers took.
    assert app.sent < 64 * 1024 * 1024
