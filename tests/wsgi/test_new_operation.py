"""Adding an operation is one entry plus its handler (docs/architecture.md, "a new operation").

A toy ``PeekTask`` (a task's status without its history or artifacts) is described by one
:class:`~a2a_core.optable.OperationSpec` and served by one handler. Nothing else is
written for it, yet both bindings of the real WSGI app route it, the decoder and the
limits apply, the capability gate and ``authorize_task`` are asked what its entry says,
and the blocking client calls it, typed, over JSON-RPC and HTTP+JSON.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from support.a2a_http import served
from werkzeug.test import Client

from a2a_client import A2AClient
from a2a_core import wire
from a2a_core._operations import Answer, Params, Result
from a2a_core._service import CallContext
from a2a_core.auth import AuthorizeOperation
from a2a_core.errors import TaskNotFoundError
from a2a_core.extensions import ActivatedExtensions
from a2a_core.models import GetTaskRequest, Message, Task
from a2a_core.optable import Limits, OperationSpec, Route
from a2a_core.wire._codecs import encode_model
from a2a_core.wire._decode import decode_task
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.settings import ProtocolSettings

#: The one entry: names in both dialects, its route, types and codecs, limits, authorization.
PEEK_TASK: OperationSpec[GetTaskRequest, Task] = OperationSpec(
    name="PeekTask", name_0_3="tasks/peek",
    request=GetTaskRequest, results=(Task,),
    encode_result=encode_model, decode_result=decode_task,
    limits=Limits.TASK_ID, routes=(Route("GET", ("tasks", "{id}:peek")),),
    authorize=AuthorizeOperation.GET, repeatable=True,
)


class Echo(Agent):
    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return reply(message.text or "")


#: What authorize_task was asked, in order.
seen: list[AuthorizeOperation] = []


def _hidden(operation: AuthorizeOperation, task: Task) -> bool:
    """authorize_task: a task whose first message says "secret" is seen by nobody."""
    seen.append(operation)
    return task.history[0].parts[0].text != "secret"  # type: ignore[union-attr]


def _app() -> A2AApp:
    app = A2AApp(Echo(), protocol=ProtocolSettings(authorize_task=_hidden))
    operations = app.dispatcher.operations

    def peek(params: Params, ctx: CallContext, activated: ActivatedExtensions) -> Answer:
        """The one handler: decode, authorize as the entry says, act, shape."""
        request = wire.decode_params(PEEK_TASK, params, ctx.version)
        task = operations.authorized_task(request.id, PEEK_TASK, ctx)
        peeked = dataclasses.replace(task, history=(), artifacts=())
        return Result(wire.encode_result(PEEK_TASK, peeked, ctx.version))

    app.dispatcher.add_operation(PEEK_TASK, peek)
    return app


def _send(client: Client, text: str) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}]}}}
    answer = client.post("/", json=body, headers={"A2A-Version": "1.0"}).get_json()
    task_id: str = answer["result"]["task"]["id"]
    return task_id


def _rpc(client: Client, method: str, params: Any, version: str) -> Any:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return client.post("/", json=body, headers={"A2A-Version": version}).get_json()


@pytest.mark.parametrize(("version", "method"), [("1.0", "PeekTask"), ("0.3", "tasks/peek"),
                                                 ("1.0", "tasks/peek")])
def test_the_new_operation_is_served_over_json_rpc(version: str, method: str) -> None:
    app = _app()
    client = Client(app)
    task_id = _send(client, "hello")
    answer = _rpc(client, method, {"id": task_id}, version)
    result = answer["result"]
    assert result["id"] == task_id
    assert result["status"]["state"] == ("completed" if version == "0.3" else
                                         "TASK_STATE_COMPLETED")
    assert not result.get("history")
    assert (result.get("kind") == "task") is (version == "0.3")
    app.close()


def test_the_new_operation_is_served_over_http_json() -> None:
    app = _app()
    client = Client(app)
    for prefix in ("", "/tenant-a"):
        sent = client.post(f"/rest{prefix}/message:send", json={"message": {
            "messageId": f"m{prefix}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}})
        task_id = sent.get_json()["task"]["id"]
        response = client.get(f"/rest{prefix}/tasks/{task_id}:peek")
        assert response.status_code == 200, response.get_data(as_text=True)
        body = response.get_json()
        assert body["id"] == task_id and body["status"]["state"] == "TASK_STATE_COMPLETED"
        assert not body.get("history")
    # The other routes are as before: the new verb does not swallow GetTask.
    assert client.get(f"/rest/tenant-a/tasks/{task_id}").get_json()["history"]
    assert client.post(f"/rest/tenant-a/tasks/{task_id}:peek").status_code == 405
    app.close()


def test_the_entry_decides_decoding_limits_and_authorization() -> None:
    app = _app()
    client = Client(app)
    secret = _send(client, "secret")
    seen.clear()
    denied = _rpc(client, "PeekTask", {"id": secret}, "1.0")
    assert denied["error"]["code"] == TaskNotFoundError.code  # as hidden as a missing task
    assert seen == [AuthorizeOperation.GET]
    bad = _rpc(client, "PeekTask", {"id": "x", "tenant": ".."}, "1.0")  # Limits.TASK_ID
    assert bad["error"]["code"] == -32602
    missing = _rpc(client, "PeekTask", [], "1.0")
    assert missing["error"]["code"] == -32602
    rest = client.get(f"/rest/tasks/{secret}:peek")
    assert rest.status_code == 404
    app.close()


def test_without_the_entry_the_operation_does_not_exist() -> None:
    app = A2AApp(Echo())
    client = Client(app)
    assert _rpc(client, "PeekTask", {"id": "x"}, "1.0")["error"]["code"] == -32601
    assert client.get("/rest/tasks/x:peek").status_code == 404
    app.close()


@pytest.mark.slow
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_client_calls_the_new_operation_typed(binding: str) -> None:
    app = _app()
    with served(app) as server, A2AClient(server.url, binding=binding) as client:
        task = client.send_message("hello", blocking=True)
        assert isinstance(task, Task)
        peeked: Task = client._call(PEEK_TASK, GetTaskRequest(id=task.id))
        assert peeked.id == task.id and not peeked.history
