"""Retried sends over real HTTP: a retry answers what its first send would answer now.

A send repeated with the same messageId *and* the same request is a retry: it
makes no second task. While a run of its task is active, a blocking retry
waits for the task to settle, but every wait ends (the run ends, the client
hangs up, ``retry_wait_timeout``); with no run active it answers at once. A
reused messageId with a different request is a new send (docs/protocol.md,
"Retried sends").
"""

from __future__ import annotations

import base64
import json
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import requests
from support.a2a_http import METHODS, Peer, served, state_of, texts, unwrap, user_message

from a2a_core import wire
from a2a_core._idempotency import request_fingerprint
from a2a_core.models import Message, SendMessageRequest, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._agent import working
from a2a_wsgi._runtime import Runtime
from a2a_wsgi.settings import CardSettings, RuntimeSettings, StreamSettings
from a2a_wsgi.stores import SQLiteTaskStore

#: Gates the ``hold:NAME`` agent waits on; the tests open them.
GATES: dict[str, threading.Event] = {}


class RetryAgent(Agent):
    """``working[:S]`` leaves the task WORKING and returns (after S seconds); ``hold:NAME``
    marks the task
    WORKING, then waits for gate NAME (or a cancel) and replies; ``hang`` marks it
    WORKING and runs until canceled; anything else is echoed."""

    name = "Retry Test Agent"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        kind, _, arg = (message.text or "").partition(":")
        if kind == "working":
            time.sleep(float(arg or 0))
            return working("still at it")
        if kind in ("hold", "hang"):
            context.emit_status(TaskState.WORKING, "started")
            gate = GATES.setdefault(arg, threading.Event()) if kind == "hold" else None
            deadline = time.monotonic() + 30
            while not context.is_cancelled() and time.monotonic() < deadline:
                if gate is not None and gate.is_set():
                    return reply("released")
                time.sleep(0.02)
            return None
        return reply(message.text or "")


def build_app(store: str = "memory", **runtime: Any) -> A2AApp:
    return A2AApp(
        RetryAgent(),
        base_url="http://127.0.0.1/",
        store=store,
        card=CardSettings(overrides={"capabilities": {"push_notifications": True}}),
        streams=StreamSettings(heartbeat_interval=0.2),
        runtime=RuntimeSettings(**runtime),
    )


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return "memory" if request.param == "memory" else f"sqlite:///{tmp_path / 't.sqlite3'}"


@pytest.fixture
def serve_app() -> Iterator[Callable[..., str]]:
    """serve_app(app) -> its URL; every server is stopped (and its app closed) after."""
    stack: list[Any] = []

    def start(app: A2AApp) -> str:
        context = served(app)
        stack.append(context)
        return context.__enter__().url + "/"

    yield start
    for context in reversed(stack):
        for gate in GATES.values():
            gate.set()  # no agent may outlive its server
        context.__exit__(None, None, None)
    GATES.clear()


def send_params(text: str, message_id: str, version: str = "1.0",
                **config: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"message": user_message(text, version, message_id=message_id)}
    if config:
        params["configuration"] = config
    return params


def call(url: str, op: str, params: Any, version: str = "1.0", *,
         timeout: float = 10) -> tuple[dict[str, Any], float]:
    """One call on a fresh connection, closed after it; (the response, seconds it took)."""
    headers = {"Connection": "close", **({"A2A-Version": "1.0"} if version == "1.0" else {})}
    body = {"jsonrpc": "2.0", "id": 1, "method": METHODS[op][version], "params": params}
    started = time.monotonic()
    response = requests.post(url, json=body, headers=headers, timeout=timeout)
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    return dict(response.json()), elapsed


def post_send(url: str, params: dict[str, Any], version: str = "1.0", *,
              timeout: float = 10) -> tuple[dict[str, Any], float]:
    """One SendMessage; (the Task or Message it answered, seconds it took)."""
    answer, elapsed = call(url, "send", params, version, timeout=timeout)
    assert "result" in answer, answer
    return unwrap(answer["result"], version), elapsed


def result(url: str, op: str, params: Any, version: str = "1.0") -> Any:
    answer, _ = call(url, op, params, version)
    assert "result" in answer, answer
    return answer["result"]


def get_task(url: str, task_id: str) -> dict[str, Any]:
    return dict(result(url, "get", {"id": task_id}))


