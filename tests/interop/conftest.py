"""Interop with the official Python SDK (``a2a-sdk`` from PyPI), over real sockets.

* ``sdk_url``: an SDK agent (``sdk_server.py``) under uvicorn in a subprocess of
  its own process group, killed at the end of the session.
* ``serve_ours``: our ``A2AApp`` on werkzeug's threaded server (``a2a_wsgi.serve``).

The SDK is in the ``test`` extra; without it these tests skip locally and fail in CI.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from interop_support import require_sdk

from a2a_wsgi import A2AApp, ServerHandle, serve

HERE = Path(__file__).resolve().parent
START_TIMEOUT = 20.0


@pytest.fixture(autouse=True)
def _quiet_werkzeug() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


@pytest.fixture(scope="session")
def sdk_url() -> Iterator[str]:
    """Base URL (no trailing slash) of the SDK agent; its process group dies at teardown."""
    require_sdk()
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "sdk_server.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=str(HERE),
    )
    try:
        yield f"http://127.0.0.1:{_wait_listening(proc)}"
    finally:
        _kill_group(proc)


def _wait_listening(proc: subprocess.Popen[str]) -> int:
    """The port from the child's ``LISTENING <port>`` line (printed once it listens)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
    line = proc.stdout.readline() if ready else ""  # one flushed line, or EOF if it died
    if not line.startswith("LISTENING "):
        _kill_group(proc)
        errors = proc.stderr.read() if proc.stderr else ""
        raise RuntimeError(f"SDK server did not start: {line!r}\n{errors}")
    return int(line.split()[1])


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM the whole group, SIGKILL it if it lingers, and reap the child."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture(scope="module")
def serve_ours() -> Iterator[Callable[..., ServerHandle]]:
    """serve_ours(agent, protocol=...) -> ServerHandle; servers and apps close at teardown."""
    started: list[tuple[ServerHandle, A2AApp]] = []

    def start(agent: Any, **options: Any) -> ServerHandle:
        app = A2AApp(agent, **options)  # base_url None: serve() advertises where it listens
        handle = serve(app, "127.0.0.1:0")
        started.append((handle, app))
        return handle

    yield start
    for handle, app in started:
        handle.stop()
        app.close()
