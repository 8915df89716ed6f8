"""The app's own authenticators on gRPC calls: ``authorization`` metadata, as a header."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import pytest
from grpc_support import TIMEOUT, Both, grpc_app, served_both

from a2a_client import HTTPStatusError
from a2a_client.auth import BearerAuth
from a2a_core._grpc import grpc_methods, request_message
from a2a_core._grpc.proto import message_class
from a2a_core.errors import TaskNotFoundError
from a2a_core.models import GetTaskRequest, Message, Role, SendMessageRequest, Task, TextPart
from a2a_core.optable import Operation
from a2a_wsgi.auth import BearerAuthenticator

TOKENS = {"alice-token": "alice", "bob-token": "bob"}


@pytest.fixture(scope="module")
def guarded() -> Iterator[Both]:
    auth = BearerAuthenticator(lambda token: TOKENS.get(token))
    with served_both(grpc_app(auth=[auth])) as served:
        yield served


def _send() -> SendMessageRequest:
    return SendMessageRequest(message=Message(role=Role.USER, parts=[TextPart(text="hi")],
                                              message_id=f"m-{uuid.uuid4()}"))


def test_a_caller_without_credentials_is_unauthenticated_with_the_challenge(
        guarded: Both) -> None:
    with pytest.raises(HTTPStatusError) as raised:
        guarded.channel().call(Operation.SEND_MESSAGE, _send(), TIMEOUT)
    assert raised.value.status_code == 401
    assert raised.value.headers["www-authenticate"].startswith("Bearer")


def test_a_wrong_token_is_unauthenticated(guarded: Both) -> None:
    with pytest.raises(HTTPStatusError) as raised:
        guarded.channel(auth=BearerAuth("nobody")).call(Operation.SEND_MESSAGE, _send(),
                                                        TIMEOUT)
    assert raised.value.status_code == 401


def test_the_refusal_is_the_grpc_code_with_an_error_info(guarded: Both) -> None:
    """On the wire: UNAUTHENTICATED, and a google.rpc.Status whose ErrorInfo says why."""
    method = next(m for m in grpc_methods() if m.operation.name == "GetTask")
    with grpc.insecure_channel(guarded.target) as channel:
        rpc = channel.unary_unary(method.path, request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=method.response.FromString)
        with pytest.raises(grpc.RpcError) as raised:
            rpc(request_message(method, {"id": "t"}), timeout=10)
    error = raised.value
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
    trailers = dict(error.trailing_metadata())  # type: ignore[attr-defined]
    status = message_class("google.rpc.Status").FromString(trailers["grpc-status-details-bin"])
    assert status.code == grpc.StatusCode.UNAUTHENTICATED.value[0]  # type: ignore[attr-defined]
    info = message_class("google.rpc.ErrorInfo")()
    assert status.details[0].Unpack(info)  # type: ignore[attr-defined]
    assert info.reason == "UNAUTHENTICATED"  # type: ignore[attr-defined]


def test_the_token_names_the_caller_and_tasks_stay_its_own(guarded: Both) -> None:
    alice = guarded.channel(auth=BearerAuth("alice-token"))
    task = alice.call(Operation.SEND_MESSAGE, _send(), TIMEOUT)
    assert isinstance(task, Task)
    assert alice.call(Operation.GET_TASK, GetTaskRequest(id=task.id), TIMEOUT).id == task.id
    bob = guarded.channel(auth=BearerAuth("bob-token"))
    with pytest.raises(TaskNotFoundError):
        bob.call(Operation.GET_TASK, GetTaskRequest(id=task.id), TIMEOUT)


def test_auth_for_sends_credentials_only_where_it_says(guarded: Both) -> None:
    asked: list[str] = []

    def auth_for(url: str) -> BearerAuth | None:
        asked.append(url)
        return BearerAuth("alice-token") if url == f"http://{guarded.target}/" else None

    task = guarded.channel(auth_for=auth_for).call(Operation.SEND_MESSAGE, _send(), TIMEOUT)
    assert isinstance(task, Task)
    assert asked == [f"http://{guarded.target}/"]
    with pytest.raises(HTTPStatusError):
        guarded.channel(auth_for=lambda url: None).call(Operation.SEND_MESSAGE, _send(), TIMEOUT)
