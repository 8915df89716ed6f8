"""The a2a_wsgi.access line and the a2a_wsgi.tasks lines, over real HTTP."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator

import pytest
import requests
from support.a2a_http import Peer, user_message
from telemetry_support import access_lines, serving, wait_until

from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._serve import ServerHandle
from a2a_wsgi._telemetry._access import request_id
from a2a_wsgi.settings import StreamSettings

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"


def echo(msg: Message, ctx: AgentContext) -> object:
    return reply(f"echo: {msg.text}")


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="a2a_wsgi")
    return caplog


@pytest.fixture
def server() -> Iterator[ServerHandle]:
    with serving(A2AApp(Agent.from_function(echo, name="Echo"))) as handle:
        yield handle


def test_a_send_is_one_line_with_its_fields(server: ServerHandle,
                                            logs: pytest.LogCaptureFixture) -> None:
    peer = Peer(server.url, "1.0")
    answer = peer.rpc("send", {"message": user_message("hello", "1.0")},
                      headers={"traceparent": TRACEPARENT, "X-Request-Id": "req-abc-123"})
    task = answer["result"]["task"]
    [line] = access_lines(logs.records)
    assert line.levelno == logging.INFO
    assert (line.operation, line.a2a_version, line.binding) == ("SendMessage", "1.0", "JSONRPC")
    assert (line.task_id, line.context_id) == (task["id"], task["contextId"])
    assert (line.http_status, line.error_code, line.error_reason) == (200, None, None)
    assert (line.request_id, line.rpc_id, line.trace_id) == ("req-abc-123", "req-1", TRACE)
    assert line.duration_ms > 0 and line.streamed is False and line.events is None
    assert line.http_method == "POST" and line.path == "/"
    message = line.getMessage()
    assert message.startswith("SendMessage JSONRPC 1.0 -> 200 in ")
    assert f"task={task['id']}" in message and "rid=req-abc-123" in message
    assert f"trace={TRACE}" in message
    assert peer.last is not None and peer.last.headers["X-Request-Id"] == "req-abc-123"


def test_each_task_transition_is_a_line_in_the_request_trace(
        server: ServerHandle, logs: pytest.LogCaptureFixture) -> None:
    task = Peer(server.url, "1.0").rpc("send", {"message": user_message("hi", "1.0")},
                                       headers={"traceparent": TRACEPARENT})["result"]["task"]
    lines = [r for r in logs.records if r.name == "a2a_wsgi.tasks"]
    assert [(r.from_state, r.to_state) for r in lines] == [
        (None, "submitted"), ("submitted", "working"), ("working", "completed")]
    assert {(r.task_id, r.trace_id) for r in lines} == {(task["id"], TRACE)}
    assert lines[-1].getMessage() == f"task {task['id']} working -> completed"


@pytest.mark.parametrize("sent", [None, "", "bad id with spaces", "x" * 129, "new\nline"])
def test_a_request_id_is_made_when_none_usable_is_sent(
        server: ServerHandle, logs: pytest.LogCaptureFixture, sent: str | None) -> None:
    headers = {"A2A-Version": "1.0"} if sent is None else {"A2A-Version": "1.0",
                                                            "X-Request-Id": sent}
    try:
        answer = requests.get(server.url + "/rest/tasks/t-1", headers=headers, timeout=10)
    except ValueError:  # requests refuses to send a header with a line break
        answer = requests.get(server.url + "/rest/tasks/t-1",
                              headers={"A2A-Version": "1.0", "X-Request-Id": "new line"},
                              timeout=10)
    [line] = access_lines(logs.records)
    assert answer.headers["X-Request-Id"] == line.request_id
    assert len(line.request_id) == 16 and int(line.request_id, 16) >= 0
    assert line.request_id != sent


def test_two_requests_get_two_request_ids(server: ServerHandle,
                                          logs: pytest.LogCaptureFixture) -> None:
    for _ in range(2):
        requests.get(server.url + "/rest/tasks/t-1", timeout=10)
    assert len({line.request_id for line in access_lines(logs.records)}) == 2


def test_forked_workers_do_not_repeat_each_others_request_ids() -> None:
    # Made-up ids come from the process's PRNG; gunicorn forks every worker from one
    # master, so each child must draw from a sequence of its own (random reseeds at fork).
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next id, then out without the parent's cleanup
        os.write(write_end, request_id({}).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(write_end)
    child = os.read(read_end, 64).decode()
    os.close(read_end)
    assert len(child) == 16 and child != request_id({})


@pytest.mark.parametrize("header", [
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  # upper case
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # all-zero trace
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # all-zero parent
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # version ff
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  # 00 has no more fields
    "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  # short trace id
    "garbage",
])
def test_an_invalid_traceparent_is_not_honoured(server: ServerHandle,
                                                logs: pytest.LogCaptureFixture,
                                                header: str) -> None:
    Peer(server.url, "1.0").rpc("get", {"id": "t-1"}, headers={"traceparent": header})
    [line] = access_lines(logs.records)
    assert line.trace_id != TRACE.upper() and line.trace_id != TRACE
    assert line.trace_id != "0" * 32


def test_a_later_version_traceparent_is_read_for_its_known_fields(
        server: ServerHandle, logs: pytest.LogCaptureFixture) -> None:
    Peer(server.url, "1.0").rpc("get", {"id": "t-1"},
                                headers={"traceparent": f"01-{TRACE}-{PARENT}-01-future"})
    [line] = access_lines(logs.records)
    assert line.trace_id == TRACE


def test_a_failure_names_the_a2a_error(server: ServerHandle,
                                       logs: pytest.LogCaptureFixture) -> None:
    Peer(server.url, "1.0").rpc("get", {"id": "no-such-task"})
    requests.get(server.url + "/rest/tasks/no-such-task", timeout=10)
    rpc, rest = access_lines(logs.records)
    assert (rpc.binding, rpc.http_status, rpc.error_code, rpc.error_reason) == (
        "JSONRPC", 200, -32001, "TASK_NOT_FOUND")
    assert (rest.binding, rest.http_status, rest.error_code, rest.error_reason) == (
        "HTTP+JSON", 404, -32001, "TASK_NOT_FOUND")
    assert rpc.operation == rest.operation == "GetTask"
    assert rpc.task_id == rest.task_id == "no-such-task"
    assert "-> 200 TASK_NOT_FOUND(-32001)" in rpc.getMessage()


def test_bad_params_and_an_unknown_method(server: ServerHandle,
                                          logs: pytest.LogCaptureFixture) -> None:
    peer = Peer(server.url, "1.0")
    peer.rpc("send", {"message": {"role": "ROLE_USER"}})
    peer.post({"jsonrpc": "2.0", "id": 7, "method": "Evil\nInjected: yes", "params": {}})
    bad, unknown = access_lines(logs.records)
    assert (bad.operation, bad.error_code, bad.error_reason) == (
        "SendMessage", -32602, "INVALID_PARAMS")
    assert (unknown.operation, unknown.error_code, unknown.rpc_id) == (None, -32601, 7)
    assert "Injected" not in unknown.getMessage()  # a method we do not know is not echoed
    assert unknown.getMessage().startswith("POST / JSONRPC 1.0 -> 200 METHOD_NOT_FOUND(-32601)")


def test_client_chosen_ids_are_made_safe_for_a_line(server: ServerHandle,
                                                    logs: pytest.LogCaptureFixture) -> None:
    hostile = "evil\r\n2026-01-01 INFO forged line\x1b[31m" + "x" * 200
    Peer(server.url, "1.0").rpc("get", {"id": hostile}, request_id=hostile)
    [line] = access_lines(logs.records)
    for value in (line.task_id, line.rpc_id, line.getMessage()):
        assert "\n" not in value and "\r" not in value and "\x1b" not in value
    assert len(line.task_id) == len(line.rpc_id) == 128


def boom(msg: Message, ctx: AgentContext) -> object:
    raise RuntimeError("the agent broke")


def test_an_agent_exception_is_a_failed_task_not_a_failed_request(
        logs: pytest.LogCaptureFixture) -> None:
    with serving(A2AApp(Agent.from_function(boom, name="Boom"))) as handle:
        task = Peer(handle.url, "1.0").send("hi")
    [line] = access_lines(logs.records)
    assert (line.http_status, line.error_code, line.task_id) == (200, None, task["id"])
    states = [r.to_state for r in logs.records if r.name == "a2a_wsgi.tasks"]
    assert states[-1] == "failed"


class Gate:
    def __init__(self) -> None:
        self.open = threading.Event()

    def agent(self, msg: Message, ctx: AgentContext) -> object:
        ctx.emit_status(TaskState.WORKING, "on it")
        self.open.wait(10)
        return reply("done")


def test_a_stream_is_logged_when_it_ends(logs: pytest.LogCaptureFixture) -> None:
    gate = Gate()
    with serving(A2AApp(Agent.from_function(gate.agent, name="Slow"))) as handle:
        peer = Peer(handle.url, "1.0")
        params = {"message": user_message("go", "1.0")}
        with peer.stream("stream", params, headers={"traceparent": TRACEPARENT}) as (_, events):
            first = next(events)
            assert access_lines(logs.records) == []  # open: nothing logged yet
            gate.open.set()
            received = [first, *events]
        [line] = wait_until(lambda: access_lines(logs.records))
    task_id = received[0].data["result"]["task"]["id"]
    assert (line.operation, line.streamed, line.stream_end) == (
        "SendStreamingMessage", True, "complete")
    assert (line.events, line.task_id, line.trace_id) == (len(received), task_id, TRACE)
    assert line.rpc_id == "stream-1" and len(received) >= 3
    assert f"stream complete after {len(received)} events" in line.getMessage()


def test_a_stream_the_client_leaves_is_logged_as_such(
        logs: pytest.LogCaptureFixture) -> None:
    gate = Gate()
    app = A2AApp(
        Agent.from_function(gate.agent, name="Slow"),
        streams=StreamSettings(heartbeat_interval=0.1),
    )
    with serving(app) as handle:
        try:
            with Peer(handle.url, "1.0").stream(
                    "stream", {"message": user_message("go", "1.0")}) as (_, events):
                next(events)
            [line] = wait_until(lambda: access_lines(logs.records))
        finally:
            gate.open.set()
    assert (line.streamed, line.stream_end, line.http_status) == (True, "client gone", 200)
    assert line.events >= 1


def test_the_line_goes_through_ordinary_logging_config(server: ServerHandle) -> None:
    """A handler on the logger (what dictConfig, Django's LOGGING or gunicorn's
    logconfig_dict set up) gets the line with its fields as record attributes."""
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    access = logging.getLogger("a2a_wsgi.access")
    access.addHandler(handler)
    level = access.level
    access.setLevel(logging.INFO)
    try:
        requests.get(server.url + "/rest/tasks/t-9", timeout=10)
    finally:
        access.removeHandler(handler)
        access.setLevel(level)
    [line] = seen
    formatted = logging.Formatter("%(operation)s %(http_status)s %(task_id)s").format(line)
    assert formatted == "GetTask 404 t-9"


def test_the_card_is_a_line_of_its_own_binding(server: ServerHandle,
                                               logs: pytest.LogCaptureFixture) -> None:
    first = requests.get(server.url + "/.well-known/agent-card.json", timeout=10)
    requests.get(server.url + "/.well-known/agent-card.json", timeout=10,
                 headers={"If-None-Match": first.headers["ETag"]})
    fresh, cached = access_lines(logs.records)
    assert (fresh.binding, fresh.operation, fresh.http_status) == ("card", None, 200)
    assert (cached.binding, cached.http_status) == ("card", 304)
    assert fresh.getMessage().startswith("GET /.well-known/agent-card.json card -> 200 in ")
