"""``a2a serve`` that cannot start says why in one line, once, with an exit code of its own;
stopping it with tasks running says what it waits for, and a second Ctrl-C stops at once.

Every case runs the real ``a2a`` command of this venv (gevent worker, several workers, a
free loopback port), as docs/deployment.md ("Starting and stopping `a2a serve`") shows it.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import requests
from support.gunicorn import ROOT, free_port, gunicorn_argv, stop_group

from a2a_core.models import TaskState
from a2a_wsgi._serve_checks import (
    EXIT_ADDRESS,
    EXIT_APP,
    EXIT_CODES,
    EXIT_EXTRA,
    EXIT_MODULE,
    EXIT_STOPPED,
    EXIT_STORE,
)
from a2a_wsgi.stores import open_store

A2A = Path(sys.executable).parent / "a2a"
DOC = ROOT / "docs" / "deployment.md"
SECTION = "## Starting and stopping `a2a serve`"


def _serve(argv: list[str], env: Mapping[str, str] | None = None,
           cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``a2a serve ARGV`` to its end: it must not start, so it must end by itself."""
    proc = subprocess.Popen([str(A2A), "serve", *argv], cwd=cwd, env={**os.environ, **(env or {})},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        stop_group(proc)  # had it started after all: gunicorn and its workers
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture
def no_psycopg(tmp_path: Path) -> Path:
    """A folder that, first on PYTHONPATH, makes ``import psycopg`` fail as if not installed."""
    package = tmp_path / "no-psycopg" / "psycopg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'psycopg'\", name='psycopg')\n")
    return package.parent


