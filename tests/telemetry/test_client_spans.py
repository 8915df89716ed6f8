"""The client's spans and the traceparent it sends, against a served app."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from telemetry_support import access_lines, captured_spans, serving

from a2a_client import A2AClient
from a2a_client._errors import ConnectError
from a2a_core.errors import TaskNotFoundError
from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._serve import ServerHandle


def echo(msg: Message, ctx: AgentContext) -> object:
    return reply(msg.text)


@pytest.fixture
def spans() -> Iterator[Any]:
    with captured_spans() as capture:
        yield capture


@pytest.fixture
def server() -> Iterator[ServerHandle]:
    with serving(A2AApp(Agent.from_function(echo, name="Echo"))) as handle:
        yield handle


def of_kind(spans: Any, kind: SpanKind, name: str) -> list[Any]:
    return [s for s in spans.ended() if s.kind is kind and s.name == name]


@pytest.mark.parametrize("binding, name", [("JSONRPC", "A2A SendMessage"),
                                           ("HTTP+JSON", "A2A POST")])
def test_a_call_is_a_client_span_the_server_span_is_a_child_of(
        spans: Any, server: ServerHandle, caplog: pytest.LogCaptureFixture,
        binding: str, name: str) -> None:
    caplog.set_level(logging.INFO, logger="a2a_wsgi.access")
    with A2AClient(server.url + "/", binding=binding) as client:
        client.send_message("hello")
    [client_span] = of_kind(spans, SpanKind.CLIENT, name)
    [server_span] = of_kind(spans, SpanKind.SERVER, "A2A SendMessage")
    assert client_span.context.trace_id == server_span.context.trace_id
    assert server_span.parent.span_id == client_span.context.span_id
    assert server_span.parent.is_remote
    attributes = dict(client_span.attributes or {})
    assert attributes["http.response.status_code"] == 200
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["url.full"].startswith(server.url)
    if binding == "JSONRPC":
        assert (attributes["rpc.system"], attributes["rpc.method"]) == ("jsonrpc", "SendMessage")
    [card] = of_kind(spans, SpanKind.CLIENT, "A2A GET")  # the card, fetched first
    assert card.context.trace_id != client_span.context.trace_id  # separate calls
    line = [r for r in access_lines(caplog.records) if r.operation == "SendMessage"][0]
    assert line.trace_id == f"{client_span.context.trace_id:032x}"
    assert line.span_id == f"{server_span.context.span_id:016x}"


def test_a_call_made_inside_a_span_joins_its_trace(spans: Any, server: ServerHandle) -> None:
    tracer = trace.get_tracer("application")
    with A2AClient(server.url + "/") as client:
        client.get_card()
        with tracer.start_as_current_span("the application's work") as work:
            client.send_message("hello")
    [client_span] = of_kind(spans, SpanKind.CLIENT, "A2A SendMessage")
    assert client_span.parent.span_id == work.get_span_context().span_id
    [server_span] = of_kind(spans, SpanKind.SERVER, "A2A SendMessage")
    assert server_span.context.trace_id == work.get_span_context().trace_id


def test_an_error_answer_and_a_failed_connection_are_error_spans(
        spans: Any, server: ServerHandle) -> None:
    with A2AClient(server.url + "/", binding="HTTP+JSON") as client:
        with pytest.raises(TaskNotFoundError):
            client.get_task("missing")
    [answered] = [s for s in spans.ended() if s.kind is SpanKind.CLIENT
                  and dict(s.attributes or {}).get("http.response.status_code") == 404]
    assert answered.status.status_code is StatusCode.ERROR
    with A2AClient("http://127.0.0.1:9/") as nowhere:  # the discard port: refused
        with pytest.raises(ConnectError):
            nowhere.get_card()
    [refused] = [s for s in spans.ended() if "127.0.0.1:9/" in
                 str(dict(s.attributes or {}).get("url.full"))]
    assert refused.status.status_code is StatusCode.ERROR
    assert any(e.name == "exception" for e in refused.events)


def test_a_traceparent_the_caller_names_in_its_headers_is_sent_as_it_is(
        spans: Any, server: ServerHandle) -> None:
    theirs = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    with A2AClient(server.url + "/", headers={"Traceparent": theirs}) as client:
        client.send_message("hello")
    [server_span] = of_kind(spans, SpanKind.SERVER, "A2A SendMessage")
    assert f"{server_span.context.trace_id:032x}" == theirs.split("-")[1]
    assert f"{server_span.parent.span_id:016x}" == theirs.split("-")[2]
