"""docs/grpc.md's commands, run as written: HTTP workers and a gRPC process on one store.

Only these substitutions: ``.venv/bin/`` is this venv's folder; ``127.0.0.1:8000`` and
``127.0.0.1:9000`` are free ports; the working directory is a temporary folder with a link
to the checkout's ``examples`` (the SQLite file lands there). The pip line is checked, not
run: the extra it names must exist and be installed here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from importlib import metadata
from pathlib import Path

import grpc
import pytest
import requests
from grpc_health.v1 import health_pb2, health_pb2_grpc
from packaging.requirements import Requirement
from support.gunicorn import free_port, stop_group

from a2a_client import A2AClient
from a2a_client._cards import Endpoint
from a2a_client.grpc_binding import GrpcChannel
from a2a_core.models import Message, Role, SendMessageRequest, Task, TaskState, TextPart
from a2a_core.optable import Operation

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency on 3.10
    import tomli as tomllib

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def _block(containing: str) -> list[str]:
    text = (ROOT / "docs" / "grpc.md").read_text()
    blocks = [b for b in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M) if containing in b]
    assert len(blocks) == 1
    return [line.strip() for line in blocks[0].splitlines() if line.strip()]


def _check_pip(line: str) -> None:
    extra = re.fullmatch(r"\.venv/bin/pip install -e '\.\[(\w+)\]'", line)
    assert extra, line
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for spec in project["optional-dependencies"][extra[1]]:
        requirement = Requirement(spec)
        installed = metadata.version(requirement.name)
        assert requirement.specifier.contains(installed, prereleases=True), (spec, installed)


def _wait(check: object, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if check():  # type: ignore[operator]
                return
        except (requests.RequestException, grpc.RpcError):
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


def test_the_page_serves_http_and_grpc_on_one_store(tmp_path: Path) -> None:
    pip, http_line, grpc_line = _block("a2a_wsgi.grpc")
    _check_pip(pip)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    http_addr, grpc_addr = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    env = {"PATH": os.pathsep.join([str(VENV_BIN), os.defpath]), "HOME": str(tmp_path),
           "LANG": "C.UTF-8"}
    started: list[subprocess.Popen[bytes]] = []
    try:
        for line, log in ((http_line, "http.log"), (grpc_line, "grpc.log")):
            command = line.replace(".venv/bin/", f"{VENV_BIN}/") \
                .replace("127.0.0.1:8000", http_addr).replace("127.0.0.1:9000", grpc_addr)
            with (tmp_path / log).open("wb") as out:
                started.append(subprocess.Popen(["/bin/bash", "-c", command], cwd=tmp_path,
                                                env=env, stdout=out, stderr=out,
                                                start_new_session=True))
        card_url = f"http://{http_addr}/.well-known/agent-card.json"
        _wait(lambda: requests.get(card_url, timeout=2).ok, started[0], tmp_path / "http.log")
        with grpc.insecure_channel(grpc_addr) as health_channel:
            health = health_pb2_grpc.HealthStub(health_channel)
            _wait(lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=2).status
                  == health_pb2.HealthCheckResponse.SERVING, started[1], tmp_path / "grpc.log")
        endpoint = Endpoint(url=grpc_addr, version="1.0", binding="GRPC")
        sent = GrpcChannel(lambda: endpoint).call(Operation.SEND_MESSAGE, SendMessageRequest(
            message=Message(role=Role.USER, parts=[TextPart(text="from the page")],
                            message_id=f"m-{uuid.uuid4()}")), (5.0, 10.0))
        assert isinstance(sent, Task)
        got = A2AClient(f"http://{http_addr}", binding="JSONRPC").get_task(sent.id)
        assert got.status.state == TaskState.COMPLETED
        assert (tmp_path / "tasks.sqlite3").exists()
    finally:
        for proc in started:
            stop_group(proc)


def test_the_page_serves_grpc_with_a2a_serve_and_sends_over_it(tmp_path: Path) -> None:
    serve_line, send_line = _block("--grpc")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    http_addr, grpc_addr = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    env = {"PATH": os.pathsep.join([str(VENV_BIN), os.defpath]), "HOME": str(tmp_path),
           "LANG": "C.UTF-8"}

    def written(line: str) -> str:
        return line.replace(".venv/bin/", f"{VENV_BIN}/") \
            .replace("127.0.0.1:8000", http_addr).replace("127.0.0.1:9000", grpc_addr)

    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(["/bin/bash", "-c", written(serve_line)], cwd=tmp_path,
                                  env=env, stdout=out, stderr=out, start_new_session=True)
    try:
        card_url = f"http://{http_addr}/.well-known/agent-card.json"
        _wait(lambda: requests.get(card_url, timeout=2).ok, server, log)
        interfaces = requests.get(card_url, timeout=5).json()["supportedInterfaces"]
        assert {"url": grpc_addr, "protocolBinding": "GRPC", "protocolVersion": "1.0"} \
            in interfaces
        sent = subprocess.run(["/bin/bash", "-c", written(send_line)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stderr + log.read_text()
        assert "hello" in sent.stdout and "completed" in sent.stdout.lower()
        assert (tmp_path / "a2a-tasks.sqlite3").exists()
    finally:
        stop_group(server)
