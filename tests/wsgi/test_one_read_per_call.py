"""Cancel and the push-config calls read their task once: Operations reads and authorizes it,
and the runtime answers from that read (``CallContext.task``) instead of reading it again."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from werkzeug.test import Client

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, input_required
from a2a_wsgi.settings import CardSettings
from a2a_wsgi.stores import MemoryTaskStore


class Asks(Agent):
    name = "Asks"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return input_required("more?")


class CountingStore(MemoryTaskStore):
    """A memory store that counts this thread's task reads (``get``)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self.thread = threading.get_ident()

    def get(self, task_id: str, *, owner: str | None = None, tenant: str | None = None) -> Any:
        if threading.get_ident() == self.thread:
            self.reads += 1
        return super().get(task_id, owner=owner, tenant=tenant)


def _call(client: Client, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = client.post("/", json=body, headers={"A2A-Version": "1.0"}).get_json()
    assert "result" in answer, answer
    return answer["result"]


@pytest.fixture
def app_and_store() -> Any:
    store = CountingStore()
    app = A2AApp(
        Asks(),
        store=store,
        card=CardSettings(overrides={"capabilities": {"push_notifications": True}}),
    )
    yield app, store
    app.close()


CALLS = [
    ("CreateTaskPushNotificationConfig",
     lambda task: {"taskId": task, "id": "c1", "url": "https://hooks.example/c1"}),
    ("GetTaskPushNotificationConfig", lambda task: {"taskId": task, "id": "c1"}),
    ("ListTaskPushNotificationConfigs", lambda task: {"taskId": task}),
    ("DeleteTaskPushNotificationConfig", lambda task: {"taskId": task, "id": "c1"}),
    ("CancelTask", lambda task: {"id": task}),
]


def test_each_task_call_reads_the_task_once(app_and_store: Any) -> None:
    app, store = app_and_store
    client = Client(app)
    task = _call(client, "SendMessage", {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})["task"]["id"]
    reads = {}
    for method, params in CALLS:
        before = store.reads
        _call(client, method, params(task))
        reads[method] = store.reads - before
    # CancelTask reads once more after its write only when the write lost a race.
    assert reads == {method: 1 for method, _ in CALLS}


def test_an_unknown_task_is_still_not_found(app_and_store: Any) -> None:
    app, _ = app_and_store
    body = {"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": "nope"}}
    answer = Client(app).post("/", json=body, headers={"A2A-Version": "1.0"}).get_json()
    assert answer["error"]["code"] == -32001
