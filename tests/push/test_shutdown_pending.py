"""A process exiting (gunicorn's SIGTERM: sys.exit) with push deliveries pending and one
in flight: one log line, no traceback per poll, and the unsent entries stay queued."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from push_receiver import Receiver, receiver_fixture  # noqa: F401
from support.a2a_http import Peer, user_message

from a2a_wsgi.stores import SQLiteTaskStore

SERVER = textwrap.dedent("""
    import signal, sys, threading
    from a2a_wsgi import A2AApp, Agent, reply, serve
    from a2a_wsgi.push import PushSettings, UrlPolicy

    settings = PushSettings(policy=UrlPolicy.allowing_loopback(), poll_interval=0.05,
                            attempt_timeout=2.0, concurrency=4, max_attempts=10_000)
    app = A2AApp(Agent.from_function(lambda msg, ctx: reply("done"), name="Pusher"),
                 store="sqlite:///" + sys.argv[1], push=settings)
    handle = serve(app)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # as a gunicorn worker ends
    print(handle.url, flush=True)
    threading.Event().wait()
""")
TASKS = 6


@pytest.mark.slow
def test_exiting_with_pending_deliveries_logs_one_line_and_keeps_them_queued(
        receiver: Receiver, tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    receiver.script["/slow"] = ["hang"]  # one delivery stays in flight until its budget ends
    receiver.script["/down"] = [503]
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "tasks.db")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http"), "the server did not start"
        peer = Peer(url, "1.0")
        ids = []
        for n in range(TASKS):
            path = "/slow" if n == 0 else "/down"
            answer = peer.rpc("send", {
                "message": user_message(f"go {n}", "1.0"),
                "configuration": {"taskPushNotificationConfig": {"url": receiver.url + path}}})
            ids.append(answer["result"]["task"]["id"])
        assert receiver.wait_for(lambda: len(receiver.hits("/slow")) >= 1
                                 and len(receiver.hits("/down")) >= TASKS - 1)
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=10)
    assert "Traceback" not in err, err
    assert "cannot schedule new futures" not in err, err
    assert err.count("stay queued for the next worker") <= 1, err
    store = SQLiteTaskStore(tmp_path / "tasks.db")
    try:
        assert all(store.pending_deliveries(task_id) >= 1 for task_id in ids)
    finally:
        store.close()
