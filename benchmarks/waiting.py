"""How fast the client learns that a task settled, per waiting path (issue 23).

    .venv/bin/python benchmarks/waiting.py

Two measurements:

* ``a2a send URL hi`` against ``a2a send URL hi --wait`` on examples/echo.py (an agent
  that answers at once), 5 runs each, the median wall time of the whole command;
* against an agent that completes 2 s after the send: how long after the completion
  ``send_and_wait()`` returns, and how many A2A requests it sent, over each path the
  client can take (long-poll when the agent serves generations, a SubscribeToTask
  stream when the card streams, polling otherwise).

Every process started here runs in its own session and is killed by process group.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server

from a2a_client import A2AClient
from a2a_core.models import Message, Task, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.settings import CardSettings, ProtocolSettings

ROOT = Path(__file__).resolve().parents[1]
A2A = str(Path(sys.executable).with_name("a2a"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _echo(preview: bool) -> Iterator[str]:
    """examples/echo.py in a subprocess of its own session; its URL."""
    port = _free_port()
    env = {**os.environ, "A2A_PREVIEW_GENERATIONS": "1" if preview else "0"}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "echo.py"), f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _cli_seconds(*argv: str) -> float:
    started = time.monotonic()
    subprocess.run([A2A, *argv], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.monotonic() - started


def cli_overhead(runs: int = 5) -> None:
    for preview in (False, True):
        with _echo(preview) as url:
            _cli_seconds("send", url, "warm up")
            plain: list[float] = []
            waited: list[float] = []
            for _ in range(runs):  # interleaved, so noise from elsewhere lands on both
                plain.append(_cli_seconds("send", url, "hi"))
                waited.append(_cli_seconds("send", url, "hi", "--wait"))
        p, w = statistics.median(plain), statistics.median(waited)
        print(f"echo (preview {'on' if preview else 'off'}): a2a send {p:.3f} s, "
              f"--wait {w:.3f} s, difference {w - p:+.3f} s (median of {runs})")


class _Counting:
    """Counts A2A requests (the card excluded) in front of a WSGI app."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.calls: list[str] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "/")
        if environ["REQUEST_METHOD"] == "POST" and path == "/":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            self.calls.append(str(json.loads(body).get("method")))
        elif "agent-card" not in path:
            self.calls.append(path)
        return self.app(environ, start_response)


def two_second_task(path: str) -> tuple[float, int]:
    """(seconds from completion to send_and_wait's return, A2A requests) over one path."""
    finished: list[float] = []

    def handle(message: Message, ctx: AgentContext) -> Any:
        ctx.emit_status(TaskState.WORKING, "working")
        time.sleep(2.0)
        finished.append(time.monotonic())
        return reply("done")

    app = A2AApp(
        Agent.from_function(handle, name="Two seconds"),
        card=CardSettings(overrides={"capabilities": {"streaming": path == "stream"}}),
        protocol=ProtocolSettings(preview_generations=path == "long-poll"),
    )
    counting = _Counting(app)
    server = make_server("127.0.0.1", 0, counting, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        with A2AClient(f"http://127.0.0.1:{server.socket.getsockname()[1]}") as client:
            client.get_card()
            result = client.send_and_wait("go")
            returned = time.monotonic()
        assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
        return returned - finished[0], len(counting.calls)
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
        app.close()


def main() -> None:
    cli_overhead()
    for path in ("long-poll", "stream", "polling"):
        late, requests = two_second_task(path)
        print(f"2 s task, {path:9}: returned {late * 1000:.0f} ms after completion, "
              f"{requests} A2A requests")


if __name__ == "__main__":
    main()
