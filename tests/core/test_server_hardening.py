"""Dispatcher hardening from the hostile-input corpus (rows 25 and 39).

A small dict-backed service stands behind a real :class:`Dispatcher`; the
full stack over HTTP is exercised by tests/reliability/test_corpus.py.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, cast

import pytest

from a2a_core._http import Headers, HttpRequest, HttpResponse
from a2a_core._server import Dispatcher, DispatcherConfig
from a2a_core._service import A2AService, CallContext
from a2a_core.auth import AuthorizeOperation
from a2a_core.errors import TaskNotFoundError, UnsupportedOperationError
from a2a_core.models import (
    AgentCapabilities,
    AgentCard,
    Message,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)

OWNED = "tsk-owned"
MISSING = "tsk-missing"


class TaskTable:
    """The smallest service the tests need: tasks in a dict, sends recorded."""

    def __init__(self) -> None:
        self.tasks = {OWNED: Task(id=OWNED, context_id="c",
                                  status=TaskStatus(state=TaskState.WORKING))}
        self.sent: list[SendMessageRequest] = []

    def agent_card(self) -> AgentCard:
        return AgentCard(name="t", description="t", version="1",
                         capabilities=AgentCapabilities(streaming=True))

    def get_task(self, task_id: str, ctx: CallContext) -> Task:
        if task_id not in self.tasks:
            raise TaskNotFoundError(f"no such task: {task_id}")  # the service's own wording
        return self.tasks[task_id]

    def send_message(self, request: SendMessageRequest, ctx: CallContext) -> Task | Message:
        self.sent.append(request)
        return Message(message_id="r", role=Role.AGENT, parts=(TextPart(text="ok"),))


def dispatcher(authorize_task: Any = None) -> tuple[Dispatcher, TaskTable]:
    table = TaskTable()
    return Dispatcher(cast(A2AService, table), DispatcherConfig(
        base_url="http://agent/", last_modified=datetime(2026, 1, 1, tzinfo=timezone.utc),
        authorize_task=authorize_task)), table


def post(d: Dispatcher, method: str, params: Any, *,
         content_type: str | None = "application/json") -> HttpResponse:
    headers = {"A2A-Version": "1.0"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}).encode()
    return d.handle(HttpRequest(method="POST", headers=Headers(headers), body=body))


def body_of(response: HttpResponse) -> bytes:
    if isinstance(response.body, bytes):
        return response.body
    return b"".join(response.body)


# -- row 39: Content-Type ------------------------------------------------------------------


@pytest.mark.parametrize("content_type", [
    "text/plain", "TEXT/PLAIN; charset=utf-8", " application/x-www-form-urlencoded ",
    "multipart/form-data; boundary=----x",
])
def test_browser_simple_content_types_are_415(content_type: str) -> None:
    d, table = dispatcher()
    response = post(d, "SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER",
                                                   "parts": [{"text": "hi"}]}},
                    content_type=content_type)
    assert response.status == 415
    assert ("Accept-Post", "application/json, application/a2a+json") in response.headers
    assert table.sent == []


@pytest.mark.parametrize("content_type", [
    None, "", "application/json", "application/a2a+json", "application/json-rpc",
    "application/octet-stream", "text/json", "text/plainish",
])
def test_other_content_types_are_read_as_json(content_type: str | None) -> None:
    d, _ = dispatcher()
    response = post(d, "GetTask", {"id": OWNED}, content_type=content_type)
    assert response.status == 200
    assert json.loads(body_of(response))["result"]["id"] == OWNED


# -- row 25: a denial is a missing task, byte for byte ----------------------------------------


def deny_all_3(operation: Any, task: Any, context: Any) -> bool:
    return False


def deny_all_2(operation: Any, task: Any) -> None:
    return None


class DenyObject:
    def __call__(self, operation: Any, task: Any, context: Any) -> str:
        return "no"


def raising(operation: Any, task: Any, context: Any) -> bool:
    raise KeyError("callback bug")


@pytest.mark.parametrize("callback", [deny_all_3, deny_all_2, DenyObject(), raising],
                         ids=["3-arg", "2-arg", "object", "raising"])
@pytest.mark.parametrize(("method", "params"), [
    ("GetTask", {"id": "<id>"}),
    ("CancelTask", {"id": "<id>"}),
    ("SubscribeToTask", {"id": "<id>"}),
    ("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "taskId": "<id>",
                                 "parts": [{"text": "hi"}]}}),
])
def test_denied_and_missing_answers_are_identical(callback: Any, method: str,
                                                  params: dict[str, Any]) -> None:
    d, table = dispatcher(callback)

    def answer(task_id: str) -> bytes:
        filled = json.loads(json.dumps(params).replace("<id>", task_id))
        return body_of(post(d, method, filled)).replace(task_id.encode(), b"<id>")

    denied, missing = answer(OWNED), answer(MISSING)
    assert denied == missing
    assert b"-32001" in denied
    assert table.sent == []  # a denied continuation never reaches the service


def test_a_callbacks_own_error_is_kept() -> None:
    def explain(operation: Any, task: Any, context: Any) -> Any:
        return UnsupportedOperationError("read-only for you")

    d, _ = dispatcher(explain)
    error = json.loads(body_of(post(d, "GetTask", {"id": OWNED})))["error"]
    assert error["code"] == -32004 and error["message"] == "read-only for you"


def test_a_continuation_is_authorized_as_get() -> None:
    seen: list[tuple[AuthorizeOperation, str]] = []

    def allow(operation: AuthorizeOperation, task: Task) -> bool:
        seen.append((operation, task.id))
        return True

    d, table = dispatcher(allow)
    message = {"messageId": "m", "role": "ROLE_USER", "taskId": OWNED, "parts": [{"text": "x"}]}
    assert "result" in json.loads(body_of(post(d, "SendMessage", {"message": message})))
    assert seen == [(AuthorizeOperation.GET, OWNED)]
    assert len(table.sent) == 1
    # A message that starts a new task names none: nothing to authorize.
    post(d, "SendMessage", {"message": {**message, "taskId": None}})
    assert len(seen) == 1 and len(table.sent) == 2


def test_the_callback_form_is_worked_out_once() -> None:
    """Resolving the arity at construction keeps the user's callable as given."""
    calls: list[int] = []

    class Counting:
        def __call__(self, operation: Any, task: Any) -> bool:
            calls.append(1)
            return True

    callback = Counting()
    d, _ = dispatcher(callback)
    assert d.operations.authorize_task is callback
    for _ in range(3):
        assert "result" in json.loads(body_of(post(d, "GetTask", {"id": OWNED})))
    assert len(calls) == 3


def test_a_callback_of_the_wrong_arity_fails_closed_per_request() -> None:
    d, _ = dispatcher(lambda only: True)  # construction does not raise
    error = json.loads(body_of(post(d, "GetTask", {"id": OWNED})))["error"]
    assert error["code"] == -32603 and error["message"] == "Internal error"
