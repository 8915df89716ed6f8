"""Bad input over real HTTP: the exact JSON-RPC code, nothing stored, the server still answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.a2a_http import Peer, served, user_message

from a2a_wsgi import A2AApp
from a2a_wsgi.settings import LimitSettings
from examples.echo import EchoAgent

LIMIT = 8192


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with served(A2AApp(
        EchoAgent(),
        limits=LimitSettings(max_body_bytes=LIMIT, max_json_depth=32),
    )) as handle:
        yield handle


def envelope(method: str, params: Any = None, **extra: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, **extra}
    if params is not None:
        body["params"] = params
    return body


def send_03(message: Any) -> dict[str, Any]:
    return envelope("message/send", {"message": message})


def send_10(message: Any) -> dict[str, Any]:
    return envelope("SendMessage", {"message": message})


def msg_03(**changes: Any) -> dict[str, Any]:
    return {**user_message("hi", "0.3"), **changes}


def msg_10(**changes: Any) -> dict[str, Any]:
    return {**user_message("hi", "1.0"), **changes}


def without(d: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != key}


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


# (id, version, body, expected code). body: bytes sent as is, or JSON.
CASES: list[tuple[str, str, Any, int]] = [
    ("malformed json", "1.0", b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700),
    ("not utf-8", "1.0", b"\xff\xfe{}", -32700),
    ("empty body", "1.0", b"", -32700),
    ("array envelope", "1.0", b"[]", -32600),
    ("string envelope", "1.0", b'"SendMessage"', -32600),
    ("jsonrpc 1.0", "1.0", {**send_10(msg_10()), "jsonrpc": "1.0"}, -32600),
    ("missing method", "1.0", without(send_10(msg_10()), "method"), -32600),
    ("method not a string", "1.0", {**send_10(msg_10()), "method": 5}, -32600),
    ("id an object", "1.0", {**send_10(msg_10()), "id": {"a": 1}}, -32600),
    ("unknown method", "1.0", envelope("tasks/explode", {}), -32601),
    ("unknown 1.0-style method", "1.0", envelope("ExplodeTask", {}), -32601),
    ("message missing", "1.0", envelope("SendMessage", {}), -32602),
    ("message not an object", "1.0", envelope("SendMessage", {"message": "hi"}), -32602),
    ("missing messageId 1.0", "1.0", send_10(without(msg_10(), "messageId")), -32602),
    ("missing messageId 0.3", "0.3", send_03(without(msg_03(), "messageId")), -32602),
    ("missing role", "1.0", send_10(without(msg_10(), "role")), -32602),
    ("bad role", "1.0", send_10(msg_10(role="ROLE_ROBOT")), -32602),
    ("agent role 1.0", "1.0", send_10(msg_10(role="ROLE_AGENT")), -32602),
    ("agent role 0.3", "0.3", send_03(msg_03(role="agent")), -32602),
    ("agent role, streaming 1.0", "1.0",
     envelope("SendStreamingMessage", {"message": msg_10(role="ROLE_AGENT")}), -32602),
    ("agent role, streaming 0.3", "0.3",
     envelope("message/stream", {"message": msg_03(role="agent")}), -32602),
    ("empty parts 1.0", "1.0", send_10(msg_10(parts=[])), -32602),
    ("empty parts 0.3", "0.3", send_03(msg_03(parts=[])), -32602),
    ("parts not a list", "1.0", send_10(msg_10(parts={"text": "hi"})), -32602),
    ("unknown part kind 0.3", "0.3", send_03(msg_03(parts=[{"kind": "video", "x": 1}])), -32602),
    ("unknown part shape 1.0", "1.0", send_10(msg_10(parts=[{"video": "x"}])), -32602),
    ("text not a string", "1.0", send_10(msg_10(parts=[{"text": 5}])), -32602),
    ("too many parts", "1.0", send_10(msg_10(parts=[{"text": "p"}] * 300)), -32602),
    ("negative historyLength", "1.0", envelope("GetTask", {"id": "t", "historyLength": -1}),
     -32602),
    ("negative historyLength 0.3", "0.3", envelope("tasks/get", {"id": "t", "historyLength": -1}),
     -32602),
    ("task id not a string", "1.0", envelope("GetTask", {"id": 12}), -32602),
    ("pageSize 0", "1.0", envelope("ListTasks", {"pageSize": 0}), -32602),
    ("pageSize 101", "1.0", envelope("ListTasks", {"pageSize": 101}), -32602),
    ("unknown status", "1.0", envelope("ListTasks", {"status": "TASK_STATE_NAPPING"}), -32602),
    ("bad timestamp", "1.0", envelope("ListTasks", {"statusTimestampAfter": "yesterday"}), -32602),
    ("unknown pageToken", "1.0", envelope("ListTasks", {"pageToken": "no-such-token"}), -32602),
    ("deep nesting", "1.0", send_10(msg_10(metadata=nested(40))), -32700),
    ("oversize by Content-Length", "1.0", send_10(msg_10(parts=[{"text": "x" * LIMIT}])), -32600),
    ("pre-0.3 part type 0.3", "0.3", send_03(msg_03(parts=[{"type": "video", "text": "x"}])),
     -32602),
    ("no id 1.0", "1.0", without(send_10(msg_10()), "id"), -32600),
    ("no id, unknown method 0.3", "0.3", without(envelope("message/ssend", {}), "id"), -32601),
    ("no id, bad params 0.3", "0.3", without(envelope("message/send", {}), "id"), -32602),
]


def count_tasks(url: str) -> int:
    response = Peer(url, "1.0").rpc("list", {"pageSize": 100})
    return int(response["result"]["totalSize"])


def still_answers(url: str) -> None:
    response = Peer(url, "1.0").rpc("get", {"id": "tsk-none"})
    assert response["error"]["code"] == -32001


@pytest.mark.parametrize(("version", "body", "code"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_input_gets_its_code(server: Any, version: str, body: Any, code: int) -> None:
    before = count_tasks(server.url)
    peer = Peer(server.url, version)
    response = peer.post(body if isinstance(body, bytes) else json.dumps(body).encode())
    assert "result" not in response
    assert response["error"]["code"] == code, response
    readable = (
        isinstance(body, dict)
        and code != -32700
        and len(json.dumps(body)) <= LIMIT
        and isinstance(body.get("id", 0), (str, int))
    )
    if readable:  # the id is echoed whenever it could be read
        assert response["id"] == body.get("id")
    else:
        assert response["id"] is None
    assert count_tasks(server.url) == before
    still_answers(server.url)


def _chunks(data: bytes, size: int = 1000) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


def test_oversize_chunked_body_is_refused_not_truncated(server: Any) -> None:
    before = count_tasks(server.url)
    body = json.dumps(send_10(msg_10(parts=[{"text": "x" * (LIMIT * 2)}]))).encode()
    response = requests.post(server.url + "/", data=_chunks(body), timeout=10,
                             headers={"A2A-Version": "1.0", "Content-Type": "application/json"})
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32600
    assert count_tasks(server.url) == before
    still_answers(server.url)


def test_chunked_body_under_the_limit_is_read_whole(server: Any) -> None:
    body = json.dumps(send_10(msg_10(parts=[{"text": "y" * 1500}]))).encode()
    response = requests.post(server.url + "/", data=_chunks(body, 100), timeout=10,
                             headers={"A2A-Version": "1.0", "Content-Type": "application/json"})
    task = response.json()["result"]["task"]
    assert task["artifacts"][0]["parts"][0]["text"] == "y" * 1500


def test_version_header_outside_the_list(server: Any) -> None:
    peer = Peer(server.url, "1.0")
    response = peer.rpc("send", {"message": user_message("hi", "1.0")},
                        headers={"A2A-Version": "2.0"})
    assert response["error"]["code"] == -32009
    still_answers(server.url)
