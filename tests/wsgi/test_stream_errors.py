"""Errors of the streaming methods over real HTTP, both versions.

Before anything was streamed an error is a plain JSON-RPC error response
(``application/json``, HTTP 200, the request's id); once the stream has begun
it is the stream's last SSE event.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from support.a2a_http import Peer, parse_sse, served, unwrap, user_message
from support.schemas import check_response

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, input_required, reply
from a2a_wsgi.settings import CardSettings, ProtocolSettings, StreamSettings
from a2a_wsgi.stores import SQLiteTaskStore

VERSIONS = ["0.3", "1.0"]
HIDDEN = "secret"  # messages with this word make tasks the callback denies


class Tasks(Agent):
    """``ask`` waits for input; ``gate`` emits, then waits for the test; else it replies."""

    name = "Stream Errors"
    description = "Tasks in every state a stream error needs"

    def __init__(self) -> None:
        self.gate = threading.Event()

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        if msg.text.startswith("ask"):
            return input_required("more?")
        if msg.text == "gate":
            ctx.emit_artifact("first")
            self.gate.wait(10)
            return reply("after the gate")
        return reply(f"done: {msg.text}")


def deny_hidden(operation: Any, task: Any) -> bool:
    """Tasks whose first message says HIDDEN are invisible (as if they did not exist)."""
    return not any(HIDDEN in m.text for m in task.history[:1])


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    app = A2AApp(
        Tasks(),
        protocol=ProtocolSettings(authorize_task=deny_hidden),
        streams=StreamSettings(resubscribe_timeout=0.5, heartbeat_interval=0.05),
    )
    with served(app) as handle:
        yield handle.url


def post_stream(url: str, version: str, method: str, params: Any,
                request_id: Any = "s-1") -> requests.Response:
    """One streaming call, read whole (a plain JSON answer or a closed SSE stream)."""
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if version == "1.0":
        headers["A2A-Version"] = "1.0"
    body = {"jsonrpc": "2.0", "id": request_id, "method": Peer(url, version).method(method),
            "params": params}
    return requests.post(url + "/", json=body, headers=headers, timeout=10)


def assert_plain_error(response: requests.Response, code: int, version: str,
                       request_id: Any = "s-1") -> dict[str, Any]:
    """A JSON-RPC error response, not a stream: right code, the request's id."""
    assert response.status_code == 200
    assert response.headers["Content-Type"].split(";")[0] == "application/json", response.text
    assert response.headers["A2A-Version"] == version
    answer = dict(response.json())
    assert answer["id"] == request_id and "result" not in answer, answer
    assert answer["error"]["code"] == code, answer
    check_response("error", answer, version)
    return answer


def new_task(url: str, version: str, text: str) -> dict[str, Any]:
    return Peer(url, version).send(text)


def continuation(version: str, task_id: str, text: str = "more") -> dict[str, Any]:
    return {"message": user_message(text, version, task_id=task_id)}


# -- SubscribeToTask / tasks/resubscribe ---------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_subscribe_to_an_unknown_task(url: str, version: str) -> None:
    response = post_stream(url, version, "subscribe", {"id": "tsk-nope"})
    answer = assert_plain_error(response, -32001, version)
    assert "not found" in answer["error"]["message"].lower()


@pytest.mark.parametrize("version", VERSIONS)
def test_subscribe_to_a_terminal_task(url: str, version: str) -> None:
    done = new_task(url, version, "hello")
    response = post_stream(url, version, "subscribe", {"id": done["id"]})
    assert_plain_error(response, -32004, version)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("params", [{}, {"id": 7}, {"id": ""}, ["tsk-1"]],
                         ids=["no-id", "number-id", "empty-id", "array-params"])
