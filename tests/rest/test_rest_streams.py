"""HTTP+JSON streams: SSE of bare StreamResponse objects, subscriptions, resuming.

Each event is one ``data:`` line holding a StreamResponse (``task``, ``message``,
``statusUpdate`` or ``artifactUpdate``), with an ``id:`` a client can send back as
``Last-Event-ID``; no JSON-RPC envelope. Errors known before the stream starts are a
plain ``google.rpc.Status`` answer, not a stream.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rest_support import Rest, RestAgent, assert_status, message_json
from support.a2a_http import SSEEvent, served

from a2a_wsgi import A2AApp
from a2a_wsgi.settings import CardSettings


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with served(A2AApp(RestAgent())) as handle:
        yield handle.url


@pytest.fixture
def rest(base: str) -> Rest:
    return Rest(base + "/rest")


def _kind(event: SSEEvent) -> str:
    (kind,) = event.data
    return str(kind)


def _state(event: SSEEvent) -> str | None:
    body = event.data.get("task") or event.data.get("statusUpdate")
    return body["status"]["state"] if body else None


def test_stream_message_is_sse_of_bare_stream_responses(rest: Rest) -> None:
    with rest.stream("POST", "/message:stream", body={"message": message_json("streamed")}
                     ) as (response, events):
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        assert response.headers["A2A-Version"] == "1.0"
        seen = list(events)
    kinds = [_kind(e) for e in seen]
    assert kinds[0] == "task" and kinds[-1] == "statusUpdate"
    assert _state(seen[-1]) == "TASK_STATE_COMPLETED"
    assert "artifactUpdate" in kinds
    assert all("jsonrpc" not in e.data for e in seen)
    ids = [int(e.id) for e in seen if e.id is not None]
    assert len(ids) == len(seen) and ids == sorted(ids)
    task_id = seen[0].data["task"]["id"]
    assert {e.data[k].get("taskId", task_id) for e in seen for k in e.data} == {task_id}


def test_stream_of_chunks_keeps_one_artifact(rest: Rest) -> None:
    with rest.stream("POST", "/message:stream", body={"message": message_json("count")}
                     ) as (_, events):
        updates = [e.data["artifactUpdate"] for e in events if _kind(e) == "artifactUpdate"]
    assert "".join(u["artifact"]["parts"][0]["text"] for u in updates) == "one two three"
    assert len({u["artifact"]["artifactId"] for u in updates}) == 1
    assert updates[-1]["lastChunk"] is True


def test_stream_of_a_bare_message_is_that_message(rest: Rest) -> None:
    with rest.stream("POST", "/message:stream", body={"message": message_json("direct")}
                     ) as (_, events):
        seen = list(events)
    assert [_kind(e) for e in seen] == ["message"]
    assert seen[0].data["message"]["parts"] == [{"text": "direct: direct"}]


def test_stream_errors_before_streaming_are_plain_status(rest: Rest) -> None:
    done = rest.send("finished")
    cases: list[tuple[str, str, Any, int, str]] = [
        ("POST", "/message:stream", {"message": message_json(taskId="tsk-missing")}, 404,
         "TASK_NOT_FOUND"),
        ("POST", "/message:stream", {"message": {"role": "ROLE_USER"}}, 400, "INVALID_PARAMS"),
        ("POST", f"/tasks/{done['id']}:subscribe", {}, 400, "UNSUPPORTED_OPERATION"),
        ("GET", f"/tasks/{done['id']}:subscribe", None, 400, "UNSUPPORTED_OPERATION"),
        ("GET", "/tasks/tsk-missing:subscribe", None, 404, "TASK_NOT_FOUND"),
    ]
    for method, path, body, status, reason in cases:
        response = rest.request(method, path, body=body, headers={"Accept": "text/event-stream"})
        grpc = "FAILED_PRECONDITION" if reason == "UNSUPPORTED_OPERATION" else None
        error = assert_status(response, status, reason, grpc=grpc)
        if reason == "UNSUPPORTED_OPERATION":
            assert "terminal" in error["message"]


def test_streaming_off_is_refused() -> None:
    app = A2AApp(RestAgent(), card=CardSettings(overrides={"capabilities": {"streaming": False}}))
    with served(app) as handle:
        rest = Rest(handle.url + "/rest")
        response = rest.request("POST", "/message:stream", body={"message": message_json()})
        assert_status(response, 400, "UNSUPPORTED_OPERATION", grpc="FAILED_PRECONDITION")
        task = rest.send("wait", blocking=False)
        response = rest.request("GET", f"/tasks/{task['id']}:subscribe")
        assert_status(response, 400, "UNSUPPORTED_OPERATION", grpc="FAILED_PRECONDITION")
        rest.ok("POST", f"/tasks/{task['id']}:cancel")


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_subscribe_sees_the_task_then_its_cancellation(rest: Rest, method: str) -> None:
    task = rest.send("wait", blocking=False)
    rest.wait_state(task["id"], "TASK_STATE_WORKING")
    body = {} if method == "POST" else None
    with rest.stream(method, f"/tasks/{task['id']}:subscribe", body=body) as (response, events):
        assert response.status_code == 200
        first = next(events)
        assert _kind(first) == "task" and first.data["task"]["id"] == task["id"]
        assert _state(first) == "TASK_STATE_WORKING"
        rest.ok("POST", f"/tasks/{task['id']}:cancel")
        rest_of = list(events)
    assert _state(rest_of[-1]) == "TASK_STATE_CANCELED"


def test_two_subscribers_see_the_same_events(rest: Rest) -> None:
    task = rest.send("wait", blocking=False)
    rest.wait_state(task["id"], "TASK_STATE_WORKING")
    path = f"/tasks/{task['id']}:subscribe"
    with rest.stream("POST", path, body={}) as (_, one), rest.stream("GET", path) as (_, two):
        assert _kind(next(one)) == _kind(next(two)) == "task"
        rest.ok("POST", f"/tasks/{task['id']}:cancel")
        assert _state(list(one)[-1]) == _state(list(two)[-1]) == "TASK_STATE_CANCELED"


# -- resuming with Last-Event-ID ---------------------------------------------------------


def _started_words(rest: Rest) -> tuple[str, str]:
    """Open a "words" stream, read its first two events, hang up: (task id, last SSE id)."""
    with rest.stream("POST", "/message:stream", body={"message": message_json("words")}
                     ) as (_, events):
        first, second = next(events), next(events)
    assert _kind(first) == "task" and second.id is not None
    return first.data["task"]["id"], second.id


def _artifact_words(events: list[SSEEvent]) -> list[str]:
    return [e.data["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in events
            if _kind(e) == "artifactUpdate"]


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_a_subscription_resumes_after_last_event_id(rest: Rest, method: str) -> None:
    """Events emitted while the client was away come back after the cursor, once each."""
    task_id, last_id = _started_words(rest)
    rest.wait_parts(task_id, 2)  # "one" and "two" are emitted while nobody listens
    body = {} if method == "POST" else None
    with rest.stream(method, f"/tasks/{task_id}:subscribe", body=body,
                     headers={"Last-Event-ID": last_id}) as (response, events):
        assert response.status_code == 200
        resumed = list(events)
    assert _artifact_words(resumed) == ["one", "two", "three", "four"]
    after = [int(e.id) for e in resumed if e.id is not None and _kind(e) != "task"]
    assert after == sorted(after) and min(after) > int(last_id)
    assert _state(resumed[-1]) == "TASK_STATE_COMPLETED"


def test_without_last_event_id_a_subscription_starts_now(rest: Rest) -> None:
    """The control for the test above: no cursor, so what was emitted meanwhile is only in
    the snapshot (the task's artifacts), not replayed as events."""
    task_id, _ = _started_words(rest)
    rest.wait_parts(task_id, 2)
    with rest.stream("POST", f"/tasks/{task_id}:subscribe", body={}) as (_, events):
        resumed = list(events)
    words = _artifact_words(resumed)
    assert words[-1] == "four" and "one" not in words
    assert resumed[0].data["task"]["artifacts"]
