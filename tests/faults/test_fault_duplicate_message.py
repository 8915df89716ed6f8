"""F13: the same ``messageId`` sent twice by the same caller.

A client that retries a send after a timeout re-sends the same message. The spec
lets a server dedupe by messageId (A2A §3.3.1); we promise at most
one task per (caller, messageId): a resent message answers the task it made
(Runtime.send_message; the stores record each task's creating messageId).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fault_support import build_app, rpc
from support.a2a_http import Peer, served


@pytest.fixture(params=["memory", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    store = "memory" if request.param == "memory" else f"sqlite:///{tmp_path / 't.sqlite3'}"
    with served(build_app(store)) as handle:
        yield handle.url + "/"


def _send(url: str, message_id: str) -> dict[str, Any]:
    answer, _ = rpc(url, "SendMessage", {"message": {
        "messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "sleep:0.2"}]}})
    assert "result" in answer, answer
    return answer


def _task_count(url: str) -> int:
    answer, _ = rpc(url, "ListTasks", {})
    return len(answer["result"]["tasks"])


def test_a_message_sent_twice_at_once_makes_at_most_one_task(url: str) -> None:
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: _send(url, "dup-1"), range(2)))
    assert all("task" in a["result"] for a in answers)
    assert _task_count(url) == 1


def test_a_retried_message_answers_the_task_it_already_made(url: str) -> None:
    first, again = _send(url, "dup-2"), _send(url, "dup-2")
    assert first["result"]["task"]["id"] == again["result"]["task"]["id"]
    assert _task_count(url) == 1


def _stream_ids(url: str, message_id: str) -> tuple[str, str]:
    """The task id of a streamed send's first event, and the state its last event names."""
    params = {"message": {"messageId": message_id, "role": "ROLE_USER",
                          "parts": [{"text": "sleep:0.2"}]}}
    with Peer(url).stream("stream", params) as (_, events):
        seen = [event.data["result"] for event in events]
    first, last = seen[0], seen[-1]
    state = (last.get("task") or last.get("statusUpdate") or {}).get("status", {}).get("state")
    return first["task"]["id"], str(state)


def test_a_retried_stream_follows_the_task_it_already_made(url: str) -> None:
    first_id, first_end = _stream_ids(url, "dup-3")
    again_id, again_end = _stream_ids(url, "dup-3")
    assert first_id == again_id
    assert first_end == again_end == "TASK_STATE_COMPLETED"
    assert _task_count(url) == 1


def test_a_retried_non_blocking_send_answers_the_same_task(url: str) -> None:
    params = {"message": {"messageId": "dup-4", "role": "ROLE_USER",
                          "parts": [{"text": "sleep:0.2"}]},
              "configuration": {"returnImmediately": True}}
    first, _ = rpc(url, "SendMessage", params)
    again, _ = rpc(url, "SendMessage", params)
    assert first["result"]["task"]["id"] == again["result"]["task"]["id"]
    assert _task_count(url) == 1


def test_distinct_messages_make_distinct_tasks(url: str) -> None:
    """The control: what a dedupe must not break."""
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda n: _send(url, f"distinct-{n}"), range(2)))
    assert _task_count(url) == 2
