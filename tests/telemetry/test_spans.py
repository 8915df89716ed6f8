"""OpenTelemetry spans and metrics of the server, with the SDK recording in memory."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from push_receiver import Receiver, receiver_fixture  # noqa: F401
from support.a2a_http import Peer, user_message
from telemetry_support import captured_spans, metric_total, serving, wait_until

from a2a_core._observe import TraceParent
from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"


@pytest.fixture
def spans() -> Iterator[Any]:
    with captured_spans() as capture:
        yield capture


def server_spans(spans: Any) -> list[ReadableSpan]:
    return [s for s in spans.ended() if s.kind is SpanKind.SERVER]


def named(spans: Any, name: str) -> list[ReadableSpan]:
    return [s for s in spans.ended() if s.name == name]


def hex_trace(span: ReadableSpan) -> str:
    assert span.context is not None
    return f"{span.context.trace_id:032x}"


class Seen:
    """What the agent saw of the trace while it ran."""

    def __init__(self) -> None:
        self.trace_ids: list[str] = []
        self.span_names: list[str] = []

    def agent(self, msg: Message, ctx: AgentContext) -> object:
        current = trace.get_current_span()
        self.trace_ids.append(f"{current.get_span_context().trace_id:032x}")
        self.span_names.append(getattr(current, "name", ""))
        return reply("seen")


def test_a_send_is_a_server_span_under_the_callers_trace_with_the_agent_under_it(
        spans: Any) -> None:
    seen = Seen()
    with serving(A2AApp(Agent.from_function(seen.agent, name="Seer"))) as handle:
        task = Peer(handle.url, "1.0").rpc(
            "send", {"message": user_message("hi", "1.0")},
            headers={"traceparent": TRACEPARENT})["result"]["task"]
    [server] = server_spans(spans)
    assert server.name == "A2A SendMessage"
    assert hex_trace(server) == TRACE
    assert server.parent is not None and server.parent.is_remote
    assert f"{server.parent.span_id:016x}" == PARENT
    attributes = dict(server.attributes or {})
    assert attributes["a2a.operation"] == "SendMessage"
    assert attributes["a2a.version"] == "1.0"
    assert attributes["a2a.binding"] == "JSONRPC"
    assert attributes["a2a.task_id"] == task["id"]
    assert attributes["a2a.context_id"] == task["contextId"]
    assert attributes["rpc.system"] == "jsonrpc" and attributes["rpc.method"] == "SendMessage"
    assert attributes["http.response.status_code"] == 200
    assert server.status.status_code is StatusCode.UNSET
    [agent] = named(spans, "A2A handle_message")
    assert agent.parent is not None and server.context is not None
    assert agent.parent.span_id == server.context.span_id
    assert dict(agent.attributes or {})["a2a.task_id"] == task["id"]
    assert seen.trace_ids == [TRACE] and seen.span_names == ["A2A handle_message"]
    transitions = [e for e in agent.events if e.name == "a2a.task.transition"]
    states = [dict(e.attributes or {})["a2a.task.state"] for e in transitions]
    assert states == ["submitted", "working", "completed"]


@pytest.mark.parametrize("how", ["non-blocking", "stream"])
def test_the_trace_reaches_an_agent_on_the_pool_and_its_own_calls(
        spans: Any, receiver: Receiver, how: str) -> None:
    """An agent run on the background pool runs in the request's trace: a call it makes
    with OpenTelemetry's propagator (what an instrumented requests does) joins it."""
    def calling(msg: Message, ctx: AgentContext) -> object:
        headers: dict[str, str] = {}
        propagate.inject(headers)
        requests.get(receiver.url + "/downstream", headers=headers, timeout=5)
        return reply("called")

    with serving(A2AApp(Agent.from_function(calling, name="Caller"))) as handle:
        peer = Peer(handle.url, "1.0")
        message = {"message": user_message("go", "1.0")}
        if how == "stream":
            with peer.stream("stream", message, headers={"traceparent": TRACEPARENT}) as (_, ev):
                list(ev)
        else:
            peer.rpc("send", {**message, "configuration": {"returnImmediately": True}},
                     headers={"traceparent": TRACEPARENT})
        [hit] = receiver.wait_hits("/downstream", 1)
        [agent] = wait_until(lambda: named(spans, "A2A handle_message"))
    sent = TraceParent.parse(hit.headers["Traceparent"])
    assert sent is not None and sent.trace_id == TRACE
    assert agent.context is not None and sent.span_id == f"{agent.context.span_id:016x}"
    [server] = wait_until(lambda: server_spans(spans))
    assert agent.parent is not None and server.context is not None
    assert agent.parent.span_id == server.context.span_id


def test_without_a_traceparent_the_server_span_starts_a_trace(spans: Any) -> None:
    seen = Seen()
    with serving(A2AApp(Agent.from_function(seen.agent, name="Seer"))) as handle:
        Peer(handle.url, "1.0").send("hi")
    [server] = server_spans(spans)
    assert server.parent is None
    assert seen.trace_ids == [hex_trace(server)]


