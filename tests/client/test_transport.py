"""Transport: ${VAR} expansion, timeouts and connection errors, our redirect rules."""

from __future__ import annotations

import json
import socket
import string
import time
from typing import Any

import pytest
import requests
from client_peers import Peer, task_json
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.wrappers import Request, Response

from a2a_client import A2AClient
from a2a_client._errors import ConnectError, ReadTimeout, TimeoutException, TransportError
from a2a_client._transport import Transport, expand_headers, origin

# -- ${VAR} expansion --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Bearer ${TOKEN}", "Bearer s3cret"),
        ("${TOKEN}${TOKEN}", "s3crets3cret"),
        ("${MISSING}", ""),  # the seed: unknown variables expand to ""
        ("$TOKEN", "$TOKEN"),  # only the braced form expands
        ("${TOKEN", "${TOKEN"),
        ("${1X}", "${1X}"),  # not a variable name
        ("plain", "plain"),
    ],
)
def test_expand_headers_table(template: str, expected: str) -> None:
    assert expand_headers({"X": template}, {"TOKEN": "s3cret"}) == {"X": expected}


_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
_safe_text = st.text(alphabet=string.ascii_letters + string.digits + " -_./", max_size=12)


@settings(max_examples=50)
@given(prefix=_safe_text, name=_names, value=_safe_text, suffix=_safe_text)
def test_expansion_leaves_no_placeholder(prefix: str, name: str, value: str, suffix: str) -> None:
    out = expand_headers({"H": f"{prefix}${{{name}}}{suffix}"}, {name: value})["H"]
    assert out == f"{prefix}{value}{suffix}"
    assert "${" not in out


@pytest.mark.parametrize("bad", ["a\r\nX-Evil: 1", "a\nb", "a\0b"])
def test_expansion_refuses_header_injection_and_names_only_the_header(bad: str) -> None:
    with pytest.raises(ValueError) as caught:
        expand_headers({"Authorization": "Bearer ${T}"}, {"T": bad})
    assert "Authorization" in str(caught.value)
    assert bad not in str(caught.value)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("http://h/x", "http://h:80/y", True),
        ("https://h/x", "https://H:443/", True),
        ("http://h/x", "https://h/x", False),
        ("http://h:8000/", "http://h:8001/", False),
        ("http://a/", "http://b/", False),
    ],
)
def test_origin(a: str, b: str, same: bool) -> None:
    assert (origin(a) == origin(b)) is same


def test_transport_repr_shows_header_names_only() -> None:
    transport = Transport(headers={"Authorization": "Bearer literal-secret"})
    assert "literal-secret" not in repr(transport)
    assert "Authorization" in repr(transport)
    transport.close()


# -- errors and timeouts ------------------------------------------------------------------


def _closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


def test_connection_refused_is_connect_error_from_requests() -> None:
    client = A2AClient(f"http://127.0.0.1:{_closed_port()}", timeout=(1, 1))
    with pytest.raises(ConnectError) as caught:
        client.get_card()
    assert isinstance(caught.value.__cause__, requests.exceptions.ConnectionError)
    client.close()


def test_stalling_server_raises_read_timeout_not_a_hang(peer: Peer) -> None:
    def stall(call: Any) -> Any:
        peer.gate.wait(5)
        return task_json("t1")

    peer.handlers["GetTask"] = stall
    client = A2AClient(peer.url, timeout=(1, 0.3))
    started = time.monotonic()
    with pytest.raises(ReadTimeout) as caught:
        client.get_task("t1")
    assert time.monotonic() - started < 3
    assert isinstance(caught.value, TimeoutException)
    assert isinstance(caught.value.__cause__, requests.exceptions.ReadTimeout)
    client.close()


def test_per_call_timeout_overrides_the_default(peer: Peer) -> None:
    def slow(call: Any) -> Any:
        time.sleep(0.4)
        return task_json("t1")

    peer.handlers["GetTask"] = slow
    with A2AClient(peer.url, timeout=(1, 0.1)) as client:
        assert client.get_task("t1", timeout=(1, 3)).id == "t1"
        with pytest.raises(ReadTimeout):
            client.get_task("t1")


def test_timeouts_must_be_finite() -> None:
    with pytest.raises(ValueError):
        A2AClient("http://127.0.0.1:1", timeout=(None, 5))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        A2AClient("http://127.0.0.1:1", timeout=0)


# -- redirects -----------------------------------------------------------------------------


class Recorder:
    """Records every request's headers and answers a fixed result."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        self.seen.append({k.lower(): v for k, v in request.headers.items()})
        body = request.get_json(silent=True) or {}
        result = {"jsonrpc": "2.0", "id": body.get("id"), "result": task_json("t1")}
        return Response(json.dumps(result), mimetype="application/json")(environ, start_response)


class Redirector:
    """Answers every request with a redirect to ``target`` + the same path."""

    def __init__(self, status: int = 307) -> None:
        self.target = ""
        self.status = status
        self.seen: list[dict[str, str]] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        self.seen.append({k.lower(): v for k, v in request.headers.items()})
        response = Response(status=self.status, headers={"Location": self.target + request.path})
        return response(environ, start_response)


def test_cross_origin_redirect_drops_custom_and_session_headers(
    serve: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("A2A_TEST_TOKEN", "tok-123")
    other = Recorder()
    other_url = serve(other).url
    redirector = Redirector(307)
    here = serve(redirector).url
    redirector.target = other_url
    session = requests.Session()
    session.headers["X-Session-Secret"] = "session-secret"
    client = A2AClient(
        here,
        session=session,
        version="1.0",
        endpoint=here + "/rpc",
        headers={"Authorization": "Bearer ${A2A_TEST_TOKEN}", "X-API-Key": "key-${A2A_TEST_TOKEN}"},
    )
    assert client.get_task("t1").id == "t1"
    first, moved = redirector.seen[0], other.seen[0]
    assert first["authorization"] == "Bearer tok-123" and first["x-api-key"] == "key-tok-123"
    assert first["x-session-secret"] == "session-secret"
    for name in ("authorization", "x-api-key", "x-session-secret"):
        assert name not in moved
    assert moved["a2a-version"] == "1.0"  # protocol headers still travel
    client.close()
    session.close()


def test_same_origin_redirect_keeps_headers(serve: Any) -> None:
    class SameOrigin(Recorder):
        def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
            if environ["PATH_INFO"] == "/old":
                return Response(status=308, headers={"Location": "/new"})(environ, start_response)
            return super().__call__(environ, start_response)

    app = SameOrigin()
    url = serve(app).url
    with A2AClient(url, version="0.3", endpoint=url + "/old", headers={"X-API-Key": "k"}) as client:
        assert client.get_task("t1").id == "t1"
    assert app.seen[-1]["x-api-key"] == "k"


def test_redirect_loop_is_bounded(serve: Any) -> None:
    loop = Redirector(302)
    url = serve(loop).url
    loop.target = url
    with A2AClient(url, version="1.0", endpoint=url + "/x") as client:
        with pytest.raises(TransportError, match="redirects"):
            client.get_task("t1")
    assert len(loop.seen) == 6  # the first request plus five redirects
