"""Webhook POSTs join the trace that queued them; no credential reaches a log line or a span."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from opentelemetry.trace import SpanKind
from push_receiver import Receiver, receiver_fixture  # noqa: F401
from support.a2a_http import Peer, user_message
from support.postgres import schema_url, temporary_schema
from telemetry_support import (
    access_lines,
    captured_spans,
    metric_total,
    serving,
    texts_of,
    wait_until,
)

from a2a_core._observe import TraceParent
from a2a_core.auth import Principal
from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.auth import APIKeyAuthenticator, AuthPolicy, BearerAuthenticator
from a2a_wsgi.push import PushSettings, UrlPolicy

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01"
FAST = dict(policy=UrlPolicy.allowing_loopback(), poll_interval=0.05, backoff_base=0.05,
            backoff_cap=0.2, attempt_timeout=2.0)

BEARER = "bearer-Secret-0a1b2c"
API_KEY = "apikey-Secret-3d4e5f"
QUERY_KEY = "querykey-Secret-6a7b8c"
COOKIE = "cookie-Secret-9d0e1f"
PUSH_TOKEN = "pushtoken-Secret-2a3b4c"
PUSH_CREDENTIALS = "pushcreds-Secret-5d6e7f"
SECRETS = (BEARER, API_KEY, QUERY_KEY, COOKIE, PUSH_TOKEN, PUSH_CREDENTIALS)


@pytest.fixture
def spans() -> Iterator[Any]:
    with captured_spans() as capture:
        yield capture


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)  # every logger, every level: nothing may show a secret
    return caplog


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """Each store keeps the queued POST's trace header until it is sent."""
    if request.param == "memory":
        yield "memory"
    elif request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'tasks.sqlite3'}"
    else:
        with temporary_schema() as schema:
            yield schema_url(schema)


def stepping(msg: Message, ctx: AgentContext) -> object:
    ctx.emit_status(TaskState.WORKING, "step 1")
    ctx.emit_artifact("partial", name="out")
    return reply("done")


def assert_no_secret(logs: pytest.LogCaptureFixture, spans: Any) -> None:
    # Our loggers only: werkzeug's request log and urllib3's debug lines (the test
    # servers' and the test's own requests) print query strings.
    ours = [r for r in logs.records if r.name.split(".")[0] in ("a2a_wsgi", "a2a_core",
                                                                 "a2a_client")]
    shown = texts_of(ours, spans.ended())
    assert shown, "something was logged and traced"
    for text in shown:
        for secret in SECRETS:
            assert secret not in text


def test_each_webhook_post_is_a_client_span_under_the_request_trace(
        spans: Any, logs: pytest.LogCaptureFixture, receiver: Receiver, store: str) -> None:
    backlog = metric_total("a2a.push.backlog")
    delivered = metric_total("a2a.push.attempts", **{"a2a.push.outcome": "delivered"})
    app = A2AApp(Agent.from_function(stepping, name="Pusher"), push=PushSettings(**FAST),
                 store=store)
    config = {"url": receiver.url + "/hook?secret=" + PUSH_TOKEN, "token": PUSH_TOKEN,
              "authentication": {"scheme": "Bearer", "credentials": PUSH_CREDENTIALS}}
    with serving(app) as handle:
        answer = Peer(handle.url, "1.0").rpc(
            "send", {"message": user_message("go", "1.0"),
                     "configuration": {"taskPushNotificationConfig": config}},
            headers={"traceparent": TRACEPARENT})
        task_id = answer["result"]["task"]["id"]
        expected = len(app.runtime.store.events_after(task_id, 0))
        hits = receiver.wait_hits("/hook", expected)
        deliveries = wait_until(lambda: len(named(spans, "A2A push delivery")) >= expected
                                and named(spans, "A2A push delivery"))
        wait_until(lambda: metric_total("a2a.push.backlog") == backlog)
    assert len(hits) == expected >= 4
    by_span = {f"{s.context.span_id:016x}": s for s in deliveries if s.context is not None}
    queued_under = {s.context.span_id for s in spans.ended()
                    if s.name in ("A2A SendMessage", "A2A handle_message") and s.context}
    for hit in hits:
        assert hit.headers["X-A2A-Notification-Token"] == PUSH_TOKEN  # sent, never shown
        parent = TraceParent.parse(hit.headers["Traceparent"])
        assert parent is not None and parent.trace_id == TRACE
        span = by_span[parent.span_id]  # the POST's own span is the receiver's parent
        assert span.kind is SpanKind.CLIENT
        assert span.parent is not None and span.parent.span_id in queued_under
        attributes = dict(span.attributes or {})
        assert attributes["http.response.status_code"] == 200
        assert attributes["server.address"] == "127.0.0.1" and attributes["a2a.task_id"] == task_id
        assert not any("hook" in str(v) for v in attributes.values())  # no path, no query
    assert metric_total("a2a.push.attempts", **{"a2a.push.outcome": "delivered"}) \
        == delivered + expected
    assert_no_secret(logs, spans)


