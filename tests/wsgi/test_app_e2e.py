"""A2AApp end to end over real HTTP: serve() on 127.0.0.1:0, requests, both wire versions."""

from __future__ import annotations

import hashlib
import threading
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

import pytest
import requests
from support.a2a_http import Peer, served, state_of, texts, unwrap, user_message
from support.schemas import check_response

from a2a_core.models import AgentCard, AgentSkill, Message
from a2a_wsgi import (
    A2AApp,
    Agent,
    AgentContext,
    error,
    input_required,
    message,
    reply,
    stream,
    working,
)
from a2a_wsgi.settings import CardSettings, ProtocolSettings, StreamSettings

VERSIONS = ["0.3", "1.0"]


class Probe(Agent):
    """One agent whose behaviour is chosen by the first word of the message."""

    name = "Probe Agent"
    description = "Answers according to the first word it is sent"
    version = "2.0.0"
    skills = [AgentSkill(id="probe", name="Probe", description="Behaves as told", tags=["t"])]

    def __init__(self) -> None:
        self.release = threading.Event()
        self.stream_closed = threading.Event()
        self.produced = 0

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        word, _, rest = msg.text.partition(" ")
        if word == "ask":
            return input_required("Which numbers?")
        if word == "fail":
            return error("boom")
        if word == "raise":
            raise RuntimeError("kaboom")
        if word == "msg":
            return message("just a message")
        if word == "work":
            return working("busy")
        if word == "wait":
            while not self.release.wait(0.02):
                if ctx.is_cancelled():
                    return reply("stopped")
            return reply("released")
        if word == "stream":
            return stream(self._chunks(int(rest or 3), 0.0))
        if word == "endless":
            return stream(self._chunks(10_000, 0.02))
        return reply(f"echo: {msg.text}")

    def _chunks(self, count: int, pause: float) -> Any:
        try:
            for i in range(count):
                self.produced = i + 1
                time.sleep(pause)
                yield f"chunk {i}"
        finally:
            self.stream_closed.set()


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def server(probe: Probe) -> Any:
    app = A2AApp(probe, streams=StreamSettings(resubscribe_timeout=0.5, heartbeat_interval=0.05))
    with served(app) as handle:
        yield handle


def peer(server: Any, version: str) -> Peer:
    return Peer(server.url, version)


def count_tasks(server: Any) -> int:
    response = Peer(server.url, "1.0").rpc("list", {"pageSize": 100})
    return int(response["result"]["totalSize"])


# -- the agent card ----------------------------------------------------------------------


def test_card_has_validators_and_the_served_url(server: Any) -> None:
    response = requests.get(server.url + "/.well-known/agent-card.json", timeout=5)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.headers["ETag"] == '"' + hashlib.sha256(response.content).hexdigest() + '"'
    assert response.headers["Cache-Control"] == "public, max-age=300"
    assert response.headers["Last-Modified"].endswith(" GMT")
    card = response.json()
    assert (card["name"], card["version"]) == ("Probe Agent", "2.0.0")
    assert card["capabilities"]["streaming"] is True
    assert not card["capabilities"].get("pushNotifications")
    assert {(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]} == {
        ("JSONRPC", server.url + "/"), ("HTTP+JSON", server.url + "/rest")}
    assert card["url"] == server.url + "/"  # the 0.3 reading of the same card
    check_response("DualAgentCard", card, "1.0")


def test_card_revalidation_answers_304(server: Any) -> None:
    url = server.url + "/.well-known/agent-card.json"
    first = requests.get(url, timeout=5)
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    by_etag = requests.get(url, headers={"If-None-Match": etag}, timeout=5)
    assert (by_etag.status_code, by_etag.content, by_etag.headers["ETag"]) == (304, b"", etag)
    assert by_etag.headers["Cache-Control"] == first.headers["Cache-Control"]
    assert "Content-Length" not in by_etag.headers and "Last-Modified" not in by_etag.headers
    again = requests.get(url, headers={"If-None-Match": etag}, timeout=5)  # the kept answer
    per_request = {"X-Request-Id": "", "Date": ""}  # the server's clock may tick in between
    assert (again.status_code, dict(again.headers, **per_request)) == (
        304, dict(by_etag.headers, **per_request))
    by_date = requests.get(url, headers={"If-Modified-Since": modified}, timeout=5)
    assert by_date.status_code == 304
    stale = requests.get(url, headers={"If-None-Match": '"other"'}, timeout=5)
    assert (stale.status_code, stale.content) == (200, first.content)