def listed(url: str) -> list[dict[str, Any]]:
    return list(result(url, "list", {})["tasks"])


def task_count(url: str) -> int:
    return len(listed(url))


def request_threads() -> int:
    """werkzeug's threads that handle one request each (this process serves the app)."""
    return sum(1 for t in threading.enumerate() if "process_request" in t.name)


def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def raw_send(url: str, params: dict[str, Any], method: str = "SendMessage") -> socket.socket:
    """Send a 1.0 call on a raw socket and leave the answer unread."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    sock = socket.create_connection((host, int(port)))
    sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Accept: text/event-stream\r\nA2A-Version: 1.0\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    return sock


def read_until(sock: socket.socket, marker: bytes, timeout: float = 5) -> bytes:
    """What the server sent, up to and including ``marker``."""
    sock.settimeout(timeout)
    seen = b""
    while marker not in seen:
        chunk = sock.recv(4096)
        assert chunk, f"the server closed before {marker!r}: {seen!r}"
        seen += chunk
    return seen


def hang_up(sock: socket.socket) -> None:
    """Close with a TCP RST, as a crashed or timed-out client does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def first_send_in_background(url: str, params: dict[str, Any]
                             ) -> tuple[ThreadPoolExecutor, Any]:
    pool = ThreadPoolExecutor(1)
    return pool, pool.submit(post_send, url, params, timeout=30)


def wait_for_one_task(url: str) -> dict[str, Any]:
    assert wait_until(lambda: task_count(url) == 1, 5)
    return listed(url)[0]


# -- a retry of a task no run is working on ----------------------------------------------------


def test_32_concurrent_retries_of_a_send_left_working_all_answer_at_once(
        serve_app: Callable[..., str], store: str) -> None:
    url = serve_app(build_app(store))
    params = send_params("working", "left-working")
    first, _ = post_send(url, params)
    assert state_of(first) == "working"
    with ThreadPoolExecutor(32) as pool:
        answers = list(pool.map(lambda _: post_send(url, params, timeout=5), range(32)))
    assert [task["id"] for task, _ in answers] == [first["id"]] * 32
    assert {state_of(task) for task, _ in answers} == {"working"}
    assert max(elapsed for _, elapsed in answers) < 1.0
    # The server still serves: a card, a GetTask, and one task only.
    assert requests.get(url + ".well-known/agent-card.json", timeout=5).status_code == 200
    assert state_of(get_task(url, first["id"])) == "working"
    assert task_count(url) == 1


def test_a_retried_stream_of_a_send_left_working_is_the_task_and_ends(
        serve_app: Callable[..., str], store: str) -> None:
    url = serve_app(build_app(store))
    params = send_params("working", "stream-left-working")
    first, _ = post_send(url, params)
    started = time.monotonic()
    with Peer(url).stream("stream", params) as (_, events):
        seen = [event.data["result"] for event in events]
    assert time.monotonic() - started < 1.0
    assert [(r["task"]["id"], state_of(r["task"])) for r in seen] == [(first["id"], "working")]


def test_a_retry_of_a_finished_task_answers_its_final_state(
        serve_app: Callable[..., str]) -> None:
    url = serve_app(build_app())
    params = send_params("echo me", "finished")
    first, _ = post_send(url, params)
    again, elapsed = post_send(url, params)
    assert again["id"] == first["id"] and state_of(again) == "completed"
    assert texts(again["artifacts"][0]["parts"]) == ["echo me"] and elapsed < 1.0


def test_two_sends_of_one_request_at_once_make_one_task_and_both_answer(
        serve_app: Callable[..., str], store: str) -> None:
    """Both run the agent (neither finds the other's task yet); the second to store its
    task finds the message claimed and answers the first's task, without waiting for ever
    on a task the agent left WORKING."""
    url = serve_app(build_app(store))
    params = send_params("working:0.3", "at-once")
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: post_send(url, params, timeout=5), range(2)))
    assert answers[0][0]["id"] == answers[1][0]["id"]
    assert {state_of(task) for task, _ in answers} == {"working"}
    assert max(elapsed for _, elapsed in answers) < 2.0
    assert task_count(url) == 1


# -- a retry while the first send still runs -------------------------------------------------


