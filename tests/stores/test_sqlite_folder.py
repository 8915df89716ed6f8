"""``A2A_DB`` in a folder that does not exist yet: the folder is made, or one line says why not.

The deployment page writes ``A2A_DB=/var/lib/my-agent/tasks.sqlite3 a2a serve …``; on a
fresh machine that folder is missing. Here the same command runs with the path moved under
a temporary folder, and once with a path that no user can create (below a regular file).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from support.gunicorn import ROOT, ServerProcess, free_port, stop_group

from a2a_wsgi._serve_checks import EXIT_STORE
from a2a_wsgi.stores import SQLiteTaskStore, StoreOpenError, open_store

A2A = Path(sys.executable).parent / "a2a"


def test_the_store_creates_the_missing_folders(tmp_path: Path) -> None:
    path = tmp_path / "var" / "lib" / "my-agent" / "tasks.sqlite3"
    store = SQLiteTaskStore(path)
    try:
        assert path.is_file() and store.schema_version() >= 1
    finally:
        store.close()


def test_a_folder_that_cannot_be_made_is_one_line_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    path = blocker / "my-agent" / "tasks.sqlite3"
    with pytest.raises(StoreOpenError) as info:
        open_store(f"sqlite:///{path}")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"cannot create the folder {path.parent} for the SQLite file "
                              f"{path}: Not a directory")
    assert "A2A_DB" in message


def test_a_folder_that_cannot_be_written_is_one_line_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("this user (root) may write to a read-only folder")
        with pytest.raises(StoreOpenError) as info:
            SQLiteTaskStore(folder / "tasks.sqlite3")
        assert str(info.value).startswith(f"cannot open the SQLite file {folder}/tasks.sqlite3")
    finally:
        folder.chmod(0o700)


def _serve_argv(port: int) -> list[str]:
    """docs/deployment.md's command, ``a2a`` by its venv path and on a free loopback port."""
    return [str(A2A), "serve", "my_agent:app", "--workers", "4", "--bind", f"127.0.0.1:{port}"]


def _env(tmp_path: Path, db: Path) -> dict[str, str]:
    # my_agent is the echo example under the docs' module name; HOME is a temporary folder.
    (tmp_path / "my_agent.py").write_text("from examples.echo import app  # noqa: F401\n")
    return {"A2A_DB": str(db), "HOME": str(tmp_path),
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}


@pytest.mark.slow
def test_a2a_serve_creates_the_folder_and_serves(tmp_path: Path) -> None:
    db = tmp_path / "var" / "lib" / "my-agent" / "tasks.sqlite3"
    port = free_port()
    with ServerProcess(_serve_argv(port), port=port, log_path=tmp_path / "serve.log",
                       env=_env(tmp_path, db)) as server:
        server.wait_ready()
        sent = requests.post(server.url, headers={"A2A-Version": "1.0"}, timeout=10, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
        assert sent.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert db.is_file()


@pytest.mark.slow
def test_a2a_serve_with_an_impossible_folder_says_so_in_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    db = blocker / "my-agent" / "tasks.sqlite3"
    proc = subprocess.Popen(_serve_argv(free_port()), cwd=ROOT, env={**os.environ,
                            **_env(tmp_path, db)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = proc.communicate(timeout=60)[1].decode(errors="replace")
    finally:
        stop_group(proc)  # gunicorn and any worker left, SIGKILL after a grace period
    assert proc.returncode == EXIT_STORE
    # Said once, before gunicorn starts: not once per worker among gunicorn's lines.
    assert err == (f"a2a serve: cannot create the folder {db.parent} for the SQLite file {db}: "
                   "Not a directory (create it, or set A2A_DB to a path this user can write)\n")