def named(spans: Any, name: str) -> list[Any]:
    return [s for s in spans.ended() if s.name == name]


def test_failed_posts_are_counted(spans: Any, receiver: Receiver) -> None:
    failures = metric_total("a2a.push.delivery.failures", **{"error.type": "503"})
    receiver.script["/down"] = [503, 200]
    app = A2AApp(Agent.from_function(lambda m, c: reply("x"), name="P"),
                 push=PushSettings(**FAST))
    with serving(app) as handle:
        Peer(handle.url, "1.0").rpc("send", {
            "message": user_message("go", "1.0"),
            "configuration": {"taskPushNotificationConfig": {"url": receiver.url + "/down"}}})
        wait_until(lambda: metric_total("a2a.push.delivery.failures", **{"error.type": "503"})
                   == failures + 1)
        [failed] = wait_until(lambda: [s for s in named(spans, "A2A push delivery")
                                       if s.status.description == "503"])
    assert dict(failed.attributes or {})["http.response.status_code"] == 503


def who(identity: str) -> Principal:
    return Principal(identity=identity)


def test_callers_are_named_by_owner_and_no_credential_is_shown(
        spans: Any, logs: pytest.LogCaptureFixture) -> None:
    policy = AuthPolicy([
        BearerAuthenticator(lambda token: "alice" if token == BEARER else None),
        APIKeyAuthenticator("X-API-Key", keys={API_KEY: "bob"}),
        APIKeyAuthenticator("api_key", "query", keys={QUERY_KEY: who("carol")},
                            scheme_name="queryKey"),
    ])
    app = A2AApp(Agent.from_function(stepping, name="Guarded"), auth=policy)
    cookie = {"Cookie": f"session={COOKIE}"}
    with serving(app) as handle:
        Peer(handle.url, "1.0").rpc("send", {"message": user_message("a", "1.0")},
                                    headers={"Authorization": f"Bearer {BEARER}", **cookie})
        Peer(handle.url, "1.0").rpc("send", {"message": user_message("b", "1.0")},
                                    headers={"X-API-Key": API_KEY, **cookie})
        requests.get(f"{handle.url}/rest/tasks/t-1?api_key={QUERY_KEY}",
                     headers=cookie, timeout=10)
        refused = requests.post(handle.url + "/", json={}, timeout=10,
                                headers={"Authorization": f"Bearer {BEARER}x", **cookie})
        assert refused.status_code == 401
    lines = access_lines(logs.records)
    assert [line.caller for line in lines] == ["alice", "bob", "carol", None]
    assert [line.http_status for line in lines] == [200, 200, 404, 401]
    assert lines[2].path == "/rest/tasks/t-1"  # the query string is never logged
    callers = [dict(s.attributes or {}).get("a2a.caller") for s in spans.ended()
               if s.kind is SpanKind.SERVER]
    assert callers == ["alice", "bob", "carol", None]
    assert_no_secret(logs, spans)