def test_a_retry_while_the_first_send_runs_waits_for_the_settled_task(
        serve_app: Callable[..., str], store: str) -> None:
    url = serve_app(build_app(store))
    params = send_params("hold:settle", "while-running")
    pool, first = first_send_in_background(url, params)
    with pool:
        running = wait_for_one_task(url)
        threading.Timer(1.0, GATES.setdefault("settle", threading.Event()).set).start()
        again, elapsed = post_send(url, params)
        original, _ = first.result(timeout=10)
    assert again["id"] == original["id"] == running["id"]
    assert state_of(again) == state_of(original) == "completed"
    assert texts(again["artifacts"][0]["parts"]) == ["released"]
    assert 0.3 < elapsed < 5


def test_a_retry_whose_client_hangs_up_frees_its_thread(
        serve_app: Callable[..., str], store: str) -> None:
    url = serve_app(build_app(store))
    params = send_params("hold:hangup", "hang-up")
    pool, first = first_send_in_background(url, params)
    with pool:
        wait_for_one_task(url)
        assert wait_until(lambda: request_threads() == 1, 5)  # the first send's
        sock = raw_send(url, params)
        assert wait_until(lambda: request_threads() == 2, 5)
        readable, _, _ = select.select([sock], [], [], 0.6)
        assert readable == []  # the retry is waiting for the held task
        hang_up(sock)
        started = time.monotonic()
        assert wait_until(lambda: request_threads() == 1, 3), "the retry's thread is still busy"
        assert time.monotonic() - started < 1.5
        GATES["hangup"].set()
        original, _ = first.result(timeout=10)
    assert state_of(original) == "completed"


def test_the_wait_limit_ends_a_retry_against_an_agent_that_never_settles(
        serve_app: Callable[..., str], store: str) -> None:
    url = serve_app(build_app(store, retry_wait_timeout=0.5))
    params = send_params("hang", "never-settles")
    pool, first = first_send_in_background(url, params)
    with pool:
        running = wait_for_one_task(url)
        again, elapsed = post_send(url, params)
        assert again["id"] == running["id"] and state_of(again) == "working"
        assert 0.45 < elapsed < 2.5
        result(url, "cancel", {"id": running["id"]})
        original, _ = first.result(timeout=10)
    assert state_of(original) == "canceled"


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_a_repeat_after_the_task_moved_on_is_a_new_send_and_its_own_retries_find_it(
        serve_app: Callable[..., str], store: str, version: str) -> None:
    """A client that lost the answer never learned the task id, so it cannot have continued
    or canceled the task: a repeat after a continuation or a cancel is a new send (the 1.0
    conformance kit sends such repeats), and a retry of that new send answers it."""
    url = serve_app(build_app(store))
    params = send_params("working", f"moved-on-{version}", version)
    first, _ = post_send(url, params, version)
    assert result(url, "cancel", {"id": first["id"]}, version)
    second, _ = post_send(url, params, version)
    assert second["id"] != first["id"] and state_of(second) == "working"
    retried, elapsed = post_send(url, params, version)
    assert retried["id"] == second["id"] and elapsed < 1.0
    follow_up = user_message("more", version, message_id=f"follow-{version}")
    follow_up["taskId"] = second["id"]
    post_send(url, {"message": follow_up}, version)  # the client continued the second task
    third, _ = post_send(url, params, version)
    assert third["id"] not in (first["id"], second["id"])
    again, _ = post_send(url, params, version)
    assert again["id"] == third["id"]
    assert task_count(url) == 3


def test_a_live_lease_of_another_worker_makes_a_retry_wait_an_expired_one_does_not(
        serve_app: Callable[..., str], tmp_path: Path) -> None:
    """Another process's run is seen through its lease: live, the retry waits for it;
    expired (its worker died), nothing runs the task and the retry answers at once."""
    path = tmp_path / "leases.sqlite3"
    url = serve_app(build_app(f"sqlite:///{path}", retry_wait_timeout=0.6))
    params = send_params("working", "leased-elsewhere")
    first, _ = post_send(url, params)
    other = SQLiteTaskStore(path)
    try:
        now = datetime.now(timezone.utc)
        assert other.acquire_lease(first["id"], "elsewhere:1:x", now + timedelta(seconds=30),
                                   now=now)
        again, elapsed = post_send(url, params)
        assert again["id"] == first["id"] and state_of(again) == "working"
        assert 0.55 < elapsed < 3.0
        other.release_lease(first["id"], "elsewhere:1:x")
        assert other.acquire_lease(first["id"], "dead:2:y", now - timedelta(seconds=1), now=now)
        again, elapsed = post_send(url, params)
        assert again["id"] == first["id"] and elapsed < 0.5
    finally:
        other.close()