@pytest.fixture
def held_port() -> Iterator[int]:
    """A loopback port another process (this test) listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


def _pythonpath(*folders: Path) -> str:
    return os.pathsep.join(str(folder) for folder in (*folders, ROOT))


# -- start-up failures -------------------------------------------------------------------


def test_a_mistyped_module_is_one_line() -> None:
    done = _serve(["nosuch:app", "--bind", f"127.0.0.1:{free_port()}", "--workers", "3"])
    assert (done.stderr, done.returncode) == (
        "a2a serve: no module named 'nosuch' (from nosuch:app; run from the folder that holds "
        "it, or put that folder on PYTHONPATH)\n", EXIT_MODULE)


def test_a_mistyped_object_is_one_line_naming_the_apps_there() -> None:
    done = _serve(["examples.echo:nosuch", "--bind", f"127.0.0.1:{free_port()}",
                   "--workers", "3"])
    assert (done.stderr, done.returncode) == (
        "a2a serve: module 'examples.echo' has no attribute 'nosuch' (the module's apps: app)\n",
        EXIT_APP)


def test_an_agent_class_is_not_an_app() -> None:
    done = _serve(["examples.echo:EchoAgent", "--bind", f"127.0.0.1:{free_port()}"])
    assert (done.stderr, done.returncode) == (
        "a2a serve: examples.echo:EchoAgent is an Agent class, not a WSGI app: serve "
        "A2AApp(EchoAgent()); the module's apps: app\n", EXIT_APP)


@pytest.mark.parametrize("folder", ["", "gunicorn-project"])
def test_a_module_that_raises_names_the_error_and_its_line(tmp_path: Path, folder: str) -> None:
    # (a folder whose name says gunicorn is the user's: its frames are the app's, not
    # gunicorn's; CI's temporary folder once was one)
    home = tmp_path / folder
    home.mkdir(exist_ok=True)
    (home / "broken_agent.py").write_text("import os\n\nraise RuntimeError('no API key')\n")
    done = _serve(["broken_agent:app", "--bind", f"127.0.0.1:{free_port()}", "--workers", "2"],
                  cwd=home, env={"PYTHONPATH": _pythonpath()})
    assert (done.stderr, done.returncode) == (
        "a2a serve: importing broken_agent failed: RuntimeError: no API key "
        f"({home / 'broken_agent.py'}, line 3)\n", EXIT_MODULE)


def test_a_busy_port_is_one_line_at_once(held_port: int) -> None:
    started = time.monotonic()
    done = _serve(["examples.echo:app", "--bind", f"127.0.0.1:{held_port}", "--workers", "3"])
    assert (done.stderr, done.returncode) == (
        f"a2a serve: cannot listen on 127.0.0.1:{held_port}: another process is listening "
        "there; stop it or choose another port with --bind\n", EXIT_ADDRESS)
    assert time.monotonic() - started < 5  # gunicorn alone retries for 5 s


def test_a_postgres_store_without_the_extra_says_what_to_install(no_psycopg: Path) -> None:
    done = _serve(["examples.echo:app", "--bind", f"127.0.0.1:{free_port()}", "--workers", "3"],
                  env={"A2A_STORE": "postgresql://agent@127.0.0.1/agents",
                       "PYTHONPATH": _pythonpath(no_psycopg)})
    assert (done.stderr, done.returncode) == (
        "a2a serve: the PostgreSQL task store needs the 'postgres' extra, which is not "
        "installed here (No module named 'psycopg'): pip install 'a2a-wsgi[postgres]'\n",
        EXIT_EXTRA)


def test_an_unknown_store_scheme_is_one_line_without_the_password() -> None:
    done = _serve(["examples.echo:app", "--bind", f"127.0.0.1:{free_port()}", "--workers", "2"],
                  env={"A2A_STORE": "postgress://agent:s3cret@db.internal/agents"})
    assert (done.stderr, done.returncode) == (
        "a2a serve: cannot open the task store A2A_STORE=postgress://agent:***@db.internal/"
        "agents: unknown task store scheme 'postgress' in "
        "'postgress://agent:***@db.internal/agents'\n", EXIT_STORE)


def test_a_memory_store_for_several_workers_is_refused_once() -> None:
    done = _serve(["examples.echo:app", "--bind", f"127.0.0.1:{free_port()}", "--workers", "3"],
                  env={"A2A_STORE": "memory"})
    assert done.returncode == EXIT_STORE
    assert done.stderr.startswith("a2a serve: This server runs several worker processes, and "
                                  "the app's task store is in memory")
    assert done.stderr.count("\n") == 1


@pytest.mark.postgres
def test_a_database_that_refuses_is_one_line() -> None:
    port = free_port()  # nothing listens there
    done = _serve(["examples.echo:app", "--bind", f"127.0.0.1:{free_port()}", "--workers", "2"],
                  env={"A2A_STORE": f"postgresql://agent:s3cret@127.0.0.1:{port}/test"})
    assert done.returncode == EXIT_STORE
    assert done.stderr.startswith(f"a2a serve: cannot open the task store A2A_STORE="
                                  f"postgresql://agent:***@127.0.0.1:{port}/test: connection "
                                  "failed: ")
    assert done.stderr.count("\n") == 1 and "s3cret" not in done.stderr


@pytest.mark.slow
def test_an_import_that_does_not_end_is_given_up_after_the_timeout(tmp_path: Path) -> None:
    (tmp_path / "stuck_agent.py").write_text("import time\n\ntime.sleep(600)\n")
    done = _serve(["stuck_agent:app", "--bind", f"127.0.0.1:{free_port()}", "--timeout", "2"],
                  cwd=tmp_path, env={"PYTHONPATH": _pythonpath()})
    assert (done.stderr, done.returncode) == (
        "a2a serve: importing stuck_agent:app and opening its task stores did not finish "
        "within 2 s (--timeout)\n", EXIT_MODULE)


@pytest.mark.slow
def test_ctrl_c_during_the_checks_stops_quietly(tmp_path: Path) -> None:
    marker = tmp_path / "importing"
    (tmp_path / "stuck_agent.py").write_text(
        f"import pathlib, time\n\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(600)\n")
    proc = subprocess.Popen([str(A2A), "serve", "stuck_agent:app", "--bind",
                             f"127.0.0.1:{free_port()}"], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": _pythonpath()},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():  # until the check imports the module (it never ends)
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        stop_group(proc)
    assert (err, proc.returncode) == ("", EXIT_STOPPED)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 8])
def test_plain_gunicorn_workers_name_the_missing_extra_without_a_traceback(
        no_psycopg: Path, tmp_path: Path, workers: int) -> None:
    """Without ``a2a serve``'s check, each worker still says it in one line (the hook).
    With 8 workers several fail while the master stops the others: gunicorn's second
    HaltServer was a traceback and exit 1 every time (the config's ``on_starting``)."""
    argv = gunicorn_argv("examples.echo:app", port=free_port(), workers=workers)
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL,
                          env={**os.environ, "A2A_STORE": "postgresql://agent@127.0.0.1/agents",
                               "PYTHONPATH": _pythonpath(no_psycopg)})
    line = ("a2a: the PostgreSQL task store needs the 'postgres' extra, which is not installed "
            "here (No module named 'psycopg'): pip install 'a2a-wsgi[postgres]'")
    assert done.returncode == 4  # gunicorn's "app failed to load"
    assert line in done.stderr.splitlines()
    assert "Traceback" not in done.stderr


# -- the page ----------------------------------------------------------------------------


def _section() -> str:
    text = DOC.read_text()
    start = text.index(SECTION)
    return text[start:text.index("\n## ", start + 1)]


def test_the_page_lists_every_exit_code() -> None:
    rows = re.findall(r"^\| (\d+) \|", _section(), flags=re.MULTILINE)
    assert sorted(int(code) for code in rows) == sorted(EXIT_CODES)


@pytest.mark.slow
def test_the_page_shows_what_the_commands_print(tmp_path: Path, no_psycopg: Path) -> None:
    """Each ``$ a2a serve …`` line of the page, run in bash as written (a free port for
    9000, held by this test where the page says it is taken), prints the line under it."""
    block = _section().split("```\n")[1]
    lines = block.splitlines()
    cases = [(lines[i][2:], lines[i + 1]) for i in range(len(lines)) if lines[i].startswith("$ ")]
    assert len(cases) == 4
    for command, printed in cases:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            if "taken" in command:
                sock.listen(1)
            else:
                sock.close()
            done = subprocess.run(
                ["bash", "-c", command.replace("9000", str(port))], cwd=ROOT,
                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                env={**os.environ, "PATH": f"{A2A.parent}{os.pathsep}{os.defpath}",
                     "PYTHONPATH": _pythonpath(no_psycopg)})
        assert done.stderr == printed.replace("9000", str(port)) + "\n", command
        assert done.returncode in (EXIT_MODULE, EXIT_APP, EXIT_ADDRESS, EXIT_EXTRA)