def test_last_modified_is_the_configured_time_in_gmt(probe: Probe) -> None:
    when = datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    with served(A2AApp(probe, card=CardSettings(last_modified=when))) as handle:
        response = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5)
    assert response.headers["Last-Modified"] == "Fri, 02 Jan 2026 03:04:05 GMT"
    assert format_datetime(when.astimezone(timezone.utc), usegmt=True) == (
        response.headers["Last-Modified"]
    )


def test_routing_405_and_404(server: Any) -> None:
    card = server.url + "/.well-known/agent-card.json"
    wrong = requests.post(card, data=b"{}", timeout=5)
    assert (wrong.status_code, wrong.headers["Allow"]) == (405, "GET")
    assert requests.get(server.url + "/elsewhere", timeout=5).status_code == 404
    assert requests.post(server.url + "/elsewhere", data=b"{}", timeout=5).status_code == 404


def test_card_path_and_rpc_path_options(probe: Probe) -> None:
    app = A2AApp(
        probe,
        card=CardSettings(path="meta/card.json"),
        protocol=ProtocolSettings(json_rpc_path="rpc"),
    )
    with served(app) as handle:
        default = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5)
        assert default.status_code == 404
        card = requests.get(handle.url + "/meta/card.json", timeout=5).json()
        assert {i["url"] for i in card["supportedInterfaces"]} == {
            handle.url + "/rpc/", handle.url + "/rest"}
        task = Peer(handle.url + "/rpc", "1.0").send("hello")
        assert state_of(task) == "completed"
        root = requests.post(handle.url + "/", json={}, timeout=5)
        assert root.status_code == 404


def test_card_serving_can_be_disabled(probe: Probe) -> None:
    with served(A2AApp(probe, card=CardSettings(path=None))) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5)
        assert card.status_code == 404
        assert state_of(Peer(handle.url, "0.3").send("hello")) == "completed"


def test_missing_base_url_fails_loudly_naming_both_fixes(probe: Probe) -> None:
    app = A2AApp(probe)
    with pytest.raises(RuntimeError, match="base_url") as caught:
        app.card_response({})
    assert "put_base_url" in str(caught.value)


def test_card_overrides_override_card_fields(probe: Probe) -> None:
    app = A2AApp(
        probe,
        card=CardSettings(overrides={"description": "Overridden",
                                         "capabilities": {"state_transition_history": True}}),
    )
    with served(app) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
    assert card["description"] == "Overridden"
    assert card["capabilities"]["stateTransitionHistory"] is True
    assert card["capabilities"]["streaming"] is True


# -- every method, both versions ---------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_send_reply_completes_with_one_artifact(server: Any, version: str) -> None:
    p = peer(server, version)
    response = p.rpc("send", {"message": user_message("hello there", version)})
    check_response("send", response, version)
    task = unwrap(response["result"], version)
    assert state_of(task) == "completed"
    assert [texts(a["parts"]) for a in task["artifacts"]] == [["echo: hello there"]]
    assert task["id"].startswith("tsk-") and task["contextId"]
    assert p.last is not None and p.last.headers["A2A-Version"] == version


@pytest.mark.parametrize("version", VERSIONS)
def test_input_required_then_continue(server: Any, version: str) -> None:
    p = peer(server, version)
    task = p.send("ask")
    assert state_of(task) == "input-required"
    assert texts(task["status"]["message"]["parts"]) == ["Which numbers?"]
    again = p.send("hello again", task_id=task["id"], context_id=task["contextId"])
    assert again["id"] == task["id"] and state_of(again) == "completed"
    got = p.rpc("get", {"id": task["id"]})
    check_response("get", got, version)
    assert [texts(m["parts"]) for m in got["result"]["history"]][0] == ["ask"]
    assert len(got["result"]["history"]) == 4
    trimmed = p.rpc("get", {"id": task["id"], "historyLength": 1})["result"]
    assert [texts(m["parts"]) for m in trimmed["history"]] == [["echo: hello again"]]


@pytest.mark.parametrize("version", VERSIONS)
def test_failures_and_message_replies(server: Any, version: str) -> None:
    p = peer(server, version)
    failed = p.send("fail")
    assert state_of(failed) == "failed"
    assert texts(failed["status"]["message"]["parts"]) == ["Error: boom"]
    raised = p.send("raise")
    assert state_of(raised) == "failed"
    assert "Traceback" not in p.last.text  # type: ignore[union-attr]
    bare = p.rpc("send", {"message": user_message("msg", version)})
    check_response("send", bare, version)
    result = unwrap(bare["result"], version)
    assert texts(result["parts"]) == ["just a message"] and "status" not in result


