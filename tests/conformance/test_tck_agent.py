"""examples/tck_agent.py speaks the 1.0 kit's contract (scenarios/*.feature) over real HTTP.

Each test sends what the kit sends (a messageId with the scenario's prefix) to
the agent served by werkzeug, and checks the wire answer the scenario
describes. The legacy agent (``TCK_LEGACY=1``) keeps every task WORKING.
With a token the agent serves an extended card to callers that send it, and to
nobody else.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.a2a_http import Peer, served, state_of, texts

import examples.tck_agent as tck_agent
from a2a_wsgi import A2AApp

TOKEN = "tck-token-for-these-tests"
BASE_URL = "http://localhost:9999/"


@pytest.fixture(scope="module")
def peer() -> Iterator[Peer]:
    app = tck_agent.build_app(legacy=False, versions=("1.0",), base_url=BASE_URL)
    with served(app) as handle:
        yield Peer(handle.url, "1.0")


@pytest.fixture(scope="module")
def protected() -> Iterator[Peer]:
    """The agent as run_tck.py starts it: an extended card behind a bearer token."""
    app = tck_agent.build_app(legacy=False, versions=("1.0",), base_url=BASE_URL,
                              extended_card_token=TOKEN)
    with served(app) as handle:
        yield Peer(handle.url, "1.0")


def _send(peer: Peer, prefix: str, text: str = "hello", **message: Any) -> dict[str, Any]:
    return peer.send(text, message_id=f"{prefix}-{time.monotonic_ns()}", **message)


def _stream(peer: Peer, prefix: str) -> list[dict[str, Any]]:
    """Every StreamResponse of one SendStreamingMessage, in order."""
    params = {"message": {"messageId": f"{prefix}-{time.monotonic_ns()}", "role": "ROLE_USER",
                          "parts": [{"text": "stream please"}]}}
    with peer.stream("stream", params) as (response, events):
        assert response.headers["Content-Type"].startswith("text/event-stream")
        return [event.data["result"] for event in events]


def _status_text(task: dict[str, Any]) -> list[str]:
    return texts(task["status"]["message"]["parts"])


def test_complete_task_answers_completed_with_the_scenarios_message(peer: Peer) -> None:
    task = _send(peer, "tck-complete-task")
    assert state_of(task) == "completed"
    assert _status_text(task) == ["Hello from TCK"]


@pytest.mark.parametrize(("prefix", "part"), [
    ("tck-artifact-text", {"text": "Generated text content"}),
    ("tck-artifact-file", {"raw": base64.b64encode(b"tck").decode(), "filename": "output.txt",
                           "mediaType": "text/plain"}),
    ("tck-artifact-file-url", {"url": "https://example.com/output.txt",
                               "filename": "output.txt", "mediaType": "text/plain"}),
    ("tck-artifact-data", {"data": {"key": "value", "count": 42}}),
])
def test_artifact_scenarios_complete_with_one_artifact(peer: Peer, prefix: str,
                                                       part: dict[str, Any]) -> None:
    task = _send(peer, prefix)
    assert state_of(task) == "completed"
    [artifact] = task["artifacts"]
    assert artifact["parts"] == [part]


def test_message_response_is_a_bare_message(peer: Peer) -> None:
    response = peer.rpc("send", {"message": {
        "messageId": f"tck-message-response-{time.monotonic_ns()}", "role": "ROLE_USER",
        "parts": [{"text": "hi"}]}})
    message = response["result"]["message"]
    assert message["role"] == "ROLE_AGENT"
    assert texts(message["parts"]) == ["Direct message response"]


def test_input_required_waits_and_a_follow_up_completes_it(peer: Peer) -> None:
    task = _send(peer, "tck-input-required")
    assert state_of(task) == "input-required"
    done = _send(peer, "tck-complete-task", "go on", task_id=task["id"])
    assert done["id"] == task["id"] and state_of(done) == "completed"
    history = [texts(m["parts"]) for m in done["history"] if m["role"] == "ROLE_USER"]
    assert history == [["hello"], ["go on"]]


def test_input_required_task_can_be_canceled(peer: Peer) -> None:
    task = _send(peer, "tck-input-required")
    canceled = peer.rpc("cancel", {"id": task["id"]})["result"]
    assert state_of(canceled) == "canceled"


def test_reject_task_is_rejected(peer: Peer) -> None:
    task = _send(peer, "tck-reject-task")
    assert state_of(task) == "rejected"
    assert _status_text(task) == ["rejected"]


def test_anything_else_completes_with_an_echo(peer: Peer) -> None:
    task = _send(peer, "tck-send-001", "ping")
    assert state_of(task) == "completed"
    assert _status_text(task) == ["Echo: ping"]


def _kinds(events: list[dict[str, Any]]) -> list[str]:
    """The StreamResponse members in order, a status update shown as its state."""
    kinds = []
    for event in events:
        [(kind, value)] = event.items()
        kinds.append(state_of(value) if kind == "statusUpdate" else kind)
    return kinds


@pytest.mark.parametrize(("prefix", "text"), [
    ("tck-stream-001", "Stream hello from TCK"),
    ("tck-stream-003", "Stream task lifecycle"),
    ("tck-stream-ordering-001", "Ordered output"),
    ("tck-stream-artifact-text", "Streamed text content"),
])
def test_stream_scenarios_work_emit_one_artifact_and_complete(peer: Peer, prefix: str,
                                                              text: str) -> None:
    events = _stream(peer, prefix)
    assert _kinds(events) == ["task", "working", "artifactUpdate", "completed"]
    assert texts(events[2]["artifactUpdate"]["artifact"]["parts"]) == [text]


def test_stream_artifact_file(peer: Peer) -> None:
    events = _stream(peer, "tck-stream-artifact-file")
    assert _kinds(events) == ["task", "working", "artifactUpdate", "completed"]
    [part] = events[2]["artifactUpdate"]["artifact"]["parts"]
    assert part["filename"] == "output.txt" and part["mediaType"] == "text/plain"


def test_message_only_stream_completes(peer: Peer) -> None:
    # The runtime moves every task through WORKING before it ends.
    assert _kinds(_stream(peer, "tck-stream-002")) == ["task", "working", "completed"]


def test_chunked_artifact_arrives_in_two_chunks_of_one_artifact(peer: Peer) -> None:
    events = _stream(peer, "tck-stream-artifact-chunked")
    assert _kinds(events) == ["task", "working", "artifactUpdate", "artifactUpdate",
                              "completed"]
    first, last = events[2]["artifactUpdate"], events[3]["artifactUpdate"]
    assert first["artifact"]["artifactId"] == last["artifact"]["artifactId"]
    assert texts(first["artifact"]["parts"]) == ["chunk-1 "]
    assert not first.get("append") and not first.get("lastChunk")
    assert texts(last["artifact"]["parts"]) == ["chunk-2"]
    assert last["append"] is True and last["lastChunk"] is True


def test_resubscribe_task_stays_working_for_twice_the_streaming_timeout(
        peer: Peer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tck_agent, "STREAMING_TIMEOUT", 0.5)
    task = _send(peer, "test-resubscribe-message-id", blocking=False)
    deadline = time.monotonic() + 0.8
    while time.monotonic() < deadline:
        assert state_of(peer.rpc("get", {"id": task["id"]})["result"]) in ("submitted",
                                                                           "working")
        time.sleep(0.1)
    while state_of(peer.rpc("get", {"id": task["id"]})["result"]) != "completed":
        assert time.monotonic() < deadline + 5, "the task never completed"
        time.sleep(0.05)


def test_a_canceled_long_running_task_stays_canceled(peer: Peer) -> None:
    task = _send(peer, "test-resubscribe-message-id", blocking=False)
    assert state_of(peer.rpc("cancel", {"id": task["id"]})["result"]) == "canceled"
    time.sleep(0.2)
    assert state_of(peer.rpc("get", {"id": task["id"]})["result"]) == "canceled"


def test_scenario_prefixes_do_not_shadow_each_other() -> None:
    prefixes = [prefix for prefix, _ in tck_agent.SCENARIOS]
    for i, prefix in enumerate(prefixes):
        assert not any(prefix.startswith(earlier) for earlier in prefixes[:i]), prefix
        assert tck_agent.behaviour_for(f"{prefix}-abc") is tck_agent.SCENARIOS[i][1]


def test_the_card_declares_streaming_and_push_and_speaks_1_0(peer: Peer) -> None:
    card = requests.get(peer.url + ".well-known/agent-card.json", timeout=5).json()
    assert card["capabilities"]["streaming"] is True
    assert card["capabilities"]["pushNotifications"] is True
    interfaces = [(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]]
    assert interfaces[0] == ("JSONRPC", "1.0")
    assert {version for _, version in interfaces} == {"1.0"}  # no 0.3 interface
    assert card["supportedInterfaces"][0]["url"] == "http://localhost:9999/"


def test_without_a_token_there_is_no_extended_card_and_no_auth(peer: Peer) -> None:
    card = requests.get(peer.url + ".well-known/agent-card.json", timeout=5).json()
    assert not card["capabilities"].get("extendedAgentCard")
    assert "securitySchemes" not in card
    error = peer.rpc("extended_card", {})["error"]
    assert error["code"] == -32004  # UnsupportedOperationError (CORE-CAP-003)


def test_the_extended_card_is_declared_with_the_bearer_scheme(protected: Peer) -> None:
    card = requests.get(protected.url + ".well-known/agent-card.json", timeout=5).json()
    assert card["capabilities"]["extendedAgentCard"] is True
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert "conformance-extended" not in [skill["id"] for skill in card["skills"]]


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", f"Basic {TOKEN}"])
def test_the_extended_card_refuses_callers_without_the_token(
        protected: Peer, authorization: str | None) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    rpc = requests.post(protected.url, headers=protected.headers(headers), timeout=5, json={
        "jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}})
    assert rpc.status_code == 401 and rpc.json()["error"]["code"] == -31401
    assert rpc.headers["WWW-Authenticate"].startswith("Bearer")
    rest = requests.get(protected.url + "rest/extendedAgentCard", timeout=5,
                        headers={"A2A-Version": "1.0", **headers})
    assert rest.status_code == 401 and rest.json()["error"]["status"] == "UNAUTHENTICATED"


def test_the_token_opens_the_extended_card_over_both_bindings(protected: Peer) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    rpc = protected.rpc("extended_card", {}, headers=bearer)["result"]
    rest = requests.get(protected.url + "rest/extendedAgentCard", timeout=5,
                        headers={"A2A-Version": "1.0", **bearer})
    assert rest.status_code == 200
    for card in (rpc, rest.json()):
        assert [skill["id"] for skill in card["skills"]] == ["conformance",
                                                             "conformance-extended"]
        assert card["supportedInterfaces"][0]["url"] == BASE_URL


def test_anonymous_callers_reach_every_other_operation(protected: Peer) -> None:
    task = _send(protected, "tck-input-required")
    assert state_of(protected.rpc("get", {"id": task["id"]})["result"]) == "input-required"
    assert state_of(protected.rpc("cancel", {"id": task["id"]})["result"]) == "canceled"
    assert _kinds(_stream(protected, "tck-stream-002")) == ["task", "working", "completed"]
    listed = requests.get(protected.url + "rest/tasks", headers={"A2A-Version": "1.0"},
                          timeout=5)
    assert listed.status_code == 200
    assert task["id"] in [t["id"] for t in listed.json()["tasks"]]


def test_the_legacy_agent_never_declares_an_extended_card() -> None:
    app = tck_agent.build_app(legacy=True, base_url=BASE_URL, extended_card_token=TOKEN)
    with served(app) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
    assert not card["capabilities"].get("extendedAgentCard")
    assert not card.get("securitySchemes")


def test_legacy_agent_keeps_tasks_working() -> None:
    with served(A2AApp(tck_agent.ConformanceAgent(), base_url="http://localhost:9999/")) as h:
        legacy = Peer(h.url, "1.0")
        task = legacy.send("tck-complete-task", message_id="tck-complete-task-1")
        assert state_of(task) == "working"
        again = legacy.send("more", task_id=task["id"])
        assert again["id"] == task["id"] and state_of(again) == "working"