def test_a_negative_wait_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="retry_wait_timeout"):
        Runtime(RetryAgent(), RuntimeSettings(retry_wait_timeout=-1))


# -- other waits end when the client hangs up -------------------------------------------------


@pytest.mark.parametrize("method", ["SendStreamingMessage", "SubscribeToTask"])
def test_a_stream_whose_client_hangs_up_frees_its_thread_before_the_next_heartbeat(
        serve_app: Callable[..., str], method: str) -> None:
    app = A2AApp(
        RetryAgent(),
        base_url="http://127.0.0.1/",
        streams=StreamSettings(heartbeat_interval=30, resubscribe_timeout=60),
    )
    url = serve_app(app)
    params = send_params("hold:stream", "streamed")
    sock = raw_send(url, params, "SendStreamingMessage")
    read_until(sock, b"TASK_STATE_WORKING")
    if method == "SubscribeToTask":
        task = wait_for_one_task(url)
        hang_up(sock)
        sock = raw_send(url, {"id": task["id"]}, method)
        read_until(sock, b"TASK_STATE_WORKING")
    assert wait_until(lambda: request_threads() == 1, 5)
    hang_up(sock)
    started = time.monotonic()
    assert wait_until(lambda: request_threads() == 0, 3), "the stream's thread is still busy"
    assert time.monotonic() - started < 2.0
    GATES["stream"].set()


# -- a reused messageId with a different request -----------------------------------------------


def _push_urls(url: str, task_id: str, version: str) -> list[str]:
    if version == "0.3":
        found = result(url, "push_list", {"id": task_id}, version)
        return [c["pushNotificationConfig"]["url"] for c in found]
    found = result(url, "push_list", {"taskId": task_id}, version)["configs"]
    return [c["url"] for c in found]


def _push_config(version: str) -> dict[str, Any]:
    hook = {"url": "https://hooks.example/retry", "token": "tok"}
    key = "pushNotificationConfig" if version == "0.3" else "taskPushNotificationConfig"
    return {key: hook}


@pytest.mark.parametrize("version", ["0.3", "1.0"])
def test_a_reused_message_id_with_other_text_is_a_new_task(
        serve_app: Callable[..., str], version: str) -> None:
    url = serve_app(build_app())
    one, _ = post_send(url, send_params("one", "reused", version), version)
    two, _ = post_send(url, send_params("two", "reused", version), version)
    assert two["id"] != one["id"]
    assert texts(two["artifacts"][0]["parts"]) == ["two"]
    two_again, _ = post_send(url, send_params("two", "reused", version), version)
    one_again, _ = post_send(url, send_params("one", "reused", version), version)
    assert (two_again["id"], one_again["id"]) == (two["id"], one["id"])
    assert task_count(url) == 2


@pytest.mark.parametrize("version", ["0.3", "1.0"])
def test_a_reused_message_id_with_a_push_config_is_a_new_task_that_keeps_it(
        serve_app: Callable[..., str], version: str) -> None:
    url = serve_app(build_app())
    plain, _ = post_send(url, send_params("hi", "with-push", version), version)
    params = send_params("hi", "with-push", version, **_push_config(version))
    pushed, _ = post_send(url, params, version)
    assert pushed["id"] != plain["id"]
    assert _push_urls(url, pushed["id"], version) == ["https://hooks.example/retry"]
    assert _push_urls(url, plain["id"], version) == []
    again, _ = post_send(url, params, version)
    assert again["id"] == pushed["id"]
    assert _push_urls(url, pushed["id"], version) == ["https://hooks.example/retry"]
    assert task_count(url) == 2


@pytest.mark.parametrize("change", [
    {"configuration": {"returnImmediately": True}},
    {"configuration": {"historyLength": 1}},
    {"configuration": {"acceptedOutputModes": ["text/plain"]}},
    {"metadata": {"trace": "x"}},
    {"message": {"metadata": {"k": 1}}},
    {"message": {"extensions": ["https://ext.example/a"]}},
    {"message": {"referenceTaskIds": ["tsk-other"]}},
    {"message": {"contextId": "ctx-chosen"}},
])
def test_any_other_difference_in_the_request_is_a_new_task(
        serve_app: Callable[..., str], change: dict[str, Any]) -> None:
    url = serve_app(build_app())
    base = send_params("same", "differs")
    first, _ = post_send(url, base)
    changed = json.loads(json.dumps(base))
    for key, value in change.items():
        changed.setdefault(key, {}).update(value)
    other, _ = post_send(url, changed)
    assert other["id"] != first["id"]


