"""A new operation, end to end through all three bindings, written only where
docs/architecture.md says an operation is written ("Adding an operation").

``PeekTask`` (a task's ids, history length and artifact names, with a note echoed back)
is new in every way an operation can be new: a new request model and a new result model
(so no hand-written codec knows them), no ``Limits`` member, an authorization kind of its
own (``"peek"``), a new HTTP+JSON route, new JSON-RPC names, and a gRPC rpc that exists
in no proto we ship. What is written for it is only what the architecture page lists:

* its model: the two dataclasses below, and, since gRPC carries messages a proto
  describes, the same two as proto messages with the rpc in a service of the
  deployment's own (``PEEK_PROTO``, compiled here by the pinned protoc; the vendored A2A
  proto stays unmodified, as it must);
* its table entry: ``PEEK_TASK`` (names, route, types, codecs, authorization, and the
  gRPC service that carries it);
* its handler: ``_peek`` (it reads the task through the existing service method, so it
  needs no new service or runtime method);
* its client method: ``PeekClient.peek_task``.

Everything else follows from the entry, and the test proves that rather than assuming
it: an app that did not add it serves it on no binding, no file of the three packages
names any of it, and once added the decoder, the derived caps, the
task-id check, the authorization kind, the routes, the gRPC method, the client over
each binding and the access record all behave for it as for a built-in operation, with
the same answer over every binding.
"""

from __future__ import annotations

import importlib.resources
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_support import Both, served_both
from werkzeug.test import Client

import a2a_client
import a2a_core
import a2a_wsgi
from a2a_client import A2AClient
from a2a_client._streams import EventStream
from a2a_core import wire
from a2a_core._grpc import add_proto, grpc_method, request_message
from a2a_core._jsonvalue import JSONValue
from a2a_core._operations import Answer, Events, Params, Result
from a2a_core._service import CallContext
from a2a_core.errors import InvalidParamsError, TaskNotFoundError
from a2a_core.extensions import ActivatedExtensions
from a2a_core.models import (
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from a2a_core.optable import Capability, OperationSpec, QueryKind, Route
from a2a_core.wire._codecs import encode_event, encode_model, result_decoder
from a2a_core.wire._decode import decode_stream_event
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._telemetry import ACCESS_LOGGER
from a2a_wsgi.settings import ProtocolSettings

#: The packages as imported (the checkout's, or the installed wheel's in .ci/wheel-check).
PACKAGES = [Path(next(iter(package.__path__))) for package in (a2a_core, a2a_wsgi, a2a_client)]

# -- its model ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PeekTaskRequest:
    task_id: str
    note: str | None = None
    metadata: Mapping[str, JSONValue] | None = None
    tenant: str | None = None


@dataclass(frozen=True, slots=True)
class TaskPeek:
    task_id: str
    context_id: str
    history_length: int
    artifact_names: tuple[str, ...] = ()
    note: str | None = None


#: The same model as gRPC messages, and the rpc, in a service of the deployment's own.
PEEK_PROTO = """
syntax = "proto3";
package test.peek;
import "google/protobuf/struct.proto";
import "a2a-v1.0.proto";

message PeekTaskRequest {
  string task_id = 1;
  string note = 2;
  google.protobuf.Struct metadata = 3;
  string tenant = 4;
}
message TaskPeek {
  string task_id = 1;
  string context_id = 2;
  int32 history_length = 3;
  repeated string artifact_names = 4;
  string note = 5;
}
service PeekService {
  rpc PeekTask(PeekTaskRequest) returns (TaskPeek);
  rpc FollowTask(PeekTaskRequest) returns (stream lf.a2a.v1.StreamResponse);
}
"""

# -- its table entry ---------------------------------------------------------------------

PEEK_TASK: OperationSpec[PeekTaskRequest, TaskPeek] = OperationSpec(
    name="PeekTask", name_0_3="tasks/peek",
    request=PeekTaskRequest, results=(TaskPeek,),
    encode_result=encode_model, decode_result=result_decoder(TaskPeek),
    routes=(Route("GET", ("tasks", "{taskId}:peek"), query={"note": QueryKind.STRING}),),
    authorize="peek", repeatable=True, grpc_service="test.peek.PeekService",
)

#: A streaming one: the task as a stream of one event (its streaming kind is the entry's).
FOLLOW_TASK: OperationSpec[PeekTaskRequest, StreamEvent] = OperationSpec(
    name="FollowTask", name_0_3="tasks/follow",
    request=PeekTaskRequest, results=(Task, Message, TaskStatusUpdateEvent,
                                      TaskArtifactUpdateEvent),
    encode_result=encode_event, decode_result=decode_stream_event,
    routes=(Route("POST", ("tasks", "{taskId}:follow"), body=True),),
    streams=True, needs=Capability.STREAMING, authorize="peek",
    grpc_service="test.peek.PeekService",
)

# -- its handler -------------------------------------------------------------------------


def _peek_handler(app: A2AApp) -> Any:
    operations = app.dispatcher.operations

    def peek(params: Params, ctx: CallContext, activated: ActivatedExtensions) -> Answer:
        request = wire.decode_params(PEEK_TASK, params, ctx.version)
        task = operations.authorized_task(request.task_id, PEEK_TASK, ctx)
        peeked = TaskPeek(task_id=task.id, context_id=task.context_id,
                          history_length=len(task.history),
                          artifact_names=tuple(a.name for a in task.artifacts if a.name),
                          note=request.note)
        return Result(wire.encode_result(PEEK_TASK, peeked, ctx.version))

    return peek


def _follow_handler(app: A2AApp) -> Any:
    operations = app.dispatcher.operations

    def follow(params: Params, ctx: CallContext, activated: ActivatedExtensions) -> Answer:
        request = wire.decode_params(FOLLOW_TASK, params, ctx.version)
        return Events(iter([operations.authorized_task(request.task_id, FOLLOW_TASK, ctx)]))

    return follow

# -- its client method -------------------------------------------------------------------


class PeekClient(A2AClient):
    def peek_task(self, task_id: str, note: str | None = None) -> TaskPeek:
        return self._call(PEEK_TASK, PeekTaskRequest(task_id=task_id, note=note))

    def follow_task(self, task_id: str) -> EventStream:
        return self._stream(FOLLOW_TASK, PeekTaskRequest(task_id=task_id))

# -- the agent and the deployment (not the operation) -------------------------------------


class Echo(Agent):
    name = "Echo"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        return reply(message.text or "", artifact_name="echoed")


#: The kinds authorize_task was asked, in order.
asked: list[object] = []


def _authorize(operation: object, task: Task) -> bool:
    """A task whose first message says "secret" is seen by nobody."""
    asked.append(operation)
    return task.history[0].parts[0].text != "secret"  # type: ignore[union-attr]


def _compiled(tmp: Path) -> descriptor_pb2.FileDescriptorProto:
    """PEEK_PROTO through the pinned protoc (grpcio-tools, the test extra)."""
    import google.api
    from grpc_tools import protoc

    (tmp / "peek.proto").write_text(PEEK_PROTO)
    include = str(importlib.resources.files("grpc_tools") / "_proto")
    google_api = str(Path(next(iter(google.api.__path__))).parent.parent)
    out = tmp / "peek.binpb"
    assert protoc.main(["protoc", f"-I{tmp}", f"-I{PACKAGES[0] / 'schemas'}",
                        f"-I{google_api}", f"-I{include}",
                        f"--descriptor_set_out={out}", "peek.proto"]) == 0
    (file,) = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    return file


def _app() -> A2AApp:
    return A2AApp(Echo(), protocol=ProtocolSettings(authorize_task=_authorize))


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Both]:
    """The app served over HTTP and gRPC, the operation added as a deployment adds one."""
    with served_both(_app()) as served:
        add_proto(_compiled(tmp_path_factory.mktemp("peek")))
        served.app.dispatcher.add_operation(PEEK_TASK, _peek_handler(served.app))
        served.app.dispatcher.add_operation(FOLLOW_TASK, _follow_handler(served.app))
        yield served


