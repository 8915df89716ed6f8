"""Held streams park under ``a2a serve``'s gevent worker (a2a_wsgi._parking): once a
subscription sleeps, gunicorn's handler for its connection ends and the process resumes
the stream when its task moves, its heartbeat is due or its client hangs up. The wire
is what it was (events, heartbeats, the chunked end) but for ``Connection: close``: the
connection closes after the end. Under gthread nothing parks and the connection is kept
alive."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest
from multiprocess_support import APP_PATH, MultiprocessAgent, fresh_peer
from support.gunicorn import ROOT, ServerProcess, free_port
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from a2a_wsgi import A2AApp
from a2a_wsgi.settings import StreamSettings

app = A2AApp(MultiprocessAgent(), streams=StreamSettings(heartbeat_interval=0.5))
#: The same app behind a mount: a middleware in between might catch what ends gunicorn's
#: handler, so nothing parks there.
mounted = DispatcherMiddleware(app, {"/other": app})

pytestmark = pytest.mark.slow

#: What gunicorn logs at debug level when the app hands a stream's connection over.
PARKED = "the stream is parked"


def _serve(tmp_path: Path, worker_class: str, target: str = "app") -> ServerProcess:
    port = free_port()
    a2a = Path(sys.executable).parent / "a2a"  # the venv's own command, not PATH's
    argv = [str(a2a), "serve", f"test_parked_streams:{target}", "--bind", f"127.0.0.1:{port}",
            "--worker-class", worker_class, "--log-level", "debug", "--graceful-timeout", "1"]
    path = os.pathsep.join(str(p) for p in [*APP_PATH, ROOT])
    return ServerProcess(argv, port=port, log_path=tmp_path / "serve.log",
                         env={"PYTHONPATH": path})


def _request(method: str, path: str, body: bytes = b"", version: str = "1.1") -> bytes:
    return (f"{method} {path} HTTP/{version}\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\nA2A-Version: 1.0\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def _subscribe(task_id: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                       "params": {"id": task_id}}).encode()


def _read_until(sock: socket.socket, seen: bytes, marker: bytes, within: float) -> bytes:
    """Read until ``marker`` is in what was read; the chunked end (``0\r\n\r\n``) only
    as the end of what was read (as a substring it may be a chunk size and its line end)."""
    deadline = time.monotonic() + within
    ended = marker == b"0\r\n\r\n"
    while not (seen.endswith(b"\r\n0\r\n\r\n") if ended else marker in seen):
        assert time.monotonic() < deadline, seen[-300:]
        chunk = sock.recv(65536)
        assert chunk, seen[-300:]
        seen += chunk
    return seen


def _closed_after(sock: socket.socket, within: float) -> bool:
    """True when the server closes the connection within ``within`` seconds."""
    sock.settimeout(within)
    try:
        return sock.recv(65536) == b""
    except TimeoutError:
        return False


@pytest.mark.parametrize(("worker_class", "target"),
                         [("gevent", "app"), ("gthread", "app"), ("gevent", "mounted")])
def test_a_held_stream_gets_events_heartbeats_and_its_end(tmp_path: Path, worker_class: str,
                                                          target: str) -> None:
    parks = worker_class == "gevent" and target == "app"
    with _serve(tmp_path, worker_class, target) as server:
        server.wait_ready()
        peer = fresh_peer(server.url)
        task = peer.send("hang", blocking=False)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(_request("POST", "/", _subscribe(task["id"])))
            seen = _read_until(sock, b"", b"\ndata:", 10)
            head = seen.split(b"\r\n\r\n", 1)[0]
            assert head.startswith(b"HTTP/1.1 200") and b"Transfer-Encoding: chunked" in head
            # a stream that parks says its connection closes after it (none of it is kept)
            assert (b"Connection: close" in head) == parks, head
            seen = _read_until(sock, seen, b": ping", 5)  # a heartbeat while it sleeps
            peer.rpc("cancel", {"id": task["id"]})
            seen = _read_until(sock, seen, b"0\r\n\r\n", 10)
            assert b"TASK_STATE_CANCELED" in seen
            if parks:  # handed over: closed after its end
                assert _closed_after(sock, 5)
            else:  # gunicorn's: the next request on the same connection is served
                sock.sendall(_request("GET", "/.well-known/agent-card.json"))
                assert _read_until(sock, b"", b"HTTP/1.1 200", 5)
        log = server.log()
    assert (PARKED in log) == parks, log[-2000:]
    assert "Traceback" not in log, log[-3000:]


def test_an_http_1_0_stream_parks_unchunked_and_ends_with_its_connection(
        tmp_path: Path) -> None:
    with _serve(tmp_path, "gevent") as server:
        server.wait_ready()
        peer = fresh_peer(server.url)
        task = peer.send("hang", blocking=False)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(_request("POST", "/", _subscribe(task["id"]), version="1.0"))
            seen = _read_until(sock, b"", b": ping", 10)
            assert b"Transfer-Encoding" not in seen.split(b"\r\n\r\n", 1)[0]
            peer.rpc("cancel", {"id": task["id"]})
            seen = _read_until(sock, seen, b"TASK_STATE_CANCELED", 10)
            assert _closed_after(sock, 5)
            assert not seen.endswith(b"\r\n0\r\n\r\n")
        log = server.log()
    assert PARKED in log and "Traceback" not in log, log[-3000:]


def test_a_rest_subscription_parks_and_goes_on_when_another_client_hangs_up(
        tmp_path: Path) -> None:
    """HTTP+JSON's subscribe parks as JSON-RPC's does, and a parked stream whose client
    hung up ends without disturbing the others on the task (test_many_streams checks
    that 400 hung-up streams give their descriptors back within 2 s)."""
    with _serve(tmp_path, "gevent") as server:
        server.wait_ready()
        peer = fresh_peer(server.url)
        task = peer.send("hang", blocking=False)
        gone = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        gone.sendall(_request("POST", f"/rest/tasks/{task['id']}:subscribe"))
        _read_until(gone, b"", b"\ndata:", 10)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(_request("POST", f"/rest/tasks/{task['id']}:subscribe"))
            seen = _read_until(sock, b"", b": ping", 10)
            gone.close()
            time.sleep(0.3)
            peer.rpc("cancel", {"id": task["id"]})
            seen = _read_until(sock, seen, b"0\r\n\r\n", 10)
            assert b"TASK_STATE_CANCELED" in seen
        log = server.log()
    assert log.count(PARKED) >= 2 and "Traceback" not in log, log[-3000:]


def test_a_client_that_subscribed_goes_on_calling_on_the_same_session(tmp_path: Path) -> None:
    """After a parked stream ends the server closes its connection; a requests-based client
    (ours) told so by Connection: close opens a new one, and every call after succeeds."""
    from a2a_client import A2AClient

    with _serve(tmp_path, "gevent") as server:
        server.wait_ready()
        client = A2AClient(server.url, binding="JSONRPC")
        try:
            for _ in range(5):
                task = fresh_peer(server.url).send("hang", blocking=False)
                states = []
                for event in client.subscribe(task["id"]):
                    states.append(event.status.state.value)  # the task, then its updates
                    if len(states) == 1:
                        client.cancel_task(task["id"])  # on the same session, mid-stream
                assert states[0] == "working", states
                assert states[-1] == "canceled", states
                for _ in range(3):  # straight after the close, on the same session
                    assert client.get_task(task["id"]).id == task["id"]
        finally:
            client.close()
        log = server.log()
    assert log.count(PARKED) >= 5 and "Traceback" not in log, log[-3000:]


def test_the_official_sdk_client_subscribes_to_parked_streams_and_goes_on(
        tmp_path: Path) -> None:
    """The official Python SDK (a2a-sdk, httpx) against ``a2a serve``: three rounds of send,
    subscribe, cancel mid-stream and get on one httpx client, its pool meeting the closed
    connections of parked streams."""
    import asyncio

    import httpx
    from a2a.client import ClientConfig, create_client
    from a2a.types import a2a_pb2 as pb

    async def scenario(url: str) -> list[list[str]]:
        rounds = []
        async with httpx.AsyncClient(timeout=10) as http:
            plain = await create_client(url, ClientConfig(httpx_client=http, streaming=False,
                                                          polling=True))
            streaming = await create_client(url, ClientConfig(httpx_client=http,
                                                              streaming=True))
            for n in range(3):
                request = pb.SendMessageRequest(message=pb.Message(
                    message_id=f"m-{n}-{time.monotonic_ns()}", role=pb.Role.ROLE_USER,
                    parts=[pb.Part(text="hang")]))
                sent = [e async for e in plain.send_message(request)][0].task
                seen: list[str] = []
                async for event in streaming.subscribe(pb.SubscribeToTaskRequest(id=sent.id)):
                    kind = event.WhichOneof("payload")
                    state = (event.task.status.state if kind == "task"
                             else event.status_update.status.state)
                    seen.append(pb.TaskState.Name(state))
                    if len(seen) == 1:
                        await plain.cancel_task(pb.CancelTaskRequest(id=sent.id))
                after = await plain.get_task(pb.GetTaskRequest(id=sent.id))
                seen.append(pb.TaskState.Name(after.status.state))
                rounds.append(seen)
            await plain.close()
            await streaming.close()
        return rounds

    with _serve(tmp_path, "gevent") as server:
        server.wait_ready()
        rounds = asyncio.run(asyncio.wait_for(scenario(server.url), 60))
        log = server.log()
    for seen in rounds:
        # The send answers SUBMITTED and the agent's thread moves the task to WORKING
        # meanwhile: the subscription may come first (it did once in CI, on gunicorn's floor).
        assert seen[0] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"), seen
        assert seen[-2:] == ["TASK_STATE_CANCELED"] * 2, seen
    assert log.count(PARKED) >= 3 and "Traceback" not in log, log[-3000:]
