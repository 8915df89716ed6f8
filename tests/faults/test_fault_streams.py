"""F4 and F5: clients that reset their streams, and clients that never read.

In-process: the app under werkzeug's threaded server (one thread per
connection, like a gthread worker), the memory store. Streams here read the
store's event log; nothing queues per subscriber, so a reader that stalls can
only hold its own request thread, never the agent or other readers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from fault_support import build_app, reset_close, rpc, thread_count_settles
from support.a2a_http import served

from a2a_wsgi._stalled_writes import CHECK_EVERY, RELEASE_QUIET
from a2a_wsgi.settings import RuntimeSettings

EVENTS, PAD = 2500, 2000  # ~5.5 MB per stream: more than a socket buffer holds (4 MB)
KEPT = 1000  # the memory store's max_events (events kept per task)


@pytest.fixture
def url() -> Iterator[str]:
    with served(build_app("memory", runtime=RuntimeSettings(max_artifacts=50))) as handle:
        yield handle.url + "/"


def _message(text: str) -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": text}]}}


def _raw_stream(url: str, method: str, params: Any, *, rcvbuf: int | None = None
                ) -> socket.socket:
    """POST a streaming call on a bare socket and return it unread."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect((host, int(port)))
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"A2A-Version: 1.0\r\nAccept: text/event-stream\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    return sock


def _first_task_id(sock: socket.socket) -> str:
    """Read just enough of a raw SSE response to learn its task id."""
    data = b""
    while b"\n\n" not in data.partition(b"data:")[2]:
        chunk = sock.recv(4096)
        assert chunk, data
        data += chunk
    payload = data.partition(b"data:")[2].partition(b"\n")[0]
    result = json.loads(payload)["result"]
    return str(result["task"]["id"])


def _state(url: str, task_id: str) -> str:
    answer, _ = rpc(url, "GetTask", {"id": task_id, "historyLength": 0})
    return str(answer["result"]["status"]["state"])


def _time_to_complete(url: str, task_id: str, started: float, limit: float) -> float:
    while _state(url, task_id) != "TASK_STATE_COMPLETED":
        assert time.monotonic() - started < limit, f"{task_id} did not complete in {limit}s"
        time.sleep(0.01)
    return time.monotonic() - started


