"""A broker that is down when a send arrives: a clear "retry later" within 5 s, nothing left
SUBMITTED; once a broker is back (a private redis-server on that port), the same send works.
The machine's shared RabbitMQ and Redis are never touched."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from celery_support import Stack, until
from support.gunicorn import free_port

from a2a_client import A2AClient
from a2a_core.models import Task, TaskState

pytestmark = pytest.mark.celery


def _message(text: str, message_id: str) -> dict[str, object]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


@pytest.fixture()
def redis_port() -> int:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (the fault tests start their own)")
    return free_port()


@pytest.fixture()
def down_stack(tmp_path: Path, redis_port: int) -> Iterator[Stack]:
    stack = Stack(tmp_path, broker=f"redis://127.0.0.1:{redis_port}/0", start_worker=False)
    try:
        yield stack
    finally:
        stack.stop()


def _start_redis(port: int, folder: Path, *, appendonly: bool = False
                 ) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "yes" if appendonly else "no",
                             "--dir", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def up() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            return False

    assert until(up, 10), "the private redis-server did not start"
    return proc


def test_send_with_the_broker_down_answers_retry_later_and_leaves_nothing_submitted(
        down_stack: Stack, redis_port: int, tmp_path: Path) -> None:
    url = down_stack.url
    rpc_id = f"msg-{uuid.uuid4().hex}"
    started = time.monotonic()
    answer = requests.post(url, timeout=30, headers={"A2A-Version": "1.0"}, json={
        "jsonrpc": "2.0", "id": 7, "method": "SendMessage",
        "params": {"message": _message("hello", rpc_id)}})
    took = time.monotonic() - started
    assert took < 5, f"the send took {took:.1f} s to fail"
    error = answer.json()["error"]
    assert error["code"] == -32603 and "retry in" in error["message"], error
    assert answer.status_code == 503 and int(answer.headers["Retry-After"]) > 0

    started = time.monotonic()
    rest = requests.post(url + "rest/message:send", timeout=30,
                         headers={"A2A-Version": "1.0", "Content-Type": "application/a2a+json"},
                         json={"message": _message("hello", f"msg-{uuid.uuid4().hex}")})
    assert time.monotonic() - started < 5
    assert rest.status_code == 503 and int(rest.headers["Retry-After"]) > 0, rest.text
    assert "retry in" in rest.text

    with A2AClient(url, version="1.0", binding="JSONRPC", timeout=30) as client:
        tasks = list(client.list_tasks())
        assert tasks and all(t.status.state is TaskState.FAILED for t in tasks), tasks

        # The broker comes back (and a worker with it): the same send, retried, runs.
        redis = _start_redis(redis_port, tmp_path)
        try:
            down_stack.add_worker()
            answer = requests.post(url, timeout=30, headers={"A2A-Version": "1.0"}, json={
                "jsonrpc": "2.0", "id": 8, "method": "SendMessage",
                "params": {"message": _message("hello", rpc_id)}})
            result = answer.json()["result"]
            task = result.get("task", result)
            assert task["status"]["state"] == "TASK_STATE_COMPLETED", answer.text
            got = client.get_task(task["id"])
            assert isinstance(got, Task) and got.status.state is TaskState.COMPLETED
        finally:
            for worker in down_stack.workers:
                worker.stop()
            down_stack.workers.clear()
            redis.terminate()
            redis.wait(timeout=10)


def test_an_amqp_broker_that_is_down_fails_the_send_within_5_s(tmp_path: Path) -> None:
    """RabbitMQ's transport (publisher confirms) on a port nobody listens on."""
    stack = Stack(tmp_path, broker=f"amqp://guest:guest@127.0.0.1:{free_port()}//",
                  start_worker=False)
    try:
        started = time.monotonic()
        answer = requests.post(stack.url, timeout=30, headers={"A2A-Version": "0.3"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": {"message": {"kind": "message", "messageId": f"m-{uuid.uuid4().hex}",
                                   "role": "user", "parts": [{"kind": "text", "text": "hi"}]}}})
        assert time.monotonic() - started < 5
        error = answer.json()["error"]
        assert error["code"] == -32603 and "retry in" in error["message"], error
        assert answer.status_code == 503 and answer.headers["Retry-After"]
    finally:
        stack.stop()


@pytest.mark.slow  # starts and restarts a redis-server, a worker after it
def test_a_queued_run_survives_a_broker_restart(down_stack: Stack, redis_port: int,
                                                tmp_path: Path) -> None:
    """A send acknowledged while no worker runs: its message waits in the broker (Redis
    with appendonly), the broker stops and starts again, then a worker runs it."""
    redis = _start_redis(redis_port, tmp_path, appendonly=True)
    try:
        with A2AClient(down_stack.url, version="1.0", binding="JSONRPC", timeout=30) as client:
            task = client.send_message("hello again", blocking=False)
            assert isinstance(task, Task) and task.status.state is TaskState.SUBMITTED
            redis.terminate()  # a clean stop writes the append-only file
            redis.wait(timeout=10)
            redis = _start_redis(redis_port, tmp_path, appendonly=True)
            down_stack.add_worker()
            assert until(lambda: client.get_task(task.id).status.state
                         is TaskState.COMPLETED, 30), down_stack.logs()
    finally:
        for worker in down_stack.workers:
            worker.stop()
        down_stack.workers.clear()
        redis.terminate()
        redis.wait(timeout=10)