def _client(both: Both, binding: str) -> PeekClient:
    """Our client over ``binding`` (gRPC: at the server's target)."""
    return PeekClient(both.url, binding=binding,
                      endpoint=both.target if binding == "GRPC" else None)


def _rpc(client: Client, method: str, params: Any, version: str = "1.0") -> Any:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return client.post("/", json=body, headers={"A2A-Version": version}).get_json()


def _grpc_peek(both: Both, params: dict[str, JSONValue]) -> grpc.RpcError | Any:
    """The rpc called with grpcio alone (no client of ours): the error, or the reply."""
    method = grpc_method(PEEK_TASK)
    assert method is not None
    with grpc.insecure_channel(both.target) as channel:
        rpc = channel.unary_unary(method.path, request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=method.response.FromString)
        try:
            return rpc(request_message(method, params), timeout=10)
        except grpc.RpcError as exc:
            return exc


def test_no_file_of_the_packages_names_the_operation() -> None:
    """Nothing was special-cased for it: the packages know none of its names."""
    names = ("PeekTask", "TaskPeek", "tasks/peek", ":peek", "test.peek", '"peek"',
             "FollowTask", "tasks/follow", ":follow")
    read = 0
    for package in PACKAGES:
        for path in package.rglob("*.py"):
            text = path.read_text()
            read += 1
            found = [name for name in names if name in text]
            assert not found, f"{path} names {found}"
    assert read > 100  # (the packages were found and read)


