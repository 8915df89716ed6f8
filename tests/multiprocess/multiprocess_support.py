"""What the multiprocess tests share: the agent their gunicorn workers run, and peers.

Imported both by pytest and by the gunicorn workers (the test modules are the apps).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from support.a2a_http import Peer, state_of
from support.gunicorn import READY_PATH, ROOT

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi.settings import ProtocolSettings, RuntimeSettings, StreamSettings

__all__ = [
    "APP_PATH",
    "LEASE_SECONDS",
    "PINNED_KEEPALIVE",
    "MultiprocessAgent",
    "fresh_peer",
    "get",
    "peers_by_worker",
    "worker_of",
    "send",
    "tagged_app",
    "wait_state",
]

#: Short leases, so a killed worker's task is failed within seconds.
LEASE_SECONDS = 1.5
#: What the workers need on PYTHONPATH: the test modules (they are the apps) and support.
APP_PATH = (ROOT / "tests" / "multiprocess", ROOT / "tests")


class MultiprocessAgent(Agent):
    """``chunks:N`` streams N artifact chunks; ``hang`` runs until canceled;
    ``sleep:S`` replies after S seconds; anything else is echoed."""

    name = "Multiprocess Test Agent"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        kind, _, arg = (message.text or "").partition(":")
        if kind == "chunks":
            count = int(arg)
            for n in range(count):
                if context.is_cancelled():
                    return None
                context.emit_artifact(f"chunk {n}", artifact_id=f"art-{context.task_id}",
                                      append=n > 0, last_chunk=n == count - 1)
                time.sleep(0.05)
            return None
        if kind == "hang":
            deadline = time.monotonic() + 60
            while not context.is_cancelled() and time.monotonic() < deadline:
                time.sleep(0.02)
            return None
        if kind == "sleep":
            time.sleep(float(arg))
            return reply("slept")
        return reply(message.text or "")


def tagged_app(agent: Agent, store: str, tags: Mapping[str, str], *,
               preview_generations: bool = False) -> Any:
    """An A2AApp on ``store`` whose every response names its worker (``X-Worker-Pid``)
    and carries ``tags``, so a test can tell which process answered. Every worker
    starts it at boot (a2a_wsgi.gunicorn_config), so every worker reaps, even one
    that never ran a task."""
    inner = A2AApp(
        agent,
        base_url="http://127.0.0.1/",
        store=store,
        protocol=ProtocolSettings(preview_generations=preview_generations),
        streams=StreamSettings(heartbeat_interval=0.5),
        runtime=RuntimeSettings(lease_seconds=LEASE_SECONDS, poll_interval=0.05),
    )
    extra = [*tags.items()]

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        def tagged(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            return start_response(status, [*headers, *extra, ("X-Worker-Pid", str(os.getpid()))],
                                  *exc)

        return inner(environ, tagged)

    return app


class _FreshPeer(Peer):
    """A fresh connection per call, so the kernel spreads calls over the workers."""

    def post(self, body: Any, *, headers: dict[str, str] | None = None) -> dict[str, Any]:
        self.session.close()
        return super().post(body, headers=headers)


def fresh_peer(url: str) -> Peer:
    """A 1.0 peer of ``url`` that opens a new connection for every call."""
    return _FreshPeer(url, "1.0")


#: Seconds the servers of :func:`peers_by_worker`'s tests keep an idle connection open
#: (gunicorn's ``--keep-alive``): a pinned peer's connection outlives the test.
PINNED_KEEPALIVE = 300


def worker_of(peer: Peer) -> str:
    """The pid of the worker that gave ``peer``'s last answer."""
    assert peer.last is not None
    return str(peer.last.headers["X-Worker-Pid"])


def _pin(peer: Peer) -> str:
    """Open ``peer``'s keep-alive connection (a card fetch); the worker that accepted it."""
    peer.last = peer.session.get(peer.url + READY_PATH, timeout=10)
    assert peer.last.status_code == 200, peer.last.text
    return worker_of(peer)


def peers_by_worker(url: str, workers: int, timeout: float = 60) -> dict[str, Peer]:
    """One 1.0 peer per worker (pid -> peer), each on a keep-alive connection that worker
    accepted: a test picks the worker that answers by the peer it calls.

    Which worker accepts a new connection is the kernel's choice (a busy machine may favour
    one for a while): connections are opened, a few at once, until every worker holds one;
    the rest are closed. The server must keep idle connections open for the test
    (``keepalive=PINNED_KEEPALIVE``), and a test checks :func:`worker_of` after each call.
    """
    pinned: dict[str, Peer] = {}
    deadline = time.monotonic() + timeout
    with ThreadPoolExecutor(workers) as pool:
        while len(pinned) < workers:
            assert time.monotonic() < deadline, (
                f"in {timeout} s, new connections reached only workers {sorted(pinned)}")
            batch = [Peer(url, "1.0") for _ in range(workers)]
            for peer, pid in zip(batch, pool.map(_pin, batch), strict=True):
                if pid in pinned:
                    peer.session.close()
                else:
                    pinned[pid] = peer
    return pinned


def send(url: str, text: str) -> tuple[dict[str, Any], str]:
    """A non-blocking send; the task and the pid of the worker that runs it."""
    peer = fresh_peer(url)
    task = peer.send(text, blocking=False)
    return task, peer.last.headers["X-Worker-Pid"]


def get(url: str, task_id: str, header: str = "X-Worker-Pid") -> tuple[dict[str, Any], str]:
    """GetTask; the task and the ``header`` of the answer (which process gave it)."""
    peer = fresh_peer(url)
    response = peer.rpc("get", {"id": task_id})
    assert "result" in response, response
    return response["result"], peer.last.headers[header]


def wait_state(url: str, task_id: str, states: set[str], timeout: float = 15) -> dict[str, Any]:
    """GetTask until the task is in one of ``states``; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        task, _ = get(url, task_id)
        if state_of(task) in states:
            return task
        assert time.monotonic() < deadline, f"task {task_id} never reached {states}: {task}"
        time.sleep(0.05)