def _read_stream(url: str, text: str) -> dict[str, Any]:
    """A SendStreamingMessage read to its end: event ids, final state or error, seconds."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": _message(text)}
    started, ids, final, error = time.monotonic(), [], "", None
    with requests.post(url, json=body, stream=True, timeout=10,
                       headers={"A2A-Version": "1.0", "Accept": "text/event-stream"}) as resp:
        for line in resp.iter_lines():
            if line.startswith(b"id:"):
                ids.append(int(line[3:]))
            if line.startswith(b"data:"):
                data = json.loads(line[5:])
                if "error" in data:
                    error = data["error"]["code"]
                elif "statusUpdate" in data["result"]:
                    final = data["result"]["statusUpdate"]["status"]["state"]
    return {"ids": ids, "final": final, "error": error, "seconds": time.monotonic() - started}


def _drain(sock: socket.socket) -> None:
    while sock.recv(65536):
        pass


def _streamed_burst(url: str, burst: str, *, read: bool) -> tuple[list[socket.socket], float]:
    """Three streaming sends at once, drained or never read; seconds until all completed."""
    socks = [_raw_stream(url, "SendStreamingMessage", _message(burst),
                         rcvbuf=None if read else 4096) for _ in range(3)]
    started = time.monotonic()
    task_ids = [_first_task_id(sock) for sock in socks]  # a stalled one is never read again
    readers = [threading.Thread(target=_drain, args=(sock,)) for sock in socks if read]
    for reader in readers:
        reader.start()
    took = max(_time_to_complete(url, task_id, started, 30) for task_id in task_ids)
    for reader in readers:
        reader.join(timeout=10)
    return socks, took


def test_f5_readers_that_never_read_slow_neither_the_agent_nor_other_streams(url: str) -> None:
    burst = f"burst:{EVENTS}:{PAD}"
    drained, reading = _streamed_burst(url, burst, read=True)
    stalled: list[socket.socket] = []
    try:
        stalled, not_reading = _streamed_burst(url, burst, read=False)
        # Producers with stalled readers finish like those with eager readers (the
        # margin absorbs a shared 2-core machine); a blocked producer would never finish.
        assert not_reading <= 2 * reading + 1.0, (reading, not_reading)
        # Meanwhile (the stalled readers still connected) everything else is served.
        _, beside = rpc(url, "SendMessage", _message(f"burst:{KEPT - 100}:{PAD}"), timeout=30)
        assert beside <= reading + 1.0, (reading, beside)
        healthy = _read_stream(url, f"burst:{KEPT - 100}:{PAD}")  # fits the kept log
        assert healthy["final"] == "TASK_STATE_COMPLETED", healthy["error"]
        assert len(healthy["ids"]) >= KEPT - 100 and healthy["seconds"] <= reading + 2.0
        # A reader the agent outruns by more than the kept log is evicted with a clear
        # error (-32004), after consecutive events: never a silent gap.
        outrun = _read_stream(url, burst)
        assert outrun["final"] == "TASK_STATE_COMPLETED" or outrun["error"] == -32004, outrun
        assert outrun["ids"] == list(range(outrun["ids"][0], outrun["ids"][-1] + 1))
        card = requests.get(url + ".well-known/agent-card.json", timeout=2)
        assert card.status_code == 200
    finally:
        for sock in drained + stalled:
            reset_close(sock)


def test_f4_reset_streams_give_their_threads_back_and_others_carry_on(url: str) -> None:
    sent, _ = rpc(url, "SendMessage", {**_message("hang"),
                                      "configuration": {"returnImmediately": True}})
    task_id = sent["result"]["task"]["id"]
    time.sleep(0.3)  # the server's own threads (pool, keeper) are up
    baseline = threading.active_count()
    # The process's one hang-up watcher thread (a2a_wsgi._disconnect) starts with its first
    # watched stream and stays: count it once if this test is what starts it.
    watcher = 0 if any(t.name == "a2a-hangups" for t in threading.enumerate()) else 1
    healthy_done: list[tuple[int, str, float]] = []

    def follow() -> None:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
        count, last = 0, ""
        with requests.post(url, json=body, stream=True, timeout=10,
                           headers={"A2A-Version": "1.0", "Accept": "text/event-stream"}) as r:
            for line in r.iter_lines():
                if line.startswith(b"data:"):
                    count += 1
                    result = json.loads(line[5:])["result"]
                    if "statusUpdate" in result:
                        last = result["statusUpdate"]["status"]["state"]
        healthy_done.append((count, last, time.monotonic()))

    healthy = [threading.Thread(target=follow) for _ in range(5)]
    for thread in healthy:
        thread.start()
    for _ in range(3):  # three waves of 20 clients that crash mid-stream
        socks = [_raw_stream(url, "SubscribeToTask", {"id": task_id}) for _ in range(20)]
        assert all(_first_task_id(sock) == task_id for sock in socks)
        for sock in socks:
            reset_close(sock)
    # each healthy stream: its thread + its server thread; and, while streams are open,
    # the app's stalled-write watcher (a2a_wsgi._stalled_writes) and the task's one store
    # waiter (a2a_wsgi._runtime._watches), however many streams follow the task
    expected = baseline + len(healthy) * 2 + 2 + watcher
    left = thread_count_settles(expected, timeout=2.0)
    assert left <= expected, f"{left} threads, {expected} expected"
    canceled, _ = rpc(url, "CancelTask", {"id": task_id})
    assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    for thread in healthy:
        thread.join(timeout=5)
    assert [(c >= 2, last) for c, last, _ in healthy_done] == \
        [(True, "TASK_STATE_CANCELED")] * len(healthy)
    # the stalled-write watcher, after 65 ended streams, waits RELEASE_QUIET seconds without
    # a stream before it hands their memory back and ends
    settled = thread_count_settles(baseline + watcher, timeout=RELEASE_QUIET + 2 * CHECK_EVERY + 1)
    assert settled <= baseline + watcher, [t.name for t in threading.enumerate()]
