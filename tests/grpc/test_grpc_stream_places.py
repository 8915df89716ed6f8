"""A stream holds a thread of the gRPC server's pool: ``max_streams`` bounds them, calls keep
``max_workers`` threads of their own, and a held stream learns at once that its call ended.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from grpc_support import grpc_app

from a2a_core._grpc import decode_status_details, message_class
from a2a_core.errors import InternalError
from a2a_wsgi._disconnect import hangup_fd
from a2a_wsgi.grpc import serve_grpc
from a2a_wsgi.grpc._hangup import CallHangup

SERVICE = "/lf.a2a.v1.A2AService/"
WORKING, CANCELED = 2, 5


def _call(channel: grpc.Channel, rpc: str, message: Any, answer: str) -> Any:
    raw = channel.unary_unary(SERVICE + rpc)(message.SerializeToString(), timeout=10)
    return message_class(f"lf.a2a.v1.{answer}").FromString(raw)


def _held_task(channel: grpc.Channel) -> str:
    """A task the agent keeps WORKING until it is canceled."""
    request = message_class("lf.a2a.v1.SendMessageRequest")()
    request.message.message_id = f"m-{time.monotonic_ns()}"
    request.message.role = 1
    request.message.parts.add().text = "wait"
    request.configuration.return_immediately = True
    task_id: str = _call(channel, "SendMessage", request, "SendMessageResponse").task.id
    get = message_class("lf.a2a.v1.GetTaskRequest")(id=task_id)
    deadline = time.monotonic() + 10
    while _call(channel, "GetTask", get, "Task").status.state != WORKING:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return task_id


def _subscribe(channel: grpc.Channel, task_id: str) -> Any:
    request = message_class("lf.a2a.v1.SubscribeToTaskRequest")(id=task_id)
    return channel.unary_stream(SERVICE + "SubscribeToTask")(request.SerializeToString())


def test_a_stream_past_max_streams_is_refused_and_calls_still_answer() -> None:
    app = grpc_app()
    server = serve_grpc(app, "127.0.0.1:0", max_workers=1, max_streams=2)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            task_id = _held_task(channel)
            held = [_subscribe(channel, task_id) for _ in range(2)]
            for stream in held:
                next(stream)  # the task's snapshot: admitted
            refused = _subscribe(channel, task_id)
            try:
                next(refused)
                raise AssertionError("a third stream was admitted")
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.UNAVAILABLE
                trailers = dict(exc.trailing_metadata())
            error = decode_status_details("UNAVAILABLE", "",
                                          trailers["grpc-status-details-bin"])
            assert isinstance(error, InternalError) and "Server busy" in error.message
            assert trailers["retry-after"] == "5"
            get = message_class("lf.a2a.v1.GetTaskRequest")(id=task_id)
            assert _call(channel, "GetTask", get, "Task").status.state == WORKING  # a thread left
            held.pop().cancel()  # its place is free again once the server sees the cancel
            deadline = time.monotonic() + 10
            while True:
                again = _subscribe(channel, task_id)
                try:
                    next(again)
                    break
                except grpc.RpcError as exc:
                    assert exc.code() == grpc.StatusCode.UNAVAILABLE
                    assert time.monotonic() < deadline, "the canceled stream kept its place"
                    time.sleep(0.05)
            held.append(again)
            cancel = message_class("lf.a2a.v1.CancelTaskRequest")(id=task_id)
            _call(channel, "CancelTask", cancel, "Task")
            for stream in held:
                last = [message_class("lf.a2a.v1.StreamResponse").FromString(raw)
                        for raw in stream][-1]
                assert last.status_update.status.state == CANCELED
    finally:
        server.stop(0)
        app.close()


def test_a_held_stream_is_told_when_its_call_ends() -> None:
    """The stream's probe can be watched (a descriptor the runtime's selector waits on, not
    a poll), turns readable when the client cancels, and then says the client has gone."""
    seen: dict[str, Any] = {}
    started, ended = threading.Event(), threading.Event()

    def answer(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
        hangup = CallHangup(context)
        try:
            fd = hangup_fd(hangup.probe)
            seen["watchable"], seen["gone before"] = fd is not None, hangup.probe()
            started.set()
            assert fd is not None
            seen["readable"] = select.select([fd], [], [], 10)[0] == [fd]
            seen["gone after"] = hangup.probe()
        finally:
            hangup.close()
            ended.set()
        yield b"never read"

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handler = grpc.unary_stream_rpc_method_handler(answer)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("test.Held", {"Hold": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_stream("/test.Held/Hold")(b"")
            assert started.wait(15)
            call.cancel()
            assert ended.wait(15)
    finally:
        server.stop(0).wait()
    assert seen == {"watchable": True, "gone before": False, "readable": True,
                    "gone after": True}
