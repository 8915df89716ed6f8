"""Each gRPC call gets the ``a2a_wsgi.access`` line an HTTP request gets: binding GRPC, the
operation, the status the error has on the HTTP bindings, a stream's events and end."""

from __future__ import annotations

import logging
import time
import uuid

import pytest
from grpc_support import Both

from a2a_core.errors import TaskNotFoundError
from a2a_core.models import GetTaskRequest, Message, Role, SendMessageRequest, Task, TextPart
from a2a_core.optable import Operation
from a2a_wsgi._telemetry import ACCESS_LOGGER

TIMEOUT = (5.0, 10.0)


def _send(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(role=Role.USER, parts=[TextPart(text=text)],
                                              message_id=f"m-{uuid.uuid4()}"))


def _lines(caplog: pytest.LogCaptureFixture, operation: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records
            if r.name == ACCESS_LOGGER and getattr(r, "operation", None) == operation]


def test_a_unary_call_is_one_access_line(both: Both, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, ACCESS_LOGGER)
    task = both.channel().call(Operation.SEND_MESSAGE, _send("logged"), TIMEOUT)
    assert isinstance(task, Task)
    (line,) = _lines(caplog, "SendMessage")
    assert (line.binding, line.a2a_version, line.http_status, line.task_id) == (  # type: ignore[attr-defined]
        "GRPC", "1.0", 200, task.id)
    assert line.path == "/lf.a2a.v1.A2AService/SendMessage"  # type: ignore[attr-defined]
    assert line.remote_addr == "127.0.0.1"  # type: ignore[attr-defined]
    assert line.getMessage().startswith("SendMessage GRPC 1.0 -> 200 ")


def test_a_failed_call_logs_its_error_and_http_status(
        both: Both, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, ACCESS_LOGGER)
    with pytest.raises(TaskNotFoundError):
        both.channel().call(Operation.GET_TASK, GetTaskRequest(id="tsk-none"), TIMEOUT)
    (line,) = _lines(caplog, "GetTask")
    assert (line.http_status, line.error_reason, line.task_id) == (  # type: ignore[attr-defined]
        404, "TASK_NOT_FOUND", "tsk-none")
    assert line.levelno == logging.INFO  # the caller's mistake, not the server's


def test_a_stream_is_logged_when_it_ends(both: Both, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, ACCESS_LOGGER)
    with both.channel().stream(Operation.SEND_STREAMING_MESSAGE, _send("streamed")) as events:
        received = list(events)
    assert received
    deadline = time.monotonic() + 10  # written when the server's side of the rpc ends
    while not _lines(caplog, "SendStreamingMessage") and time.monotonic() < deadline:
        time.sleep(0.05)
    (line,) = _lines(caplog, "SendStreamingMessage")
    # Ended by the server, or cancelled by the client once it had the last event.
    assert line.streamed  # type: ignore[attr-defined]
    assert line.stream_end in ("complete", "client gone")  # type: ignore[attr-defined]
    assert line.events == len(received)  # type: ignore[attr-defined]
    assert line.binding == "GRPC"  # type: ignore[attr-defined]