def test_the_same_request_over_0_3_and_1_0_is_one_task(serve_app: Callable[..., str]) -> None:
    url = serve_app(build_app())
    old, _ = post_send(url, send_params("both", "cross-version", "0.3"), "0.3")
    new, _ = post_send(url, send_params("both", "cross-version", "1.0"), "1.0")
    assert new["id"] == old["id"] and task_count(url) == 1


# -- the fingerprint itself ----------------------------------------------------------------------

_RAW = base64.b64encode(b"\x00\xffbytes").decode()
_V03 = {
    "message": {"kind": "message", "messageId": "m-1", "role": "user", "contextId": "ctx-1",
                "referenceTaskIds": ["t-0"], "extensions": ["https://ext.example/a"],
                "metadata": {"b": [1, 2.5, None], "a": "é"},
                "parts": [{"kind": "text", "text": "hi", "metadata": {"p": True}},
                          {"kind": "file", "file": {"bytes": _RAW, "mimeType": "x/y",
                                                    "name": "f.bin"}},
                          {"kind": "data", "data": {"n": 1}}]},
    "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 3,
                      "blocking": False,
                      "pushNotificationConfig": {"url": "https://hooks.example/",
                                                 "token": "t",
                                                 "authentication": {"schemes": ["Bearer"],
                                                                    "credentials": "c"}}},
    "metadata": {"req": 1},
}
_V10 = {
    "message": {"messageId": "m-1", "role": "ROLE_USER", "contextId": "ctx-1",
                "referenceTaskIds": ["t-0"], "extensions": ["https://ext.example/a"],
                "metadata": {"a": "é", "b": [1, 2.5, None]},
                "parts": [{"text": "hi", "metadata": {"p": True}},
                          {"raw": _RAW, "mediaType": "x/y", "filename": "f.bin"},
                          {"data": {"n": 1}}]},
    "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 3,
                      "returnImmediately": True,
                      "taskPushNotificationConfig": {"url": "https://hooks.example/",
                                                     "token": "t",
                                                     "authentication": {"scheme": "Bearer",
                                                                        "credentials": "c"}}},
    "metadata": {"req": 1},
}


def _decoded(params: dict[str, Any]) -> SendMessageRequest:
    return wire.decode(SendMessageRequest, params)


def test_a_request_has_one_fingerprint_in_both_versions() -> None:
    old, new = _decoded(_V03), _decoded(_V10)
    assert old == new  # the codecs agree, so the fingerprint can too
    print_ = request_fingerprint(old)
    assert print_ == request_fingerprint(new)
    assert len(print_) == 64 and set(print_) <= set("0123456789abcdef")


def test_the_fingerprint_ignores_the_message_id_and_spelled_out_defaults() -> None:
    plain = {"message": {"messageId": "a", "role": "ROLE_USER", "parts": [{"text": "x"}]}}
    same = json.loads(json.dumps(plain))
    same["message"].update(messageId="b", metadata={}, extensions=[], referenceTaskIds=[])
    same.update(configuration={"acceptedOutputModes": []}, metadata={})
    assert request_fingerprint(_decoded(plain)) == request_fingerprint(_decoded(same))


@pytest.mark.parametrize("path,value", [
    (("message", "parts", 0, "text"), "other"),
    (("message", "parts", 1, "raw"), base64.b64encode(b"other").decode()),
    (("message", "parts", 2, "data"), {"n": 2}),
    (("message", "metadata", "a"), "e"),
    (("message", "contextId"), "ctx-2"),
    (("configuration", "taskPushNotificationConfig", "token"), "u"),
    (("configuration", "taskPushNotificationConfig", "authentication", "credentials"), "d"),
    (("configuration", "historyLength"), 4),
    (("configuration", "returnImmediately"), False),
    (("metadata", "req"), 2),
])
def test_every_part_of_the_request_changes_the_fingerprint(
        path: tuple[Any, ...], value: Any) -> None:
    changed = json.loads(json.dumps(_V10))
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert request_fingerprint(_decoded(changed)) != request_fingerprint(_decoded(_V10))
