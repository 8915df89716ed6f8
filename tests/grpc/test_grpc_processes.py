"""``python -m a2a_wsgi.grpc`` beside gunicorn workers on one SQLite file: one set of tasks.

Both serve ``grpc_site:app`` (tests/grpc/grpc_support.py's agent: "wait" holds a task
WORKING until it is canceled).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from support.gunicorn import ROOT, ServerProcess, free_port, start_gunicorn
from support.processes import stop

from a2a_client import A2AClient
from a2a_client._cards import Endpoint
from a2a_client.grpc_binding import GrpcChannel
from a2a_core.models import (
    GetTaskRequest,
    Message,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_core.optable import Operation

pytestmark = pytest.mark.slow
TIMEOUT = (5.0, 10.0)
HERE = Path(__file__).resolve().parent
APP = "grpc_site:app"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("grpc-store") / "tasks.sqlite3"
    return {"A2A_STORE": f"sqlite:///{path}"}


@pytest.fixture(scope="module")
def http(store: dict[str, str], tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[ServerProcess]:
    server = start_gunicorn(APP, workers=2, env=store, pythonpath=[HERE],
                            log_path=tmp_path_factory.mktemp("gunicorn") / "stderr.log")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def _start_grpc(store: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "a2a_wsgi.grpc", APP, "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT, env={**os.environ, **store, "PYTHONPATH": f"{HERE}{os.pathsep}{ROOT}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    target = f"127.0.0.1:{port}"
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()[0]
            try:
                answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                assert answer.status == health_pb2.HealthCheckResponse.SERVING
                return proc, target
            except grpc.RpcError:
                assert time.monotonic() < deadline, "the gRPC server did not start"
                time.sleep(0.1)


@pytest.fixture(scope="module")
def grpc_target(store: dict[str, str]) -> Iterator[str]:
    proc, target = _start_grpc(store)
    try:
        yield target
    finally:
        stop(proc)


def _channel(target: str) -> GrpcChannel:
    endpoint = Endpoint(url=target, version="1.0", binding="GRPC")
    return GrpcChannel(lambda: endpoint)


def _send(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(role=Role.USER, parts=[TextPart(text=text)],
                                              message_id=f"m-{uuid.uuid4()}"))


def test_a_task_sent_over_grpc_is_read_over_json_rpc_from_the_workers(
        http: ServerProcess, grpc_target: str) -> None:
    task = _channel(grpc_target).call(Operation.SEND_MESSAGE, _send("over grpc"), TIMEOUT)
    assert isinstance(task, Task)
    client = A2AClient(http.url, binding="JSONRPC")
    for _ in range(4):  # two workers: each answers some of the reads
        got = client.get_task(task.id)
        assert got.status.state == TaskState.COMPLETED
        assert [p.text for a in got.artifacts or [] for p in a.parts] == ["echo: over grpc"]


def test_a_task_sent_over_json_rpc_is_followed_over_grpc_to_its_cancel(
        http: ServerProcess, grpc_target: str) -> None:
    client = A2AClient(http.url, binding="JSONRPC")
    sent = client.send_message("wait", blocking=False)
    assert isinstance(sent, Task)
    channel = _channel(grpc_target)
    with channel.stream(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=sent.id)) as events:
        first = next(events)
        assert isinstance(first, Task) and first.id == sent.id
        client.cancel_task(sent.id)  # in a gunicorn worker: the gRPC stream learns it
        states = [e.status.state for e in events if isinstance(e, TaskStatusUpdateEvent)]
    assert states[-1] == TaskState.CANCELED
    got = channel.call(Operation.GET_TASK, GetTaskRequest(id=sent.id), TIMEOUT)
    assert got.status.state == TaskState.CANCELED


def test_sigterm_stops_the_grpc_server_cleanly(store: dict[str, str]) -> None:
    proc, _ = _start_grpc(store)
    try:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    finally:
        stop(proc)
    assert proc.returncode == 0, output
    assert "serving gRPC on 127.0.0.1:" in output


def test_an_in_memory_store_is_refused_beside_other_processes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "a2a_wsgi.grpc", "examples.echo:app", "--bind", "127.0.0.1:0"],
        cwd=ROOT, env={**os.environ, "A2A_STORE": "memory"}, capture_output=True, text=True,
        timeout=60)
    assert done.returncode != 0
    assert "in memory" in done.stderr
