"""``a2a serve APP --workers 2 --grpc HOST:PORT``: gunicorn's workers and the gRPC process
it starts beside them serve one set of tasks, and the card lists the gRPC interface.

Every server here is the real ``a2a`` command of this venv, run in a temporary folder (no
store named: the SQLite file there, shared by the workers and the gRPC process). The
clients are ``A2AClient`` with ``binding="GRPC"`` or JSON-RPC, and the ``a2a`` command.
``examples.echo:app`` answers at once; ``grpc_site:app`` (tests/grpc/grpc_support.py) holds
a task sent "wait" WORKING until it is canceled, so a stream can follow it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import requests
from grpc_health.v1 import health_pb2, health_pb2_grpc
from support.gunicorn import ROOT, free_port, stop_group

from a2a_client import A2AClient
from a2a_core.models import Task, TaskState, TaskStatusUpdateEvent
from a2a_wsgi._grpc_process import grpc_environ, grpc_url
from a2a_wsgi._serve_checks import EXIT_CODES, EXIT_GRPC, EXIT_STORE

pytestmark = pytest.mark.slow
A2A = Path(sys.executable).parent / "a2a"
HERE = Path(__file__).resolve().parent


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    url: str
    target: str
    folder: Path

    def log(self) -> str:
        return (self.folder / "serve.log").read_text(errors="replace")


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _start(app: str, folder: Path, *extra: str) -> Served:
    """``a2a serve APP --grpc`` in ``folder``, ready: the card answers, gRPC health SERVING."""
    (folder / "examples").symlink_to(ROOT / "examples")
    http_port, grpc_port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
    env.pop("A2A_STORE", None)
    env.pop("A2A_GRPC_URL", None)
    with (folder / "serve.log").open("wb") as log:
        proc = subprocess.Popen(
            [str(A2A), "serve", app, "--bind", f"127.0.0.1:{http_port}", "--grpc",
             f"127.0.0.1:{grpc_port}", "--graceful-timeout", "2", *extra],
            cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
    served = Served(proc, f"http://127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}", folder)
    deadline = time.monotonic() + 60
    with grpc.insecure_channel(served.target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while True:
            assert proc.poll() is None, served.log()
            assert time.monotonic() < deadline, served.log()
            try:
                card_ok = requests.get(f"{served.url}/.well-known/agent-card.json", timeout=2).ok
                if card_ok and health.Check(health_pb2.HealthCheckRequest(), timeout=2).status \
                        == health_pb2.HealthCheckResponse.SERVING:
                    return served
            except (requests.RequestException, grpc.RpcError):
                pass
            time.sleep(0.2)


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = _start("examples.echo:app", tmp_path_factory.mktemp("echo"), "--workers", "2")
    try:
        yield served
    finally:
        stop_group(served.proc, timeout=30)


@pytest.fixture(scope="module", params=["gevent", "gthread"])
def held(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
         ) -> Iterator[Served]:
    """Two workers of ``a2a serve``'s default worker class (gevent: an SSE stream that
    follows a task parks) and of gthread, beside the gRPC process."""
    served = _start("grpc_site:app", tmp_path_factory.mktemp("held"), "--workers", "2",
                    "--worker-class", request.param)
    try:
        yield served
    finally:
        stop_group(served.proc, timeout=30)


def _text(task: Task) -> list[str]:
    return [p.text for a in task.artifacts or [] for p in a.parts if hasattr(p, "text")]


# -- the card and the stores ------------------------------------------------------------------


def test_the_card_lists_the_grpc_interface(echo: Served) -> None:
    card = requests.get(f"{echo.url}/.well-known/agent-card.json", timeout=5).json()
    grpc_interfaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert grpc_interfaces == [{"url": echo.target, "protocolBinding": "GRPC",
                                "protocolVersion": "1.0"}]
    assert card["supportedInterfaces"][-1]["protocolBinding"] == "GRPC"  # after the HTTP ones
    with A2AClient(echo.url, binding="GRPC") as client:
        assert (client.endpoint.url, client.binding, client.version) == \
            (echo.target, "GRPC", "1.0")
    with A2AClient(echo.url) as client:  # "auto" keeps to HTTP
        assert client.binding == "JSONRPC"
    assert (echo.folder / "a2a-tasks.sqlite3").exists()  # no store named: the file, shared


def test_a_task_sent_over_grpc_is_read_over_json_rpc_and_the_reverse(echo: Served) -> None:
    with A2AClient(echo.url, binding="GRPC") as over_grpc, \
            A2AClient(echo.url, binding="JSONRPC") as over_rpc:
        sent = over_grpc.send_message("over grpc")
        assert isinstance(sent, Task) and sent.status.state == TaskState.COMPLETED
        for _ in range(4):  # two workers: each answers some of the reads
            got = over_rpc.get_task(sent.id)
            assert got.status.state == TaskState.COMPLETED and _text(got) == ["over grpc"]
        back = over_rpc.send_message("over json-rpc")
        assert isinstance(back, Task)
        read = over_grpc.get_task(back.id)
        assert read.status.state == TaskState.COMPLETED and _text(read) == ["over json-rpc"]
        assert over_grpc.server_version == "1.0"


def test_a_grpc_stream_through_the_client_ends_completed(echo: Served) -> None:
    with A2AClient(echo.url, binding="GRPC") as client:
        with client.stream_message("streamed") as events:
            received = list(events)
    assert isinstance(received[0], Task)
    last = received[-1]
    state = last.status.state if isinstance(last, (Task, TaskStatusUpdateEvent)) else None
    assert state == TaskState.COMPLETED


def test_a2a_send_over_grpc_waits_for_the_task(echo: Served) -> None:
    done = subprocess.run([str(A2A), "send", echo.url, "hello", "--binding", "grpc", "--wait",
                           "--json"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    task = json.loads(done.stdout.splitlines()[-1])
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    with A2AClient(echo.url, binding="JSONRPC") as client:  # the task is the workers' too
        assert _text(client.get_task(task["id"])) == ["hello"]


def test_a2a_send_over_grpc_without_the_extra_names_it(echo: Served, tmp_path: Path) -> None:
    fake = tmp_path / "no-grpc" / "grpc"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'grpc'\", name='grpc')\n")
    done = subprocess.run([str(A2A), "send", echo.url, "hello", "--binding", "grpc"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(fake.parent)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "a2a: the GRPC binding needs the 'grpc' extra, which is not installed here "
        "(No module named 'grpc'): pip install 'a2a-wsgi[grpc]'"]


# -- following a task across the processes ----------------------------------------------------


def _states(events: Iterator[object]) -> list[TaskState]:
    return [e.status.state for e in events if isinstance(e, (Task, TaskStatusUpdateEvent))]


def test_a_task_sent_over_grpc_is_followed_over_sse_from_a_worker(held: Served) -> None:
    with A2AClient(held.url, binding="GRPC") as over_grpc, \
            A2AClient(held.url, binding="JSONRPC") as over_rpc:
        sent = over_grpc.send_message("wait", blocking=False)
        assert isinstance(sent, Task) and not sent.status.state.is_terminal
        assert not over_rpc.get_task(sent.id).status.state.is_terminal
        with over_rpc.subscribe(sent.id) as events:  # SSE, in a gunicorn worker
            first = next(events)
            assert isinstance(first, Task) and first.id == sent.id
            over_grpc.cancel_task(sent.id)  # in the gRPC process: the SSE stream learns it
            states = _states(events)
    assert states[-1] == TaskState.CANCELED


def test_a_task_sent_over_json_rpc_is_followed_over_grpc(held: Served) -> None:
    with A2AClient(held.url, binding="GRPC") as over_grpc, \
            A2AClient(held.url, binding="JSONRPC") as over_rpc:
        sent = over_rpc.send_message("wait", blocking=False)
        assert isinstance(sent, Task)
        with over_grpc.subscribe(sent.id) as events:
            first = next(events)
            assert isinstance(first, Task) and not first.status.state.is_terminal
            over_rpc.cancel_task(sent.id)  # in a worker: the gRPC stream learns it
            states = _states(events)
        assert states[-1] == TaskState.CANCELED
        assert over_grpc.get_task(sent.id).status.state == TaskState.CANCELED


def test_wait_over_grpc_follows_the_task_stream(held: Served) -> None:
    with A2AClient(held.url, binding="GRPC") as over_grpc, \
            A2AClient(held.url, binding="JSONRPC") as over_rpc:
        sent = over_rpc.send_message("wait", blocking=False)
        assert isinstance(sent, Task)
        timer = threading.Timer(1.0, over_rpc.cancel_task, args=(sent.id,))
        timer.start()
        try:
            settled = over_grpc.wait(sent.id, timeout=30)
        finally:
            timer.join()
    assert isinstance(settled, Task) and settled.status.state == TaskState.CANCELED


# -- starting and stopping ------------------------------------------------------------------


def test_sigterm_stops_the_grpc_process_too(tmp_path: Path) -> None:
    served = _start("examples.echo:app", tmp_path, "--workers", "1", "--worker-class", "gthread")
    try:
        with A2AClient(served.url, binding="GRPC") as over_grpc, \
                A2AClient(served.url, binding="JSONRPC") as over_rpc:
            sent = over_grpc.send_message("one worker")  # one worker: still the SQLite file
            assert isinstance(sent, Task)
            assert _text(over_rpc.get_task(sent.id)) == ["one worker"]
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(timeout=60) == 0, served.log()
    finally:
        stop_group(served.proc)
    assert not _listens(int(served.target.rsplit(":", 1)[1]))
    assert "Traceback" not in served.log()


def _grpc_child(parent: int) -> int | None:
    """The pid of ``a2a serve``'s gRPC process (a child of its master), else None."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"a2a_wsgi.grpc" in argv:
            return int(entry.name)
    return None


