"""A stream resumes across a server restart, even when the first reconnect is refused.

docs/deployment.md ("Graceful restarts"): on a restart every open stream ends and the client
reconnects with ``Last-Event-ID``, which ``a2a_client`` does. docs/client.md: at most
``max_reconnects`` reconnects in a row may bring nothing, then the last error is raised. A
restart leaves a moment in which the port refuses connections; a reconnect refused then is
one of those reconnects, not the end of the stream.

Two real servers (``serve()``, werkzeug over loopback) share one SQLite store and one port:
the first is stopped while a client is subscribed, the second starts on the same port a
moment later, and the task is then canceled through it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from support.gunicorn import free_port

from a2a_client import A2AClient
from a2a_core.models import Message, Task, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, serve, working
from a2a_wsgi.settings import StreamSettings


class Ticking(Agent):
    """WORKING, with a status update every 0.1 s, until the task is canceled or the test ends.

    The first server's run never sees the cancel: it is made through the second server, and
    a closed app's lease keeper no longer watches the store. Its agent thread is one of the
    runtime pool's, which the interpreter joins at exit, so the test ends it itself.
    """

    name = "Ticking"

    def __init__(self, ended: threading.Event) -> None:
        self.ended = ended

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        context.emit_status(TaskState.WORKING, "started")
        while not context.cancelled.wait(0.1) and not self.ended.is_set():
            context.emit_status(TaskState.WORKING, "tick")
        return working()


def _app(store: str, ended: threading.Event) -> A2AApp:
    return A2AApp(Ticking(ended), store=store, streams=StreamSettings(heartbeat_interval=0.5))


def _state(event: Any) -> TaskState | None:
    status = getattr(event, "status", None)
    return status.state if status is not None else None


def test_a_stream_survives_a_restart_whose_first_reconnect_is_refused(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'tasks.sqlite3'}"
    port = free_port()
    ended = threading.Event()
    first_app = _app(store, ended)
    first = serve(first_app, f"127.0.0.1:{port}")
    second_app: A2AApp | None = None
    second: Any = None
    restarted = threading.Event()
    try:
        with A2AClient(first.url, reconnect_delay=0.3, max_reconnects=5) as client:
            task = client.send_message("go", blocking=False)
            assert isinstance(task, Task)
            stream = client.subscribe(task.id)
            seen = [next(stream), next(stream)]  # the snapshot and a first update

            def restart() -> None:
                nonlocal second_app, second
                first.stop()          # the port now refuses connections
                first_app.close()     # and its open streams end
                time.sleep(1.0)       # the reconnect at 0.3 s is refused
                second_app = _app(store, ended)
                second = serve(second_app, f"127.0.0.1:{port}")
                restarted.set()
                time.sleep(0.5)
                with A2AClient(second.url) as other:
                    other.cancel_task(task.id)

            threading.Thread(target=restart, daemon=True).start()
            seen += list(stream)  # raised ConnectError at the refused reconnect before
            assert restarted.is_set()
            assert _state(seen[-1]) is TaskState.CANCELED, seen[-1]
            assert stream.reconnects >= 2  # one refused, one that got through
            assert stream.last_event_id is not None  # it resumed from an SSE id
    finally:
        ended.set()
        if second is not None:
            second.stop()
        first.stop()
        for app in (second_app, first_app):
            if app is not None:
                _close(app)


def _close(app: A2AApp) -> None:
    """Stop the app and, once its agents and lease keeper have ended, close its store:
    A2AApp.close() leaves a store open, and Python 3.13 warns of a SQLite connection
    collected open (an error in this suite, raised in whichever test the collector ran)."""
    app.close()
    app.runtime.close(wait=True)
    app.runtime.store.close()
