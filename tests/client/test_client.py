"""A2AClient against hand-written peers: errors, dialects, headers, tolerant decoding."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from client_peers import Err, Peer, card_v03, card_v10, task_json
from werkzeug.wrappers import Response

import a2a_core.errors as core_errors
from a2a_client import A2AClient
from a2a_client._cards import Endpoint, select_endpoint
from a2a_client._errors import HTTPStatusError
from a2a_core.errors import (
    InvalidAgentResponseError,
    RemoteProtocolError,
    RPCError,
    TaskNotFoundError,
)
from a2a_core.models import AgentCard, AgentInterface, Message, Task, TaskState

# -- JSON-RPC errors are the core's classes ------------------------------------------------


@pytest.mark.parametrize("code", sorted(core_errors.ERROR_CLASSES))
def test_every_registered_code_raises_its_core_class(peer: Peer, code: int) -> None:
    peer.handlers["GetTask"] = lambda call: Err(code, f"boom {code}", data={"taskId": "t9"})
    with A2AClient(peer.url) as client, pytest.raises(core_errors.ERROR_CLASSES[code]) as caught:
        client.get_task("t9")
    assert caught.value.code == code
    assert caught.value.message == f"boom {code}"


def test_task_not_found_is_the_server_class_and_keeps_data(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: Err(-32001, "Task not found", data={"taskId": "nope"})
    with A2AClient(peer.url) as client, pytest.raises(TaskNotFoundError) as caught:
        client.get_task("nope")
    assert type(caught.value) is core_errors.TaskNotFoundError
    assert caught.value.data == {"taskId": "nope"}


def test_unknown_code_keeps_its_code(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: Err(-32077, "new in 1.1")
    with A2AClient(peer.url) as client, pytest.raises(RPCError) as caught:
        client.get_task("t")
    assert caught.value.code == -32077 and type(caught.value) is RPCError


def test_jsonrpc_error_with_http_500_is_still_typed(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: Err(-32001, "gone", http_status=500)
    with A2AClient(peer.url) as client, pytest.raises(TaskNotFoundError):
        client.get_task("t")


def test_non_json_http_failure_carries_status_headers_body(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: Response(
        "<html>bad gateway</html>", status=502, headers={"X-Proxy": "edge"}
    )
    with A2AClient(peer.url) as client, pytest.raises(HTTPStatusError) as caught:
        client.get_task("t")
    err = caught.value
    assert err.status_code == 502
    assert err.body == b"<html>bad gateway</html>"
    assert err.headers["X-Proxy"] == "edge"
    assert str(err).startswith("HTTP 502: <html>bad gateway")


def test_garbage_with_200_is_a_remote_protocol_error(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: Response("not json", mimetype="application/json")
    with A2AClient(peer.url) as client, pytest.raises(RemoteProtocolError):
        client.get_task("t")


def test_malformed_result_is_an_invalid_agent_response(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: {"id": 5}
    with A2AClient(peer.url) as client, pytest.raises(InvalidAgentResponseError):
        client.get_task("t")


def test_response_for_another_request_id_is_refused(peer: Peer) -> None:
    body = '{"jsonrpc":"2.0","id":999,"result":{}}'
    peer.handlers["GetTask"] = lambda call: Response(body, mimetype="application/json")
    with A2AClient(peer.url) as client, pytest.raises(RemoteProtocolError, match="another request"):
        client.get_task("t")


# -- dialects ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card", "version", "method", "header"),
    [
        (card_v10, "auto", "GetTask", "1.0"),
        (card_v03, "auto", "tasks/get", "0.3"),
        (card_v10, "0.3", "tasks/get", "0.3"),
        (card_v03, "1.0", "GetTask", "1.0"),
    ],
)
def test_version_selects_method_names_and_header(
    peer: Peer, card: Any, version: str, method: str, header: str
) -> None:
    peer.card = card
    peer.handlers["GetTask"] = peer.handlers["tasks/get"] = lambda call: task_json("t1")
    with A2AClient(peer.url, version=version) as client:
        client.get_task("t1")
        assert client.version == header
    call = peer.rpc_calls()[-1]
    assert call.rpc_method == method
    assert call.headers["a2a-version"] == header
    assert call.path == "/"  # the card's endpoint


@pytest.mark.parametrize("v03", [False, True])
@pytest.mark.parametrize("wrapped", [False, True])
def test_send_result_decoded_bare_or_wrapped_either_dialect(
    peer: Peer, v03: bool, wrapped: bool
) -> None:
    task = task_json("t1", "TASK_STATE_COMPLETED", output="The sum is 5.", v03=v03)
    peer.handlers["SendMessage"] = lambda call: {"task": task} if wrapped else task
    with A2AClient(peer.url) as client:
        result = client.send_message("add 2 and 3")
    assert isinstance(result, Task)
    assert result.status.state is TaskState.COMPLETED
    assert result.artifacts[0].parts[0].text == "The sum is 5."  # type: ignore[union-attr]


def test_send_message_params_follow_the_dialect(peer: Peer) -> None:
    peer.card = card_v03
    peer.handlers["message/send"] = lambda call: task_json("t1", v03=True)
    with A2AClient(peer.url) as client:
        client.send_message("hi", context_id="c1", task_id="t0", blocking=False, history_length=2)
    params = peer.rpc_calls("message/send")[0].params
    message = params["message"]
    assert message["role"] == "user" and message["parts"][0]["text"] == "hi"
    assert message["contextId"] == "c1" and message["taskId"] == "t0"
    assert params["configuration"]["blocking"] is False
    assert params["configuration"]["historyLength"] == 2


def test_direct_message_reply(peer: Peer) -> None:
    reply = {"message": {"messageId": "m1", "role": "ROLE_AGENT", "parts": [{"text": "hello"}]}}
    peer.handlers["SendMessage"] = lambda call: reply
    with A2AClient(peer.url) as client:
        result = client.send_message("hi")
    assert isinstance(result, Message) and result.text == "hello"


def test_tenant_from_the_interface_is_copied_into_params(peer: Peer) -> None:
    def card(url: str) -> dict[str, Any]:
        document = card_v10(url)
        document["supportedInterfaces"][0]["tenant"] = "acme"
        return document

    peer.card = card
    peer.handlers["GetTask"] = lambda call: task_json("t1")
    with A2AClient(peer.url) as client:
        client.get_task("t1")
    assert peer.rpc_calls("GetTask")[0].params["tenant"] == "acme"


# -- headers and echoes --------------------------------------------------------------------


def test_extensions_sent_in_both_spellings_for_0_3_and_echo_exposed(peer: Peer) -> None:
    peer.card = card_v03
    peer.response_headers = {"A2A-Version": "0.3", "X-A2A-Extensions": "urn:a, urn:b"}
    peer.handlers["tasks/get"] = lambda call: task_json("t1", v03=True)
    with A2AClient(peer.url, extensions=["urn:a", "urn:b"]) as client:
        assert client.server_version is None
        client.get_task("t1")
        assert client.server_version == "0.3"
        assert client.activated_extensions == ("urn:a", "urn:b")
    headers = peer.rpc_calls()[0].headers
    assert headers["a2a-extensions"] == "urn:a, urn:b"
    assert headers["x-a2a-extensions"] == "urn:a, urn:b"


def test_env_headers_expand_at_each_call_and_never_leak(peer: Peer, monkeypatch: Any) -> None:
    monkeypatch.setenv("A2A_TEST_TOKEN", "first")
    peer.handlers["GetTask"] = lambda call: Err(-32001, "no")
    client = A2AClient(peer.url, headers={"Authorization": "Bearer ${A2A_TEST_TOKEN}"})
    with pytest.raises(TaskNotFoundError) as caught:
        client.get_task("t")
    monkeypatch.setenv("A2A_TEST_TOKEN", "second")
    with pytest.raises(TaskNotFoundError):
        client.get_task("t")
    seen = [c.headers["authorization"] for c in peer.calls]
    assert seen[0] == "Bearer first"  # the card fetch
    assert seen[-1] == "Bearer second"
    for text in (repr(client), str(caught.value), repr(caught.value)):
        assert "first" not in text and "second" not in text and "${" not in text
    client.close()


# -- lifecycle -----------------------------------------------------------------------------


def test_closed_client_refuses_and_borrowed_session_stays_open(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: task_json("t1")
    session = requests.Session()
    with A2AClient(peer.url, session=session) as client:
        client.get_task("t1")
    with pytest.raises(RuntimeError):
        client.get_task("t1")
    assert session.get(peer.url + "/.well-known/agent-card.json", timeout=5).status_code == 200
    session.close()


def test_version_must_be_known() -> None:
    with pytest.raises(ValueError):
        A2AClient("http://127.0.0.1:1", version="2.0")


def test_pinned_endpoint_and_version_need_no_card(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: task_json("t1")
    with A2AClient("http://127.0.0.1:1/nowhere", endpoint=peer.url + "/", version="1.0") as client:
        assert client.get_task("t1").id == "t1"
    assert [c.method for c in peer.calls] == ["POST"]


def test_client_from_a_card_object(peer: Peer) -> None:
    peer.handlers["GetTask"] = lambda call: task_json("t1")
    card = AgentCard(name="x", supported_interfaces=[AgentInterface(url=peer.url + "/")])
    with A2AClient(card) as client:
        assert client.get_task("t1").id == "t1"
        assert client.get_card() is card


# -- endpoint selection (pure) -------------------------------------------------------------


def _card(*interfaces: tuple[str, str, str]) -> AgentCard:
    return AgentCard(
        name="a",
        supported_interfaces=[
            AgentInterface(url=u, protocol_binding=b, protocol_version=v) for u, b, v in interfaces
        ],
    )


@pytest.mark.parametrize(
    ("interfaces", "version", "expected"),
    [
        (
            (("http://h/v1", "JSONRPC", "1.0"), ("http://h/v03", "JSONRPC", "0.3")),
            "auto",
            ("http://h/v1", "1.0"),
        ),
        (
            (("http://h/v03", "JSONRPC", "0.3"), ("http://h/v1", "JSONRPC", "1.0")),
            "auto",
            ("http://h/v1", "1.0"),
        ),
        ((("http://h/v03", "JSONRPC", "0.3.0"),), "auto", ("http://h/v03", "0.3")),
        (
            (("http://h/seed", "JSONRPC", "2.0"),),
            "auto",
            ("http://h/seed", "1.0"),
        ),  # Elixir seed label
        (
            (("http://h/g", "GRPC", "1.0"), ("http://h/j", "JSONRPC", "0.3")),
            "auto",
            ("http://h/j", "0.3"),
        ),
        (
            (("http://h/v1", "JSONRPC", "1.0"), ("http://h/v03", "JSONRPC", "0.3")),
            "0.3",
            ("http://h/v03", "0.3"),
        ),
        ((("http://h/v1", "JSONRPC", "1.0"),), "0.3", ("http://h/v1", "0.3")),
        ((("/rel", "JSONRPC", "1.0"),), "auto", ("http://card.example/rel", "1.0")),
        ((), "auto", ("http://card.example", "0.3")),  # seed: the card URL's origin
    ],
)
def test_select_endpoint(interfaces: Any, version: str, expected: tuple[str, str]) -> None:
    chosen = select_endpoint(
        _card(*interfaces), "http://card.example/.well-known/agent-card.json", version
    )
    assert (chosen.url, chosen.version) == expected


def test_select_endpoint_keeps_tenant() -> None:
    card = AgentCard(name="a", supported_interfaces=[AgentInterface(url="http://h/", tenant="t1")])
    assert select_endpoint(card, None) == Endpoint(url="http://h/", version="1.0", tenant="t1")