def test_subscribe_with_bad_params(url: str, version: str, params: Any) -> None:
    assert_plain_error(post_stream(url, version, "subscribe", params), -32602, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_subscribe_to_a_denied_task_looks_like_an_unknown_one(url: str, version: str) -> None:
    hidden = new_task(url, version, f"ask {HIDDEN}")
    denied = post_stream(url, version, "subscribe", {"id": hidden["id"]})
    missing = post_stream(url, version, "subscribe", {"id": "tsk-nope"})
    assert_plain_error(denied, -32001, version)
    assert denied.content.replace(hidden["id"].encode(), b"<id>") == (
        missing.content.replace(b"tsk-nope", b"<id>"))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_request_id_is_echoed_whatever_its_type(url: str, version: str) -> None:
    for request_id in (0, 12345, "abc"):
        response = post_stream(url, version, "subscribe", {"id": "tsk-nope"}, request_id)
        assert_plain_error(response, -32001, version, request_id)


# -- SendStreamingMessage / message/stream -------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_stream_a_message_to_an_unknown_task(url: str, version: str) -> None:
    response = post_stream(url, version, "stream", continuation(version, "tsk-nope"))
    assert_plain_error(response, -32001, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_stream_a_message_to_a_terminal_task(url: str, version: str) -> None:
    done = new_task(url, version, "hello")
    response = post_stream(url, version, "stream", continuation(version, done["id"]))
    assert_plain_error(response, -32004, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_stream_a_message_to_a_denied_task(url: str, version: str) -> None:
    hidden = new_task(url, version, f"ask {HIDDEN}")
    response = post_stream(url, version, "stream", continuation(version, hidden["id"]))
    assert_plain_error(response, -32001, version)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bad", ["no-parts", "no-message-id", "no-message"])
def test_stream_with_bad_params(url: str, version: str, bad: str) -> None:
    message = user_message("x", version)
    if bad == "no-parts":
        del message["parts"]
    elif bad == "no-message-id":
        del message["messageId"]
    params = {} if bad == "no-message" else {"message": message}
    assert_plain_error(post_stream(url, version, "stream", params), -32602, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_streaming_turned_off_is_plain_json_too(version: str) -> None:
    app = A2AApp(Tasks(), card=CardSettings(overrides={"capabilities": {"streaming": False}}))
    with served(app) as handle:
        sent = post_stream(handle.url, version, "stream", {"message": user_message("x", version)})
        subscribed = post_stream(handle.url, version, "subscribe", {"id": "tsk-nope"})
    assert_plain_error(sent, -32004, version)
    assert_plain_error(subscribed, -32004, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_good_stream_is_still_sse(url: str, version: str) -> None:
    waiting = new_task(url, version, "ask")
    response = post_stream(url, version, "stream", continuation(version, waiting["id"], "ask"))
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = list(parse_sse(iter(response.text.splitlines())))
    assert events and all("result" in e.data for e in events)
    assert unwrap(events[0].data["result"], version)["id"] == waiting["id"]


# -- once the stream has begun ---------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_an_error_after_the_first_event_is_an_sse_event(tmp_path: Path, version: str) -> None:
    """The store refuses the run's last write (another connection holds the write lock)."""
    path = tmp_path / "tasks.sqlite3"
    agent = Tasks()
    app = A2AApp(
        agent,
        store=SQLiteTaskStore(path, busy_timeout=0.3),
        streams=StreamSettings(heartbeat_interval=0.05),
    )
    holder = sqlite3.connect(path, isolation_level=None)
    with served(app) as handle, Peer(handle.url, version).stream(
            "stream", {"message": user_message("gate", version)}) as (response, events):
        assert response.headers["Content-Type"].startswith("text/event-stream")
        first = next(events)
        assert "result" in first.data
        holder.execute("BEGIN EXCLUSIVE")
        try:
            agent.gate.set()
            rest = list(events)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
    assert rest, "the stream ended without a word"
    assert all("result" in e.data for e in rest[:-1])
    last = rest[-1].data
    assert last["id"] == "stream-1" and last["error"]["code"] == -32603, last
    check_response("error", last, version)
