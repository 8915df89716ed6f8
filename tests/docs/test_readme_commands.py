"""README.md's shell lines that tests/test_readme.py does not run: set-up and ``a2a serve``.

The server and client blocks and the ``a2a card``/``a2a send`` lines run in
tests/test_readme.py. Here: the set-up line on a fresh copy of the checkout (its own venv,
made by the system's ``python3``), the test command's steps as CI runs them, and the two
``a2a serve`` lines serving the README's own server block (saved as ``mymodule.py``), with
``postgresql://db/agents`` standing for the test database (a schema of its own).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
import requests
from doc_pages import block
from doc_shell import ROOT, Shell, commands
from psycopg import sql
from support.gunicorn import free_port, stop_group
from support.postgres import schema_url, temporary_schema

from a2a_client import A2AClient
from a2a_core.models import Task, TaskState

pytestmark = pytest.mark.slow

#: What a fresh clone holds besides the tracked files: left out of the copy.
_NOT_IN_A_CLONE = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build",
                                         "dist", ".*_cache", "*.sqlite3*", "*.pem")


def _says_hello(url: str) -> None:
    with A2AClient(url) as client:
        task = client.send_message("hello")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert task.artifacts[0].parts[0].text == "hello"


def test_set_up_line_serves_the_echo_agent_from_a_fresh_copy(tmp_path: Path) -> None:
    (line,) = commands("README.md", "examples/echo.py")
    clone = tmp_path / "a2a-wsgi"
    shutil.copytree(ROOT, clone, ignore=_NOT_IN_A_CLONE)
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    log = tmp_path / "setup.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(["/bin/bash", "-c", line.replace("127.0.0.1:8000",
                                                                 f"127.0.0.1:{port}")],
                                cwd=clone, env={"PATH": os.defpath, "HOME": str(home),
                                                "LANG": "C.UTF-8"},
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 400  # the venv and its install come first
        url = f"http://127.0.0.1:{port}/"
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            try:
                requests.get(url + ".well-known/agent-card.json", timeout=10)
                break
            except requests.RequestException:
                time.sleep(0.5)
        _says_hello(url)
        assert (clone / ".venv" / "bin" / "a2a").exists()
    finally:
        stop_group(proc)


def test_test_command_is_what_ci_runs() -> None:
    """The suite's own line: CI (.ci/run) runs each of its steps from a clean clone."""
    (line,) = commands("README.md", ".venv/bin/python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text()
    steps = [step.strip() for step in line.split("&&")]
    assert steps[:2] == ["python3 -m venv .venv", ".venv/bin/pip install -q -e '.[test]'"]
    for step in steps:
        assert step in ci, f".ci/run does not run {step!r}"


@pytest.mark.postgres
@pytest.mark.parametrize("index", [0, 1], ids=["sqlite", "postgresql"])
def test_a2a_serve_lines_serve_the_readme_server(shell: Shell, index: int) -> None:
    line = commands("README.md", "a2a serve mymodule:app")[index]
    (shell.cwd / "mymodule.py").write_text(
        block("README.md", "A server in ten lines", containing="class Echo").text)
    with temporary_schema() as schema:
        shell.start(line.replace("postgresql://db/agents", schema_url(schema)),
                    "http://127.0.0.1:8000/.well-known/agent-card.json")
        _says_hello(shell.url("http://127.0.0.1:8000/"))
        if index == 0:
            assert (shell.cwd / "a2a-tasks.sqlite3").exists()  # "SQLite file by default"
        else:
            with psycopg.connect(schema_url(schema).partition("?")[0]) as conn:
                count = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
                    sql.Identifier(schema, "a2a_tasks"))).fetchone()
            assert count == (1,)
        shell.stop()