def test_a_failed_call_is_an_error_span(spans: Any) -> None:
    with serving(A2AApp(Agent.from_function(Seen().agent, name="Seer"))) as handle:
        Peer(handle.url, "1.0").rpc("get", {"id": "missing"})
        requests.get(handle.url + "/rest/tasks/missing", timeout=10)
    rpc, rest = server_spans(spans)
    for span in (rpc, rest):
        assert span.name == "A2A GetTask"
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "TASK_NOT_FOUND (-32001)"
        assert dict(span.attributes or {})["error.type"] == "TASK_NOT_FOUND"
    assert dict(rpc.attributes or {})["rpc.jsonrpc.error_code"] == -32001
    assert dict(rest.attributes or {})["http.response.status_code"] == 404
    assert dict(rest.attributes or {})["a2a.binding"] == "HTTP+JSON"
    assert "rpc.system" not in dict(rest.attributes or {})


def raising(msg: Message, ctx: AgentContext) -> object:
    raise ValueError("the agent broke")


def test_an_agent_exception_fails_the_agent_span_not_the_request(spans: Any) -> None:
    with serving(A2AApp(Agent.from_function(raising, name="Boom"))) as handle:
        Peer(handle.url, "1.0").send("hi")
    [server] = server_spans(spans)
    [agent] = named(spans, "A2A handle_message")
    assert server.status.status_code is StatusCode.UNSET
    assert agent.status.status_code is StatusCode.ERROR
    [exception] = [e for e in agent.events if e.name == "exception"]
    assert dict(exception.attributes or {})["exception.type"] == "ValueError"
    states = [dict(e.attributes or {})["a2a.task.state"] for e in agent.events
              if e.name == "a2a.task.transition"]
    assert states[-1] == "failed"


class Gate:
    def __init__(self) -> None:
        self.open = threading.Event()

    def agent(self, msg: Message, ctx: AgentContext) -> object:
        ctx.emit_status(TaskState.WORKING, "on it")
        self.open.wait(10)
        return reply("done")


def test_a_stream_span_ends_with_the_stream_and_counts_open_streams(spans: Any) -> None:
    gate = Gate()
    before = metric_total("a2a.server.open_streams")
    with serving(A2AApp(Agent.from_function(gate.agent, name="Slow"))) as handle:
        peer = Peer(handle.url, "1.0")
        with peer.stream("stream", {"message": user_message("go", "1.0")}) as (_, events):
            next(events)
            assert server_spans(spans) == []
            assert metric_total("a2a.server.open_streams") == before + 1
            gate.open.set()
            received = 1 + len(list(events))
        [server] = wait_until(lambda: server_spans(spans))
    attributes = dict(server.attributes or {})
    assert server.name == "A2A SendStreamingMessage"
    assert attributes["a2a.stream.events"] == received
    assert attributes["a2a.stream.end"] == "complete"
    assert metric_total("a2a.server.open_streams") == before


def test_requests_and_task_states_are_counted(spans: Any) -> None:
    def count() -> tuple[float, float, float]:
        return (metric_total("a2a.server.requests", **{"a2a.operation": "SendMessage",
                                                       "http.response.status_code": 200}),
                metric_total("a2a.server.requests", **{"a2a.operation": "GetTask",
                                                       "error.type": "TASK_NOT_FOUND"}),
                metric_total("a2a.tasks.transitions", **{"a2a.task.state": "completed"}))

    before = count()
    with serving(A2AApp(Agent.from_function(Seen().agent, name="Seer"))) as handle:
        peer = Peer(handle.url, "1.0")
        peer.send("one")
        peer.send("two")
        peer.rpc("get", {"id": "missing"})
    after = count()
    assert [b - a for a, b in zip(before, after, strict=True)] == [2, 1, 2]
    durations = metric_total("a2a.server.request.duration", **{"a2a.operation": "SendMessage"})
    assert durations >= 2  # a histogram's point counts the requests it measured


def test_a_span_inside_an_instrumented_framework_is_not_a_second_server_span(
        spans: Any) -> None:
    """A framework instrumentation's server span around the app is the request's one;
    ours nests under it as an internal span, whatever traceparent the request carries."""
    app = A2AApp(Agent.from_function(Seen().agent, name="Seer"))
    tracer = trace.get_tracer("framework")
    with serving(app) as handle:
        wrapped = handle.server.app

        def framework(environ: dict[str, Any], start_response: Any) -> Any:
            with tracer.start_as_current_span("framework", kind=SpanKind.SERVER):
                return list(wrapped(environ, start_response))

        handle.server.app = framework
        Peer(handle.url, "1.0").rpc("get", {"id": "missing"},
                                    headers={"traceparent": TRACEPARENT})
    [outer] = server_spans(spans)
    [ours] = named(spans, "A2A GetTask")
    assert outer.name == "framework" and ours.kind is SpanKind.INTERNAL
    assert ours.parent is not None and outer.context is not None
    assert ours.parent.span_id == outer.context.span_id
