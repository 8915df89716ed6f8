"""The dev-1.1 task generation preview over real HTTP: negotiated, counted, held, matched.

Plain requests (support.a2a_http), so the wire is checked as bytes the server sent,
not through our own codec.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.a2a_http import Peer, served, state_of, user_message

from a2a_core._generations import GENERATIONS_EXTENSION_URI as URI
from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, input_required, reply
from a2a_wsgi.settings import LimitSettings, ProtocolSettings, RuntimeSettings

pytestmark = pytest.mark.slow

PREVIEW = {"A2A-Extensions": URI}


class Turns(Agent):
    """``chunks:N`` emits N artifact updates then completes; ``wait`` blocks on the gate;
    ``stop`` completes; anything else asks for more input."""

    name = "Turns"

    def __init__(self) -> None:
        self.gate = threading.Event()

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        kind, _, arg = (message.text or "").partition(":")
        if kind == "chunks":
            for n in range(int(arg)):
                context.emit_artifact(f"c{n}", artifact_id="a", append=n > 0)
            return reply("done")
        if kind == "wait":
            context.emit_status(TaskState.WORKING, "waiting")
            self.gate.wait(10)
            return reply("released")
        return reply("bye") if kind == "stop" else input_required("more?")


@pytest.fixture(scope="module")
def agent() -> Turns:
    return Turns()


@pytest.fixture(scope="module")
def on(agent: Turns) -> Iterator[str]:
    app = A2AApp(agent, protocol=ProtocolSettings(preview_generations=True))
    with served(app) as handle:
        yield handle.url
    agent.gate.set()
    app.close()


@pytest.fixture(scope="module")
def off() -> Iterator[str]:
    app = A2AApp(Turns())
    with served(app) as handle:
        yield handle.url
    app.close()


def _keys(value: Any) -> set[str]:
    """Every object key anywhere in a JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _events(peer: Peer, op: str, params: Any,
            headers: dict[str, str]) -> tuple[list[dict[str, Any]], str]:
    """The stream's results, and the extensions its answer reported active."""
    with peer.stream(op, params, headers=headers) as (response, events):
        return ([event.data["result"] for event in events],
                response.headers.get("A2A-Extensions", ""))


def _generations(results: list[dict[str, Any]]) -> list[int]:
    """The generation of each status or artifact update, in stream order."""
    found = []
    for result in results:
        for member in ("statusUpdate", "artifactUpdate"):
            if member in result:
                found.append(int(result[member]["generation"]))
    return found


def test_the_card_declares_the_preview_only_when_on(on: str, off: str) -> None:
    def uris(url: str) -> list[str]:
        card = requests.get(f"{url}/.well-known/agent-card.json", timeout=5).json()
        return [e["uri"] for e in card["capabilities"].get("extensions") or []]

    assert URI in uris(on)
    assert URI not in uris(off)


@pytest.mark.parametrize("version", ["0.3", "1.0"])
def test_requests_that_do_not_negotiate_see_no_generation(on: str, version: str) -> None:
    peer = Peer(on, version)
    # 0.3 cannot negotiate it even when asking; 1.0 does not ask.
    headers = PREVIEW if version == "0.3" else {}
    sent = peer.rpc("send", {"message": user_message("chunks:3", version)}, headers=headers)
    task = sent["result"] if version == "0.3" else sent["result"]["task"]
    got = peer.rpc("get", {"id": task["id"]}, headers=headers)
    events, active = _events(peer, "stream", {"message": user_message("chunks:2", version)},
                             headers)
    for answer in (sent, got, *events):
        assert not {"generation", "currentGeneration"} & _keys(answer), answer
    assert URI not in (peer.last.headers.get("A2A-Extensions") or "") and URI not in active


def test_every_change_counts_exactly_one_over_a_hundred(on: str) -> None:
    peer = Peer(on, "1.0")
    results, active = _events(peer, "stream", {"message": user_message("chunks:99", "1.0")},
                              PREVIEW)
    assert URI in active
    generations = _generations(results)
    assert len(generations) >= 100  # 99 artifacts, WORKING, the reply, COMPLETED
    first = int(results[0]["task"]["generation"])
    assert generations == list(range(first + 1, first + 1 + len(generations)))
    task_id = results[0]["task"]["id"]
    final = peer.rpc("get", {"id": task_id}, headers=PREVIEW)["result"]
    assert int(final["generation"]) == generations[-1]
    assert state_of(final) == "completed"


def test_a_long_poll_is_held_until_the_next_change(on: str, agent: Turns) -> None:
    agent.gate.clear()
    peer = Peer(on, "1.0")
    task = peer.rpc("send", {"message": user_message("wait", "1.0"),
                             "configuration": {"returnImmediately": True}},
                    headers=PREVIEW)["result"]["task"]
    deadline = time.monotonic() + 5
    while True:  # until the agent reported WORKING: the next change is the release
        now = peer.rpc("get", {"id": task["id"]}, headers=PREVIEW)["result"]
        if state_of(now) == "working" or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert state_of(now) == "working"
    held: dict[str, Any] = {}

    def long_poll() -> None:
        held.update(Peer(on, "1.0").rpc(
            "get", {"id": task["id"], "currentGeneration": now["generation"]}, headers=PREVIEW))

    poller = threading.Thread(target=long_poll)
    poller.start()
    poller.join(0.5)
    assert poller.is_alive(), "the long-poll answered before anything changed"
    agent.gate.set()
    poller.join(10)
    assert not poller.is_alive()
    answer = held["result"]
    assert int(answer["generation"]) > int(now["generation"])
    # REST: ?currentGeneration= with a generation already passed answers at once.
    rest = requests.get(f"{on}/rest/tasks/{task['id']}",
                        params={"currentGeneration": now["generation"]},
                        headers={"A2A-Version": "1.0", **PREVIEW}, timeout=5)
    assert rest.status_code == 200 and int(rest.json()["generation"]) >= int(answer["generation"])


