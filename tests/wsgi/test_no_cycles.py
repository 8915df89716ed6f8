"""A request leaves no reference cycle behind: what it made is freed when it is answered.

Objects in a cycle wait for the garbage collector, and a worker answering hundreds of
requests a second then spends its time collecting them (a 10-event stream's run, its
context and their events and locks were one cycle: about 40 objects each, and a tenth of
a gevent worker's CPU went to collections). The app is called as a WSGI server calls it,
with the collector off; afterwards one collection that keeps what it finds must find
nothing.
"""

from __future__ import annotations

import gc
import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.wsgi_calls import call, environ

from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, stream

Environ = dict[str, Any]


class Echo(Agent):
    """Echoes; ``stream N`` streams N chunks."""

    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        words = (message.text or "").split()
        if words[:1] == ["stream"]:
            return stream(f"chunk {i}" for i in range(int(words[1])))
        context.emit_status(TaskState.WORKING, "on it")
        return reply(message.text)


def _environ(method: str, path: str, body: Any = None, **headers: str) -> Environ:
    data = json.dumps(body).encode() if body is not None else b""
    return environ(method, path, data, a2a_version="1.0", **headers)


def _message(text: str) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@pytest.fixture(scope="module")
def app() -> Iterator[A2AApp]:
    served = A2AApp(Echo())
    yield served
    served.close()


@pytest.fixture(scope="module")
def makers(app: A2AApp) -> dict[str, Callable[[], Environ]]:
    """Each request's environ maker (a task to get and the card's ETag made first)."""
    _, card_headers, _ = call(app, _environ("GET", "/.well-known/agent-card.json"))
    _, _, sent = call(app, _environ("POST", "/", _rpc("SendMessage",
                                                      {"message": _message("hi")})))
    task_id = json.loads(sent)["result"]["task"]["id"]
    return {
        "SendMessage": lambda: _environ("POST", "/", _rpc("SendMessage",
                                                          {"message": _message("hello")})),
        "HTTP+JSON send": lambda: _environ("POST", "/rest/message:send",
                                           {"message": _message("hello")}),
        "10-event stream": lambda: _environ(
            "POST", "/", _rpc("SendStreamingMessage", {"message": _message("stream 10")}),
            accept="text/event-stream"),
        "GetTask": lambda: _environ("POST", "/", _rpc("GetTask", {"id": task_id})),
        "card": lambda: _environ("GET", "/.well-known/agent-card.json"),
        "card 304": lambda: _environ("GET", "/.well-known/agent-card.json",
                                     if_none_match=dict(card_headers)["ETag"]),
    }


@pytest.mark.parametrize("name", ["SendMessage", "HTTP+JSON send", "10-event stream",
                                  "GetTask", "card", "card 304"])
def test_a_request_leaves_no_cycle(app: A2AApp, makers: dict[str, Callable[[], Environ]],
                                   name: str) -> None:
    make = makers[name]
    for _ in range(5):  # warmed up: whatever is made once per app or thread exists
        call(app, make())
    time.sleep(0.2)
    gc.collect()
    gc.disable()
    try:
        for _ in range(20):
            status, _, _ = call(app, make())
            assert status.startswith(("200", "304")), status
        time.sleep(0.3)  # the agent's pool thread ends its bookkeeping after the answer
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found = [type(o).__qualname__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not found, f"{name}: {len(found)} objects in cycles, e.g. {sorted(set(found))[:12]}"
