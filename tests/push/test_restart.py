"""A server killed mid-backlog: the next process delivers what is left, in order (SQLite)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from push_receiver import Receiver, receiver_fixture  # noqa: F401
from support.a2a_http import Peer, user_message

from a2a_core import wire
from a2a_wsgi.stores import SQLiteTaskStore

SERVER = textwrap.dedent("""
    import sys, threading
    from a2a_core.models import TaskState
    from a2a_wsgi import A2AApp, Agent, reply, serve
    from a2a_wsgi.push import PushSettings, UrlPolicy

    def stepping(msg, ctx):
        ctx.emit_status(TaskState.WORKING, "step 1")
        ctx.emit_artifact("partial", name="out")
        ctx.emit_status(TaskState.WORKING, "step 2")
        return reply("done")

    settings = PushSettings(policy=UrlPolicy.allowing_loopback(), poll_interval=0.05,
                            backoff_base=0.05, backoff_cap=0.2, attempt_timeout=1.0,
                            max_attempts=10_000)
    app = A2AApp(Agent.from_function(stepping, name="Pusher"), store="sqlite:///" + sys.argv[1],
                 push=settings)
    handle = serve(app)
    print(handle.url, flush=True)
    threading.Event().wait()
""")


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[[], tuple[subprocess.Popen[str], str]]]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    procs: list[subprocess.Popen[str]] = []

    def start() -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "tasks.db")],
                                stdout=subprocess.PIPE, text=True, start_new_session=True)
        procs.append(proc)
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http"), "the server did not start"
        return proc, url

    yield start
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.slow
def test_a_restart_mid_backlog_still_delivers_everything_in_order(
        spawn: Callable[[], tuple[subprocess.Popen[str], str]], receiver: Receiver,
        tmp_path: Path) -> None:
    receiver.script["/r"] = [503]  # the receiver is down
    first, url = spawn()
    answer = Peer(url, "1.0").rpc("send", {
        "message": user_message("go", "1.0"),
        "configuration": {"taskPushNotificationConfig": {"url": receiver.url + "/r"}}})
    task_id = answer["result"]["task"]["id"]
    assert receiver.wait_for(lambda: len(receiver.hits("/r")) >= 2)  # retrying the head
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(10)

    store = SQLiteTaskStore(tmp_path / "tasks.db")
    try:
        expected = [wire.encode_stream_event(e, "1.0") for _, e in store.events_after(task_id, 0)]
        assert store.pending_deliveries(task_id) == len(expected) >= 4  # nothing lost
        failed = len(receiver.hits("/r"))
        receiver.script["/r"] = [200]  # the receiver is back; so is the server
        spawn()
        assert receiver.wait_for(lambda: store.pending_deliveries(task_id) == 0, timeout=15)
    finally:
        store.close()
    delivered: dict[str, dict[str, object]] = {}
    for hit in receiver.hits("/r")[failed:]:
        delivered.setdefault(hit.headers["Idempotency-Key"], json.loads(hit.body))
    assert list(delivered.values()) == expected
