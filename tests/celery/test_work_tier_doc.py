"""The commands of docs/work-tier.md, run as written (RabbitMQ, then Redis).

Substitutions only: ``.venv/bin/`` is this venv's folder; ``127.0.0.1:8000`` a free port;
the Redis URL's ``127.0.0.1:6379`` a private redis-server's port (the shared Redis is
never used); the queue (``A2A_CELERY_QUEUE``) and the SQLite file (``A2A_DB``) are this
run's own, given in the environment. The pip line is checked, not run: the extra exists
and its requirements are installed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

import pytest
from celery_support import RABBITMQ, _delete_queue, need_broker, until
from packaging.requirements import Requirement
from support.gunicorn import ROOT, free_port, stop_group

pytestmark = pytest.mark.celery

VENV_BIN = str(Path(sys.executable).parent) + "/"
DOC = ROOT / "docs" / "work-tier.md"


def _block(containing: str) -> list[str]:
    blocks = [b for b in re.findall(r"^```sh\n(.*?)^```", DOC.read_text(), re.S | re.M)
              if containing in b]
    assert len(blocks) == 1, f"{len(blocks)} sh blocks mention {containing!r}"
    return [line.strip() for line in blocks[0].splitlines() if line.strip()]


class _Shell:
    def __init__(self, tmp: Path, broker: str) -> None:
        self.tmp, self.port = tmp, free_port()
        self.queue = f"a2a-doc-{uuid.uuid4().hex[:12]}"
        self.env = {**os.environ, "A2A_CELERY_QUEUE": self.queue, "A2A_CELERY_BROKER": broker,
                    "A2A_DB": str(tmp / "tasks.sqlite3"), "A2A_STORE": "",
                    "PYTHONPATH": str(ROOT)}
        self.env.pop("A2A_BASE_URL", None)
        self.started: list[subprocess.Popen[bytes]] = []
        self._logs: list[BinaryIO] = []

    def line(self, text: str) -> str:
        return (text.replace(".venv/bin/", VENV_BIN)
                .replace("127.0.0.1:8000", f"127.0.0.1:{self.port}"))

    def serve(self, text: str, name: str) -> None:
        log = (self.tmp / f"{name}.log").open("wb")
        self._logs.append(log)
        self.started.append(subprocess.Popen(["/bin/bash", "-c", self.line(text)],
                                             cwd=ROOT, env=self.env, stdout=log, stderr=log,
                                             start_new_session=True))

    def run(self, text: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["/bin/bash", "-c", self.line(text)], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=60)

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in self.tmp.glob("*.log"))

    def stop(self) -> None:
        for proc in self.started:
            stop_group(proc, timeout=20)
        for log in self._logs:
            log.close()


def _check_pip(line: str) -> None:
    match = re.fullmatch(r"\.venv/bin/pip install -e '\.\[(\w+)\]'", line)
    assert match, line
    requires = metadata.requires("a2a-wsgi") or []
    extra = [Requirement(r) for r in requires if f'extra == "{match[1]}"' in r]
    assert extra, f"no extra {match[1]!r} in pyproject.toml"
    for requirement in extra:
        assert metadata.version(requirement.name), requirement.name


def _send_until_served(shell: _Shell, line: str) -> subprocess.CompletedProcess[str]:
    """The page's send, once the web tier answers (it starts in the background)."""
    result: list[subprocess.CompletedProcess[str]] = []

    def sent() -> bool:
        result[:] = [shell.run(line)]
        return result[0].returncode == 0

    until(sent, 40, step=0.5)
    return result[0]


@pytest.fixture()
def rabbit_shell(tmp_path: Path) -> Iterator[_Shell]:
    need_broker()
    shell = _Shell(tmp_path, RABBITMQ)
    try:
        yield shell
    finally:
        shell.stop()
        _delete_queue(RABBITMQ, shell.queue)


def test_the_two_commands_on_rabbitmq(rabbit_shell: _Shell) -> None:
    pip, worker, web, send = _block("a2a send")
    _check_pip(pip)
    rabbit_shell.serve(worker, "worker")
    rabbit_shell.serve(web, "web")
    result = _send_until_served(rabbit_shell, send)
    assert result.returncode == 0, (result.stderr, rabbit_shell.logs())
    assert "chunk 2" in result.stdout and "completed" in result.stdout, result.stdout


@pytest.mark.slow  # a second broker and both tiers again (the RabbitMQ one stays fast)
def test_the_redis_commands(tmp_path: Path) -> None:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed")
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shell = _Shell(tmp_path, "unused")
    try:
        worker, web = (line.replace("127.0.0.1:6379", f"127.0.0.1:{port}")
                       for line in _block("redis://"))
        assert shlex.split(worker)[0].startswith("A2A_CELERY_BROKER=redis://")
        shell.serve(worker, "worker")
        shell.serve(web, "web")
        result = _send_until_served(shell, '.venv/bin/a2a send http://127.0.0.1:8000/ "hi"')
        assert result.returncode == 0, (result.stderr, shell.logs())
        assert "hi" in result.stdout
    finally:
        shell.stop()
        redis.terminate()
        redis.wait(timeout=10)


def test_deployment_page_shows_the_same_two_commands() -> None:
    # docs/deployment.md repeats the two tiers' commands that the test above runs
    deployment = (ROOT / "docs" / "deployment.md").read_text()
    blocks = [b for b in re.findall(r"^```sh\n(.*?)^```", deployment, re.S | re.M)
              if "celery -A" in b]
    assert len(blocks) == 1
    shown = [line.strip() for line in blocks[0].splitlines() if line.strip()]
    _, worker, web, _ = _block("a2a send")
    assert shown == [worker, web]