# -- stopping ----------------------------------------------------------------------------

SLOW_AGENT = """\
import time

from a2a_wsgi import A2AApp, Agent, reply


class SlowAgent(Agent):
    name = "Slow Agent"

    def handle_message(self, message, context):
        time.sleep(float(message.text))
        return reply("slept " + message.text)


app = A2AApp(SlowAgent())
"""


class _Server:
    """``a2a serve slow_agent:app`` on a SQLite file, as a user runs it in a terminal."""

    def __init__(self, tmp_path: Path, *, graceful_timeout: int) -> None:
        (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
        self.db = tmp_path / "tasks.sqlite3"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.err_path = tmp_path / "serve.err"
        self._err = self.err_path.open("wb")
        argv = [str(A2A), "serve", "slow_agent:app", "--bind", f"127.0.0.1:{self.port}",
                "--workers", "2", "--graceful-timeout", str(graceful_timeout),
                "--log-level", "warning"]
        self.proc = subprocess.Popen(argv, cwd=tmp_path, start_new_session=True,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self._err,
                                     env={**os.environ, "PYTHONPATH": _pythonpath(),
                                          "A2A_STORE": f"sqlite:///{self.db}"})

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None and time.monotonic() < deadline, self.stderr()
            try:
                requests.get(self.url + ".well-known/agent-card.json", timeout=5)
                return
            except requests.RequestException:
                time.sleep(0.1)

    def start_task(self, seconds: float, message_id: str) -> str:
        """A non-blocking send: the task is stored and queued for its agent before the answer."""
        answer = requests.post(self.url, headers={"A2A-Version": "1.0"}, timeout=10, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": message_id, "role": "ROLE_USER",
                            "parts": [{"text": str(seconds)}]},
                "configuration": {"returnImmediately": True}}}).json()
        return str(answer["result"]["task"]["id"])

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def wait_for_line(self, line: str, within: float = 10) -> None:
        deadline = time.monotonic() + within
        while line not in self.stderr().splitlines():
            assert time.monotonic() < deadline, self.stderr()
            time.sleep(0.05)

    def close(self) -> None:
        stop_group(self.proc)
        self._err.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[_Server]:
    started = _Server(tmp_path, graceful_timeout=20)
    try:
        started.wait_ready()
        yield started
    finally:
        started.close()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_stopping_waits_for_the_running_tasks_and_says_so(server: _Server, how: str) -> None:
    tasks = [server.start_task(3, f"m{n}") for n in range(2)]
    if how == "ctrl-c":  # a terminal signals the whole process group
        os.killpg(server.proc.pid, signal.SIGINT)
        again = "Ctrl-C again to stop now"
    else:  # a service manager signals the master
        server.proc.send_signal(signal.SIGTERM)
        again = "Ctrl-C (SIGINT) to stop now"
    assert server.proc.wait(timeout=30) == 0
    assert server.stderr() == f"a2a serve: waiting up to 20 s for 2 running tasks; {again}\n"
    store = open_store(f"sqlite:///{server.db}")
    try:  # the tasks were let finish, not cut
        found = [store.get(task_id) for task_id in tasks]
        states = {task.status.state if task is not None else None for task in found}
    finally:
        store.close()
    assert states == {TaskState.COMPLETED}


@pytest.mark.slow
def test_stopping_with_nothing_running_says_nothing(server: _Server) -> None:
    os.killpg(server.proc.pid, signal.SIGINT)
    assert server.proc.wait(timeout=30) == 0
    assert server.stderr() == ""


@pytest.mark.slow
def test_a_second_ctrl_c_stops_at_once(server: _Server) -> None:
    server.start_task(60, "long")
    os.killpg(server.proc.pid, signal.SIGINT)
    server.wait_for_line("a2a serve: waiting up to 20 s for 1 running task; "
                         "Ctrl-C again to stop now")
    stopped_at = time.monotonic()
    os.killpg(server.proc.pid, signal.SIGINT)
    assert server.proc.wait(timeout=20) == EXIT_STOPPED
    assert time.monotonic() - stopped_at < 5
    assert server.stderr() == ("a2a serve: waiting up to 20 s for 1 running task; Ctrl-C again "
                               "to stop now\n"
                               "a2a serve: stopped without waiting for the running tasks\n")
    # The workers went with it: nothing listens on the port any more.
    deadline = time.monotonic() + 5
    while True:
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
        except OSError:
            break
        assert time.monotonic() < deadline, "a worker still listens"
        time.sleep(0.1)