@pytest.mark.parametrize("worker_class", ["gevent", "gthread"])
def test_a_grpc_process_that_dies_is_restarted(tmp_path: Path, worker_class: str) -> None:
    served = _start("examples.echo:app", tmp_path, "--workers", "1",
                    "--worker-class", worker_class)
    try:
        first = _grpc_child(served.proc.pid)
        assert first is not None, served.log()
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while (_grpc_child(served.proc.pid) in (None, first)
               or "the gRPC process restarted" not in served.log()):
            assert served.proc.poll() is None, served.log()
            assert time.monotonic() < deadline, served.log()
            time.sleep(0.2)
        with A2AClient(served.url, binding="GRPC") as over_grpc, \
                A2AClient(served.url, binding="JSONRPC") as over_rpc:
            sent = over_grpc.send_message("after the restart")
            assert isinstance(sent, Task)
            assert _text(over_rpc.get_task(sent.id)) == ["after the restart"]
        assert f"the gRPC process (pid {first}) exited" in served.log()
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(timeout=60) == 0, served.log()
    finally:
        stop_group(served.proc)
    assert not _listens(int(served.target.rsplit(":", 1)[1]))
    assert "Traceback" not in served.log()


def test_a_busy_grpc_port_is_one_line_and_its_own_exit_code(tmp_path: Path) -> None:
    with socket.socket() as held_socket:
        held_socket.bind(("127.0.0.1", 0))
        held_socket.listen(1)
        port = held_socket.getsockname()[1]
        done = subprocess.run(
            [str(A2A), "serve", "examples.echo:app", "--bind", f"127.0.0.1:{free_port()}",
             "--grpc", f"127.0.0.1:{port}"],
            cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == EXIT_GRPC and EXIT_GRPC in EXIT_CODES
    assert done.stderr.strip().splitlines() == [
        f"a2a serve: cannot listen for gRPC on 127.0.0.1:{port}: another process is listening "
        "there; stop it or choose another port with --grpc"]


def test_an_in_memory_store_is_refused_even_for_one_worker(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(A2A), "serve", "examples.echo:app", "--bind", f"127.0.0.1:{free_port()}",
         "--grpc", f"127.0.0.1:{free_port()}", "--workers", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, "A2A_STORE": "memory"})
    assert done.returncode == EXIT_STORE, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("a2a serve: ") and "in memory" in line


def test_the_same_address_for_both_is_refused() -> None:
    port = free_port()
    done = subprocess.run(
        [str(A2A), "serve", "examples.echo:app", "--bind", f"127.0.0.1:{port}",
         "--grpc", f"127.0.0.1:{port}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == EXIT_GRPC
    assert done.stderr.strip().splitlines() == [
        f"a2a serve: --grpc and --bind name the same address 127.0.0.1:{port}"]


def test_the_card_url_of_a_wildcard_bind_is_this_machines_name() -> None:
    environ: dict[str, str] = {}
    grpc_environ("0.0.0.0", 9000, environ)
    assert environ == {"A2A_GRPC_URL": f"{socket.getfqdn()}:9000", "A2A_STORE": "sqlite://"}
    named = {"A2A_GRPC_URL": "grpcs://agent.example:443", "A2A_STORE": "postgresql://db/a"}
    grpc_environ("127.0.0.1", 9000, named)  # what the deployment set stays
    assert named == {"A2A_GRPC_URL": "grpcs://agent.example:443", "A2A_STORE": "postgresql://db/a"}
    assert grpc_url("::1", 9000) == "[::1]:9000"