@pytest.mark.parametrize("version", VERSIONS)
def test_terminal_and_unknown_tasks(server: Any, version: str) -> None:
    p = peer(server, version)
    done = p.send("hello")
    again = p.rpc("send", {"message": user_message("more", version, task_id=done["id"])})
    assert again["error"]["code"] == -32004
    unknown = p.rpc("send", {"message": user_message("x", version, task_id="tsk-nope")})
    assert unknown["error"]["code"] == -32001
    missing = p.rpc("get", {"id": "tsk-nope"})
    assert missing["error"]["code"] == -32001
    check_response("error", missing, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_cancel_rules(server: Any, probe: Probe, version: str) -> None:
    p = peer(server, version)
    running = p.send("wait", blocking=False)
    canceled = p.rpc("cancel", {"id": running["id"]})
    check_response("cancel", canceled, version)
    assert state_of(canceled["result"]) == "canceled"
    assert p.rpc("cancel", {"id": running["id"]})["error"]["code"] == -32002  # terminal now
    done = p.send("hello")
    assert p.rpc("cancel", {"id": done["id"]})["error"]["code"] == -32002
    assert p.rpc("cancel", {"id": "tsk-nope"})["error"]["code"] == -32001
    time.sleep(0.1)  # the canceled agent has noticed and returned; its result must not win
    assert state_of(p.rpc("get", {"id": running["id"]})["result"]) == "canceled"


@pytest.mark.parametrize("version", VERSIONS)
def test_non_blocking_send_returns_at_once(server: Any, probe: Probe, version: str) -> None:
    p = peer(server, version)
    task = p.send("wait", blocking=False)
    assert state_of(task) in {"submitted", "working"}
    probe.release.set()
    deadline = time.monotonic() + 5
    while state_of(p.rpc("get", {"id": task["id"]})["result"]) != "completed":
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_list_tasks_filters_pages_and_trims(server: Any) -> None:
    p = peer(server, "1.0")
    first = p.send("hello one")
    second = p.send("hello two", context_id=first["contextId"])
    p.send("ask")
    response = p.rpc("list", {"contextId": first["contextId"]})
    check_response("list", response, "1.0")
    result = response["result"]
    assert [t["id"] for t in result["tasks"]] == [second["id"], first["id"]]  # newest first
    assert (result["totalSize"], result["pageSize"], result["nextPageToken"]) == (2, 2, "")
    assert all("artifacts" not in t for t in result["tasks"])
    page = p.rpc("list", {"pageSize": 1, "historyLength": 0, "includeArtifacts": True})["result"]
    assert page["pageSize"] == 1 and page["nextPageToken"]
    assert page["tasks"][0].get("history", []) == []
    rest = p.rpc("list", {"pageSize": 100, "pageToken": page["nextPageToken"]})["result"]
    assert rest["pageSize"] == page["totalSize"] - 1
    waiting = p.rpc("list", {"status": "TASK_STATE_INPUT_REQUIRED"})["result"]
    assert [state_of(t) for t in waiting["tasks"]] == ["input-required"]
    # the seed's 0.3-style alias of ListTasks
    legacy = Peer(server.url, "0.3").post({"jsonrpc": "2.0", "id": 1, "method": "tasks/list"})
    assert legacy["result"]["totalSize"] == result["totalSize"] + 1


@pytest.mark.parametrize("version", VERSIONS)
def test_push_config_methods_are_refused_until_push_exists(server: Any, version: str) -> None:
    p = peer(server, version)
    task = p.send("hello")
    if version == "0.3":
        calls = {"push_set": {"taskId": task["id"], "pushNotificationConfig": {"url": "http://x/"}},
                 "push_get": {"id": task["id"]}, "push_list": {"id": task["id"]},
                 "push_delete": {"id": task["id"], "pushNotificationConfigId": "c"}}
    else:
        calls = {"push_set": {"taskId": task["id"], "url": "http://x/"},
                 "push_get": {"taskId": task["id"], "id": "c"},
                 "push_list": {"taskId": task["id"]},
                 "push_delete": {"taskId": task["id"], "id": "c"}}
    for op, params in calls.items():
        response = p.rpc(op, params)
        assert response["error"]["code"] == -32003, (op, response)
        check_response("error", response, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_extended_card(probe: Probe, version: str) -> None:
    with served(A2AApp(probe)) as handle:
        refused = Peer(handle.url, version).rpc("extended_card")
        assert refused["error"]["code"] == (-32007 if version == "0.3" else -32004)

    def extended(ctx: Any) -> AgentCard:
        return AgentCard(name="Probe Agent (extended)", description="more", version="2.0.0")

    with served(A2AApp(Probe(), card=CardSettings(extended_card=extended))) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
        assert card["capabilities"]["extendedAgentCard"] is True
        response = Peer(handle.url, version).rpc("extended_card")
        assert response["result"]["name"] == "Probe Agent (extended)"
        check_response("AgentCard", response["result"], version)


# -- SSE ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_stream_framing_and_order(server: Any, version: str) -> None:
    p = peer(server, version)
    params = {"message": user_message("stream 3", version)}
    with p.stream("stream", params, request_id=42) as (response, events):
        assert response.headers["Content-Type"].startswith("text/event-stream")
        assert response.headers["Cache-Control"] == "no-cache"
        assert response.headers["X-Accel-Buffering"] == "no"
        received = list(events)
    for event in received:
        assert event.data["id"] == 42 and event.data["jsonrpc"] == "2.0"
        assert sum(1 for line in event.raw_lines if line.startswith("data:")) == 1
        check_response("stream_event", event.data, version)
    kinds = [_kind(e.data["result"], version) for e in received]
    assert kinds[0] == "task"
    assert kinds[-1] == "status" and state_of(_body(received[-1].data["result"])) == "completed"
    artifacts = [_body(e.data["result"]) for e, kind in zip(received, kinds, strict=True)
                 if kind == "artifact"]
    assert [texts(a["artifact"]["parts"]) for a in artifacts] == [
        ["chunk 0"], ["chunk 1"], ["chunk 2"]]
    assert len({a["artifact"]["artifactId"] for a in artifacts}) == 1
    if version == "0.3":
        assert _body(received[-1].data["result"])["final"] is True


def test_stream_events_carry_ids(server: Any) -> None:
    params = {"message": user_message("stream 2", "1.0")}
    with peer(server, "1.0").stream("stream", params) as (_response, events):
        received = list(events)
    assert all(event.id for event in received)
    assert len({event.id for event in received}) == len(received)


@pytest.mark.parametrize("version", VERSIONS)
def test_subscribe_streams_changes_then_times_out(server: Any, probe: Probe, version: str) -> None:
    p = peer(server, version)
    task = p.send("work")
    assert state_of(task) == "working"
    started = time.monotonic()
    with p.stream("subscribe", {"id": task["id"]}) as (_response, events):
        received = list(events)  # resubscribe_timeout=0.5 closes it
    assert 0.4 < time.monotonic() - started < 5
    assert _kind(received[0].data["result"], version) == "task"
    assert unwrap(received[0].data["result"], version)["id"] == task["id"]


@pytest.mark.parametrize("version", VERSIONS)
def test_subscribe_to_unknown_task_is_a_plain_json_error(server: Any, version: str) -> None:
    with peer(server, version).stream("subscribe", {"id": "tsk-nope"}) as (response, _events):
        assert response.headers["Content-Type"] == "application/json"
        answer = response.json()
    assert answer["id"] == "stream-1" and answer["error"]["code"] == -32001
    assert "not found" in answer["error"]["message"].lower()


def test_disconnect_stops_the_agent_iterator(server: Any, probe: Probe) -> None:
    p = peer(server, "1.0")
    with p.stream("stream", {"message": user_message("endless", "1.0")}) as (_r, events):
        for _, _event in zip(range(3), events, strict=False):
            pass
    assert probe.stream_closed.wait(5), "the agent's generator was not closed"
    produced = probe.produced
    time.sleep(0.2)
    assert probe.produced == produced < 10_000
    assert state_of(p.send("hello")) == "completed"  # and the server still answers


def _kind(result: dict[str, Any], version: str) -> str:
    if version == "0.3":
        return {"task": "task", "message": "message", "status-update": "status",
                "artifact-update": "artifact"}[result["kind"]]
    (key,) = result
    return {"task": "task", "message": "message", "statusUpdate": "status",
            "artifactUpdate": "artifact"}[key]


def _body(result: dict[str, Any]) -> dict[str, Any]:
    if "kind" in result:
        return result
    return dict(next(iter(result.values())))