def test_without_its_entry_no_binding_serves_it(both: Both) -> None:
    """Another app, which did not add it, serves it nowhere (though its proto is known)."""
    assert grpc_method(PEEK_TASK) is not None
    with served_both(_app()) as other:
        http = Client(other.app)
        assert _rpc(http, "PeekTask", {"taskId": "tsk-1"})["error"]["code"] == -32601
        assert http.get("/rest/tasks/tsk-1:peek").status_code == 404
        with grpc.insecure_channel(other.target) as channel:
            rpc = channel.unary_unary("/test.peek.PeekService/PeekTask")
            with pytest.raises(grpc.RpcError) as unserved:
                rpc(b"", timeout=10)
        assert unserved.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_a_new_operation_through_all_three_bindings(both: Both) -> None:
    with A2AClient(both.url, binding="JSONRPC") as plain:
        task = plain.send_message("hello")
        secret = plain.send_message("secret")
        assert isinstance(task, Task) and isinstance(secret, Task)
        history = len(plain.get_task(task.id).history)

    expected = TaskPeek(task_id=task.id, context_id=task.context_id, history_length=history,
                        artifact_names=("echoed",), note="hi")
    answers = {}
    for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
        with _client(both, binding) as client:
            asked.clear()
            answers[binding] = client.peek_task(task.id, note="hi")
            assert asked == ["peek"]  # the entry's own kind, asked once
            with pytest.raises(TaskNotFoundError):
                client.peek_task(secret.id)
            with pytest.raises(InvalidParamsError) as too_long:  # the caps its fields imply
                client.peek_task(task.id, note="n" * 257)
            assert "note" in too_long.value.message, binding
    assert answers == {"JSONRPC": expected, "HTTP+JSON": expected, "GRPC": expected}


def test_a_new_streaming_operation_streams_over_all_three_bindings(both: Both) -> None:
    """SSE over JSON-RPC and HTTP+JSON, a server-streaming rpc over gRPC: as the entry says."""
    with A2AClient(both.url, binding="JSONRPC") as plain:
        task = plain.send_message("hello")
        assert isinstance(task, Task)
        expected = plain.get_task(task.id)
    for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
        with _client(both, binding) as client:
            events = list(client.follow_task(task.id))
        assert [type(e) for e in events] == [Task], binding
        assert (events[0].id, events[0].status.state) == (expected.id, expected.status.state)


def test_the_entry_decides_names_routes_decoding_and_the_task_id_rule(both: Both) -> None:
    """Each binding's own shape of the same rules."""
    http = Client(both.app)
    with A2AClient(both.url, binding="JSONRPC") as plain:
        sent = plain.send_message("hello")
        task = plain.get_task(sent.id)
    # JSON-RPC, both dialects (0.3 writes no kind for it either): the names are the entry's.
    for version, method in (("1.0", "PeekTask"), ("0.3", "tasks/peek")):
        result = _rpc(http, method, {"taskId": task.id}, version)["result"]
        assert result == {"taskId": task.id, "contextId": task.context_id,
                          "historyLength": len(task.history), "artifactNames": ["echoed"]}
    # The derived decoder: taskId is required; the task-id rule applies to it.
    assert _rpc(http, "PeekTask", {"note": "x"})["error"]["code"] == -32602
    bad_id = _rpc(http, "PeekTask", {"taskId": "x" * 200})["error"]
    assert bad_id["code"] == -32602 and "taskId" in bad_id["message"]
    # HTTP+JSON: the entry's route, under a tenant too; its query parameter; its methods.
    for prefix in ("", "/tenant-a"):
        sent_here = http.post(f"/rest{prefix}/message:send", json={"message": {
            "messageId": f"m{prefix}", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
        task_id = sent_here.get_json()["task"]["id"]
        answer = http.get(f"/rest{prefix}/tasks/{task_id}:peek?note=q")
        assert answer.status_code == 200, answer.get_data(as_text=True)
        assert (answer.get_json()["taskId"], answer.get_json()["note"]) == (task_id, "q")
    assert http.post(f"/rest/tasks/{task.id}:peek").status_code == 405
    assert http.get(f"/rest/tasks/{task.id}").get_json()["id"] == task.id  # GetTask as before
    # gRPC, called with grpcio alone: the message the proto describes, errors as statuses.
    reply_message = _grpc_peek(both, {"taskId": task.id, "note": "g"})
    assert not isinstance(reply_message, grpc.RpcError)
    assert (reply_message.task_id, reply_message.note) == (task.id, "g")
    missing = _grpc_peek(both, {"note": "no task named"})
    assert isinstance(missing, grpc.RpcError)
    assert missing.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_the_access_record_names_it_on_every_binding(
        both: Both, caplog: pytest.LogCaptureFixture) -> None:
    with A2AClient(both.url, binding="JSONRPC") as plain:
        task = plain.send_message("hello")
    assert isinstance(task, Task)
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
            with _client(both, binding) as client:
                client.peek_task(task.id)
    lines = [r.getMessage() for r in caplog.records if r.name == ACCESS_LOGGER
             and "PeekTask" in r.getMessage()]
    assert len(lines) == 3, lines
    assert all(task.id in line for line in lines), lines
