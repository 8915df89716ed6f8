"""A request the server drops on a pooled connection is sent once more, when that is harmless.

The server here is a real socket server that answers the first request on each
connection with ``Connection: keep-alive`` and then, on the second, closes the
connection without a byte of answer: what a server closing an idle connection
just as the client reuses it looks like (``RemoteDisconnected``). Reads and
sends of a new message are retried on a fresh connection; CancelTask and a
message continuing a task are not (a repeat is not harmless), and fail with
ConnectError.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from a2a_client._cards import Endpoint
from a2a_client._errors import ConnectError
from a2a_client._rpc import RPCChannel
from a2a_client._transport import Transport
from a2a_core.errors import TaskNotFoundError
from a2a_core.models import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Role,
    SendMessageRequest,
    TextPart,
)
from a2a_core.optable import Operation


class DroppingServer:
    """Answers each connection's first request; drops the connection on its second."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/"
        #: (connection number, JSON-RPC method or request line) of every request read.
        self.seen: list[tuple[int, str]] = []
        self._threads: list[threading.Thread] = []
        self._conns: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        number = 0
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            number += 1
            self._conns.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn, number), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        with conn, conn.makefile("rb") as reader:
            for turn in (1, 2):
                head = [reader.readline()]
                while head[-1] not in (b"\r\n", b""):
                    head.append(reader.readline())
                if head[0] == b"":
                    return
                length = next((int(line.split(b":")[1]) for line in head
                               if line.lower().startswith(b"content-length:")), 0)
                body = reader.read(length) if length else b""
                request: dict[str, Any] = (json.loads(body) if body
                                           else {"id": None, "method": head[0].decode()})
                self.seen.append((number, str(request["method"])))
                if turn == 2:
                    return  # closed under the request: no answer at all
                answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": {
                    "code": -32001, "message": "Task not found"}}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Connection: keep-alive\r\nContent-Length: "
                             + str(len(answer)).encode() + b"\r\n\r\n" + answer)

    def close(self) -> None:
        self.listener.close()
        for conn in self._conns:  # wakes a handler still waiting for a request
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            thread.join(5)


@pytest.fixture()
def server() -> Iterator[DroppingServer]:
    running = DroppingServer()
    yield running
    running.close()


@pytest.fixture()
def channel(server: DroppingServer) -> Iterator[RPCChannel]:
    transport = Transport()
    yield RPCChannel(transport, lambda: Endpoint(url=server.url, version="1.0"), ())
    transport.close()


def message(task_id: str | None = None) -> Message:
    return Message(message_id="m-1", role=Role.USER, parts=(TextPart(text="hi"),),
                   task_id=task_id)


SAFE: list[tuple[Operation, Any]] = [
    (Operation.GET_TASK, GetTaskRequest(id="t-1")),
    (Operation.SEND_MESSAGE, SendMessageRequest(message=message())),
]
UNSAFE: list[tuple[Operation, Any]] = [
    (Operation.CANCEL_TASK, CancelTaskRequest(id="t-1")),
    (Operation.SEND_MESSAGE, SendMessageRequest(message=message(task_id="t-1"))),
]


def _call(channel: RPCChannel, op: Operation, request: Any) -> Callable[[], Any]:
    return lambda: channel.call(op, request, (5.0, 5.0))


@pytest.mark.parametrize(("op", "request_"), SAFE, ids=["GetTask", "SendMessage-new"])
def test_a_safe_request_dropped_unanswered_is_sent_once_more(
        server: DroppingServer, channel: RPCChannel, op: Operation, request_: Any) -> None:
    for _ in range(2):  # the second reuses the pooled connection, which the server drops
        with pytest.raises(TaskNotFoundError):
            _call(channel, op, request_)()
    assert server.seen == [(1, op.name), (1, op.name), (2, op.name)]


@pytest.mark.parametrize(("op", "request_"), UNSAFE, ids=["CancelTask", "SendMessage-continue"])
def test_a_request_a_repeat_could_harm_is_not_sent_again(
        server: DroppingServer, channel: RPCChannel, op: Operation, request_: Any) -> None:
    with pytest.raises(TaskNotFoundError):
        _call(channel, op, request_)()
    with pytest.raises(ConnectError):
        _call(channel, op, request_)()
    assert server.seen == [(1, op.name), (1, op.name)]


def test_a_get_is_retried_by_default_and_a_refused_connection_is_not(
        server: DroppingServer) -> None:
    transport = Transport()
    try:
        for _ in range(2):
            transport.request("GET", server.url, headers={}, timeout=(5.0, 5.0)).read()
        assert [number for number, _ in server.seen] == [1, 1, 2]
        closed = socket.create_server(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        closed.close()  # nothing listens there now: refused, not dropped
        with pytest.raises(ConnectError):
            transport.request("GET", f"http://127.0.0.1:{port}/", headers={}, timeout=(5.0, 5.0))
    finally:
        transport.close()