def test_a_terminal_task_is_not_held(on: str) -> None:
    peer = Peer(on, "1.0")
    task = peer.rpc("send", {"message": user_message("stop", "1.0")},
                    headers=PREVIEW)["result"]["task"]
    assert state_of(task) == "completed"
    answered = threading.Event()
    hold = {"id": task["id"], "currentGeneration": task["generation"]}
    threading.Thread(target=lambda: (Peer(on, "1.0").rpc("get", hold, headers=PREVIEW),
                                     answered.set())).start()
    assert answered.wait(10)  # a hold would last the server's 30 s


def test_a_mismatched_if_generation_match_is_refused(on: str) -> None:
    peer = Peer(on, "1.0")
    task = peer.rpc("send", {"message": user_message("hello", "1.0")},
                    headers=PREVIEW)["result"]["task"]
    assert state_of(task) == "input-required"
    current = int(task["generation"])

    def again(generation: int) -> dict[str, Any]:
        return {"message": user_message("more", "1.0", task_id=task["id"]),
                "configuration": {"ifGenerationMatch": str(generation)}}

    refused = peer.rpc("send", again(current - 1), headers=PREVIEW)
    assert refused["error"]["code"] == -32010
    rest = requests.post(f"{on}/rest/message:send", data=json.dumps(again(current - 1)),
                         headers={"Content-Type": "application/json", "A2A-Version": "1.0",
                                  **PREVIEW}, timeout=5)
    assert rest.status_code == 409
    accepted = peer.rpc("send", again(current), headers=PREVIEW)
    assert int(accepted["result"]["task"]["generation"]) > current
    # Without the extension the field is not read: the same stale value is no error.
    plain = peer.rpc("send", again(current - 1))
    assert "result" in plain


def test_a_long_poll_hold_takes_a_stream_place() -> None:
    agent = Turns()
    app = A2AApp(
        agent,
        protocol=ProtocolSettings(preview_generations=True),
        limits=LimitSettings(max_streams=1),
    )
    with served(app) as handle:
        peer = Peer(handle.url, "1.0")
        task = peer.rpc("send", {"message": user_message("hello", "1.0")},
                        headers=PREVIEW)["result"]["task"]
        hold = {"id": task["id"], "currentGeneration": task["generation"]}
        first = threading.Thread(target=lambda: Peer(handle.url, "1.0").rpc(
            "get", hold, headers=PREVIEW))
        first.start()
        time.sleep(0.3)  # the first hold has the only place
        body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": hold}
        busy = requests.post(handle.url, json=body, timeout=5,
                             headers={"A2A-Version": "1.0", **PREVIEW})
        assert busy.status_code == 503 and busy.headers.get("Retry-After")
        # A plain GetTask needs no place.
        assert "result" in peer.rpc("get", {"id": task["id"]}, headers=PREVIEW)
        peer.rpc("send", {"message": user_message("stop", "1.0", task_id=task["id"])},
                 headers=PREVIEW)  # the change ends the first hold
        first.join(10)
        assert not first.is_alive()
    app.close()


def _fixed_app(preview: bool) -> A2AApp:
    """An app whose ids and clock are fixed, so two of them answer byte for byte alike."""
    from datetime import datetime, timezone
    from itertools import count

    numbers = count(1)
    return A2AApp(
        Turns(),
        protocol=ProtocolSettings(preview_generations=preview),
        runtime=RuntimeSettings(
            id_factory=lambda prefix: f"{prefix}-{next(numbers)}",
            clock=lambda: datetime(2026, 1, 1, tzinfo=timezone.utc),
        ),
    )


@pytest.mark.parametrize("version", ["0.3", "1.0"])
def test_without_negotiation_the_wire_is_byte_identical_to_preview_off(version: str) -> None:
    def exchange(url: str) -> list[bytes]:
        session = requests.Session()
        headers = {"A2A-Version": version, "Content-Type": "application/json"}

        def post(method: str, params: Any) -> bytes:
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            answer = session.post(url, data=json.dumps(body), headers=headers, timeout=5)
            return answer.content

        names = {"0.3": ("message/send", "tasks/get", "message/stream"),
                 "1.0": ("SendMessage", "GetTask", "SendStreamingMessage")}[version]
        sent = post(names[0], {"message": user_message("chunks:3", version, message_id="m1")})
        task_id = json.loads(sent)["result"]
        task_id = (task_id if version == "0.3" else task_id["task"])["id"]
        got = post(names[1], {"id": task_id})
        streamed = post(names[2], {"message": user_message("chunks:2", version,
                                                           message_id="m2")})
        card = session.get(f"{url}/.well-known/agent-card.json", timeout=5).content
        return [sent, got, streamed, card]

    answers = []
    for preview in (False, True):
        app = _fixed_app(preview)
        with served(app) as handle:
            answers.append(exchange(handle.url))
        app.close()
    off, on = answers
    assert off[:3] == on[:3]  # every answer, byte for byte
    assert json.loads(on[3])["capabilities"]["extensions"][0]["uri"] == URI  # only the card
