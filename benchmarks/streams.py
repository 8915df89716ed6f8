"""Streams and slow agents: what one worker holds under gevent and gthread, against the SDK.

    .venv/bin/python benchmarks/streams.py               # ~20-30 minutes
    .venv/bin/python benchmarks/streams.py --quick       # ~2 minutes, a smoke run
    .venv/bin/python benchmarks/streams.py --json out.json

Three servers, one worker each:

* ``ours-gevent``   benchmarks/apps/ours.py under ``a2a serve -k gevent`` (so exactly
                    ``a2a_wsgi._serve.gunicorn_settings("gevent")``);
* ``ours-gthread``  the same under ``a2a serve -k gthread`` (16 threads);
* ``sdk``           the official a2a-sdk on uvicorn, as in run.py.

Three phases (``--phases``):

1. ``held``: N concurrent ``SubscribeToTask`` streams (``--streams``, 1,000 and
   5,000) on one task the agent keeps WORKING (text ``hold S``: a WORKING status
   update every S = ``--tick`` seconds), held ``--hold`` seconds while a separate
   process sends ``GetTask`` at ``--probe-rate`` per second. Each cell gets a
   fresh server. Reported: streams opened and still open at the end, how the
   others failed, GetTask p50/p99 and failures, the server's RSS per open stream,
   its CPU while only holding, and how late the ticks reached the streams.
2. ``slow``: blocking ``SendMessage`` to an agent that waits 50 ms (text
   ``slow 50``) from 64 and 256 connections: requests/s and p50/p99, from this
   file's own closed-loop client (``LoadRun``, on uvloop from the SDK's venv):
   wrk's latencies are wrong against the gevent worker, see
   ``run.Sample.latency_consistent``.
3. ``cost``: card 304, blocking send and 10-event streams at 16 connections,
   with wrk as run.py measures them: what cooperation costs when nothing waits.

Every server is checked by hand before it is timed; rounds are interleaved
(the server order rotates) and cells are medians. Stream clients are asyncio
protocols on raw sockets in this process (the request written by hand, the
chunked SSE answer parsed incrementally); the GetTask probe is a second
process, so its latencies do not wait on this one's event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, cast

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.run import (  # noqa: E402  (the checkout's root must be on the path first)
    SDK_VENV,
    Cell,
    Sample,
    Server,
    check,
    fmt_ratio,
    free_port,
    group_cpu_seconds,
    gunicorn_argv,
    rotations,
    run_wrk,
    serve_settings,
    start,
    stop,
    uvicorn_argv,
)

__all__ = ["main"]

SERVERS = ("ours-gevent", "ours-gthread", "sdk")
PHASES = ("held", "slow", "cost")
COST_SCENARIOS = ("card304", "send", "stream")
OURS = "benchmarks.apps.ours:app"
HOST = "127.0.0.1"
#: The state a held task shows while the agent works.
WORKING = "TASK_STATE_WORKING"
CANCELED = "TASK_STATE_CANCELED"


# --------------------------------------------------------------------------- servers


def build(name: str) -> Server:
    """A server on a fresh port, not started."""
    port = free_port()
    if name == "sdk":
        return Server(name, uvicorn_argv(port, 1), {}, port)
    worker_class = name.split("-", 1)[1]
    # With A2A_SOAK_TRACEMALLOC=DIR set, the worker writes tracemalloc snapshots there
    # (benchmarks/memtrace/sitecustomize.py; compare them with benchmarks/memdiff.py).
    env = ({"PYTHONPATH": f"{HERE / 'memtrace'}{os.pathsep}{ROOT}"}
           if os.environ.get("A2A_SOAK_TRACEMALLOC") else {})
    # BENCH_GCDBG=DIR puts DIR first on the server's path instead: a folder with a
    # sitecustomize.py of your own (garbage-collection timings, an object census).
    if os.environ.get("BENCH_GCDBG"):
        env = {"PYTHONPATH": f"{os.environ['BENCH_GCDBG']}{os.pathsep}{ROOT}"}
    return Server(name, gunicorn_argv(OURS, port, 1, worker_class), env, port)


def settings_of(name: str) -> str:
    """What a server runs with, for the header."""
    if name == "sdk":
        return "uvicorn --loop uvloop --http httptools --workers 1"
    return f"a2a serve {serve_settings(name.split('-', 1)[1], 1)}"


def stop_fast(server: Server) -> None:
    """SIGINT first (gunicorn and uvicorn both stop at once on it), then run.py's stop.

    SIGTERM would be the graceful path; nothing is left open here to be graceful to.
    """
    proc = server.proc
    if proc is not None:
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    stop(server)


def group_rss_kib(pgid: int) -> int:
    """VmRSS of every live process in a process group (master and workers), in KiB."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
            if int(stat[stat.rindex(b")") + 2:].split()[2]) != pgid:
                continue
            with open(f"/proc/{entry}/status", "rb") as handle:
                for line in handle:
                    if line.startswith(b"VmRSS:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError):
            continue
    return total


def raise_nofile() -> int:
    """Lift this process's open-file limit to the hard one (a socket per stream)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# --------------------------------------------------------------------------- HTTP by hand


def rpc_request(port: int, method: str, params: dict[str, Any], *, rpc_id: int = 1,
                stream: bool = False, close: bool = False) -> bytes:
    """One JSON-RPC 1.0 POST, as bytes on the wire."""
    body = json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": method,
                       "params": params}).encode()
    head = ["POST / HTTP/1.1", f"Host: {HOST}:{port}", "Content-Type: application/json",
            "A2A-Version: 1.0", f"Content-Length: {len(body)}",
            f"Accept: {'text/event-stream' if stream else 'application/json'}"]
    if close:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def message_params(text: str, *, return_immediately: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"message": {"messageId": f"m-{time.monotonic_ns()}",
                                          "role": "ROLE_USER", "parts": [{"text": text}]}}
    if return_immediately:
        params["configuration"] = {"returnImmediately": True}
    return params


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """Status, lower-cased headers and body of one HTTP/1.1 response."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        return status, headers, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return status, headers, bytes(body)
            body += (await reader.readexactly(size + 2))[:-2]
    return status, headers, await reader.read()


async def rpc(port: int, method: str, params: dict[str, Any],
              timeout: float = 10.0) -> dict[str, Any]:
    """One JSON-RPC call on its own connection; the decoded answer."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            writer.write(rpc_request(port, method, params, close=True))
            status, _, body = await read_response(reader)
        finally:
            writer.close()
    answer: dict[str, Any] = json.loads(body)
    if status != 200 or "error" in answer:
        raise RuntimeError(f"{method}: HTTP {status} {body[:300]!r}")
    return answer


# --------------------------------------------------------------------------- SSE clients


_EVENT_END = re.compile(rb"\r?\n\r?\n")
_STATE = re.compile(rb'"state":\s*"(TASK_STATE_[A-Z_]+)"')
_TIMESTAMP = re.compile(rb'"timestamp":\s*"([^"]+)"')


def _lag(block: bytes, arrived: float) -> float | None:
    """Seconds from an event's status timestamp to ``arrived`` (wall clock)."""
    found = _TIMESTAMP.search(block)
    if found is None:
        return None
    try:
        stamp = datetime.fromisoformat(found.group(1).decode().replace("Z", "+00:00"))
    except ValueError:
        return None
    return arrived - stamp.timestamp()


class SseStream(asyncio.Protocol):
    """One SubscribeToTask stream: writes the request, parses the answer as it comes.

    Only the first event is decoded as JSON (it must be the task, WORKING); later
    events are matched with regular expressions, so 5,000 streams receiving a tick
    at once cost this process little.
    """

    def __init__(self, request: bytes, task_id: str, started: float) -> None:
        self.request, self.task_id, self.started = request, task_id, started
        self.transport: asyncio.Transport | None = None
        self.connected: float | None = None
        self.first: float | None = None  # loop time of the task snapshot
        self.closed: float | None = None
        self.status: int | None = None
        self.error: str | None = None
        self.final_state: str | None = None
        self.events = self.heartbeats = 0
        self.lags: list[float] = []
        self._head = bytearray()
        self._raw = bytearray()  # chunked body not yet decoded
        self._sse = bytearray()  # decoded SSE text not yet split into events
        self._chunked = False
        self._need = 0  # bytes left of the current chunk, its CRLF included

    # -- asyncio callbacks ---------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.connected = asyncio.get_running_loop().time()
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        if self.status is None:
            self._head += data
            end = self._head.find(b"\r\n\r\n")
            if end < 0:
                return
            data = bytes(self._head[end + 4:])
            self._parse_head(bytes(self._head[:end]))
            if self.error is not None:
                return
        if self._chunked:
            self._dechunk(data)
        else:
            self._feed(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = asyncio.get_running_loop().time()
        if self.status is None and self.error is None:
            self.error = "closed before answering"

    # -- parsing -------------------------------------------------------------------

    def _parse_head(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ", 2)[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in
                  (line.partition(":") for line in lines[1:])}
        self._chunked = fields.get("transfer-encoding", "").lower() == "chunked"
        if self.status != 200:
            self._fail(f"HTTP {self.status}")
        elif "text/event-stream" not in fields.get("content-type", ""):
            self._fail("answered JSON, not a stream")

    def _dechunk(self, data: bytes) -> None:
        self._raw += data
        while self._raw:
            if self._need == 0:
                end = self._raw.find(b"\r\n")
                if end < 0:
                    return
                size = int(bytes(self._raw[:end]).split(b";")[0], 16)
                del self._raw[:end + 2]
                if size == 0:
                    self._close()  # the server ended the response
                    return
                self._need = size + 2
            take = min(self._need, len(self._raw))
            data_left = max(0, self._need - 2)
            piece = bytes(self._raw[:min(take, data_left)])
            del self._raw[:take]
            self._need -= take
            if piece:
                self._feed(piece)

    def _feed(self, data: bytes) -> None:
        self._sse += data
        while True:
            found = _EVENT_END.search(self._sse)
            if found is None:
                return
            block = bytes(self._sse[:found.start()])
            del self._sse[:found.end()]
            self._event(block)

    def _event(self, block: bytes) -> None:
        lines = block.replace(b"\r\n", b"\n").split(b"\n")
        data = b"\n".join(line[5:].lstrip(b" ") for line in lines if line.startswith(b"data:"))
        if not data:
            self.heartbeats += any(line.startswith(b":") for line in lines)
            return
        self.events += 1
        arrived = time.time()
        if self.first is None:
            self._first_event(data)
            return
        state = _STATE.search(data)
        if state is None:
            return
        value = state.group(1).decode()
        if value == WORKING:
            lag = _lag(data, arrived)
            if lag is not None:
                self.lags.append(lag)
        else:
            self.final_state = value

    def _first_event(self, data: bytes) -> None:
        try:
            answer = json.loads(data)
        except ValueError:
            self._fail("first event is not JSON")
            return
        task = answer.get("result", {}).get("task")
        if not isinstance(task, dict):
            self._fail(f"first event is not the task: {data[:120]!r}")
        elif task.get("id") != self.task_id or task["status"]["state"] != WORKING:
            self._fail(f"first event is task {task.get('id')} {task['status']['state']}")
        else:
            self.first = asyncio.get_running_loop().time()

    def _fail(self, why: str) -> None:
        self.error = why
        self._close()

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    # -- what it is now ------------------------------------------------------------

    def kind(self) -> str:
        """How this stream stands: ``open``, or why it is not."""
        if self.first is not None and self.closed is None:
            return "open"
        if self.first is not None:
            return "opened, then ended by the server"
        if self.error is not None:
            return self.error
        if self.connected is None:
            return "connect not answered (not accepted)"
        return "connected, no answer yet (queued)"


class Fleet:
    """N streams on one task, opened at a steady rate."""

    def __init__(self, port: int, task_id: str, count: int) -> None:
        self.port, self.task_id, self.count = port, task_id, count
        self.streams: list[SseStream] = []
        self._connects: list[asyncio.Task[None]] = []

    async def open(self, rate: float) -> None:
        """Start every connect, ``rate`` per second; returns when the last is started."""
        loop = asyncio.get_running_loop()
        begin = loop.time()
        for index in range(self.count):
            delay = begin + index / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            request = rpc_request(self.port, "SubscribeToTask", {"id": self.task_id},
                                  rpc_id=index, stream=True)
            stream = SseStream(request, self.task_id, loop.time())
            self.streams.append(stream)
            self._connects.append(asyncio.create_task(self._connect(stream)))

    async def _connect(self, stream: SseStream) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.create_connection(lambda: stream, HOST, self.port)
        except OSError as exc:
            stream.error = f"connect failed: {exc.strerror or type(exc).__name__}"

    async def wait_opened(self, deadline: float) -> None:
        """Until every stream has its first event or has failed, or ``deadline`` (loop time)."""
        loop = asyncio.get_running_loop()
        while loop.time() < deadline:
            if all(s.first is not None or s.error is not None for s in self.streams):
                return
            await asyncio.sleep(0.1)

    async def wait_closed(self, timeout: float) -> None:
        """Until every opened stream has ended, or ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            if all(s.closed is not None for s in self.streams if s.first is not None):
                return
            await asyncio.sleep(0.1)

    def kinds(self) -> Counter[str]:
        return Counter(stream.kind() for stream in self.streams)

    def close(self) -> None:
        for task in self._connects:
            task.cancel()
        for stream in self.streams:
            stream._close()


# --------------------------------------------------------------------------- GetTask probe


async def probe(port: int, task_id: str, rate: float, seconds: float,
                timeout: float) -> dict[str, Any]:
    """GetTask ``rate`` times a second for ``seconds``, open loop.

    Latency runs from the moment a request was due, so a server that stalls
    cannot hide it by slowing the probe down. A request unanswered after
    ``timeout`` seconds is a failure; idle keep-alive connections are reused.
    """
    loop = asyncio.get_running_loop()
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    latencies: list[float] = []
    failures: Counter[str] = Counter()
    stale: Counter[str] = Counter()
    request = rpc_request(port, "GetTask", {"id": task_id})

    Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]

    async def exchange(held: list[Conn]) -> tuple[int, dict[str, str], bytes]:
        """One GetTask on ``held[0]`` (or a new connection, put there); a kept-alive
        connection the server closed meanwhile is replaced once, as any HTTP client
        does (uvicorn drops idle ones after 5 s)."""
        if held:
            held[0][1].write(request)
            try:
                return await read_response(held[0][0])
            except (asyncio.IncompleteReadError, ConnectionError):
                held.pop()[1].close()
                stale["replaced"] += 1
        held.append(await asyncio.open_connection(HOST, port))
        held[0][1].write(request)
        return await read_response(held[0][0])

    async def one(due: float) -> None:
        held = [idle.pop()] if idle else []
        try:
            async with asyncio.timeout(timeout):
                status, headers, body = await exchange(held)
            result = json.loads(body).get("result", {}) if status == 200 else {}
            if result.get("id") != task_id or result["status"]["state"] != WORKING:
                failures[f"HTTP {status}" if status != 200 else "wrong answer"] += 1
                held.pop()[1].close()
                return
            latencies.append((loop.time() - due) * 1000)
            if headers.get("connection", "").lower() == "close":
                held.pop()[1].close()
            else:
                idle.append(held.pop())
        except TimeoutError:
            failures["timeout"] += 1
        except (OSError, asyncio.IncompleteReadError, ValueError, KeyError) as exc:
            failures[type(exc).__name__] += 1
        finally:
            for _, writer in held:
                writer.close()

    begin = loop.time() + 0.05
    tasks = []
    for index in range(int(rate * seconds)):
        due = begin + index / rate
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(due)))
    await asyncio.gather(*tasks)
    for _, writer in idle:
        writer.close()
    return {"sent": len(tasks), "latencies_ms": latencies, "failures": dict(failures),
            "stale_replaced": stale["replaced"]}


async def run_probe(port: int, task_id: str, rate: float, seconds: float,
                    timeout: float) -> dict[str, Any]:
    """:func:`probe` in a child process (this file with ``--probe``)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "--probe",
        json.dumps([port, task_id, rate, seconds, timeout]),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed: {err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(out)
    return result


# --------------------------------------------------------------------------- load client


class LoadRun:
    """A closed-loop load: ``connections`` keep-alive connections, each sending a
    blocking SendMessage with ``text`` (a fresh messageId each), reading the whole
    answer, then sending the next, until ``seconds`` have passed.

    Used instead of wrk where latency matters: against gunicorn's gevent worker
    wrk 4.1 reports latencies that cannot be (a mean above connections / rate;
    strace of the same run shows the real ones), while its counts are right.
    """

    def __init__(self, port: int, text: str, connections: int, seconds: float) -> None:
        self.port, self.text, self.connections, self.seconds = port, text, connections, seconds
        self.latencies: list[float] = []
        self.statuses: Counter[int] = Counter()
        self.wrong = 0
        self.errors: Counter[str] = Counter()
        self.stop_at = 0.0
        self._seq = 0
        self._prefix = f"{os.getpid()}-{time.time_ns()}"
        self._open = 0
        self._finished: asyncio.Future[None] | None = None

    def request(self) -> bytes:
        self._seq += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self._seq, "method": "SendMessage",
                           "params": {"message": {
                               "messageId": f"load-{self._prefix}-{self._seq}",
                               "role": "ROLE_USER", "parts": [{"text": self.text}]}}}).encode()
        return (f"POST / HTTP/1.1\r\nHost: {HOST}:{self.port}\r\n"
                f"Content-Type: application/json\r\nA2A-Version: 1.0\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body

    async def run(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        self._finished = loop.create_future()
        began = loop.time()
        self.stop_at = began + self.seconds
        for _ in range(self.connections):
            self._open += 1
            try:
                await loop.create_connection(lambda: _LoadConnection(self), HOST, self.port)
            except OSError as exc:
                self.errors[f"connect: {exc.strerror}"] += 1
                self.ended()
        await self._finished
        elapsed = loop.time() - began
        ordered = sorted(self.latencies)
        return {"requests": len(ordered), "seconds": elapsed,
                "statuses": {str(k): v for k, v in self.statuses.items()},
                "wrong": self.wrong, "errors": dict(self.errors),
                "p50_ms": percentile(ordered, 50), "p99_ms": percentile(ordered, 99),
                "mean_ms": statistics.fmean(ordered) if ordered else None}

    def ended(self) -> None:
        self._open -= 1
        if self._open == 0 and self._finished is not None and not self._finished.done():
            self._finished.set_result(None)


class _LoadConnection(asyncio.Protocol):
    """One connection of a :class:`LoadRun`."""

    def __init__(self, run: LoadRun) -> None:
        self.run = run
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.sent = 0.0
        self.body_at = self.length = -1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        self.next()

    def next(self) -> None:
        assert self.transport is not None
        if asyncio.get_running_loop().time() >= self.run.stop_at:
            self.transport.close()
            return
        self.buf.clear()
        self.body_at = self.length = -1
        self.sent = time.perf_counter()
        self.transport.write(self.run.request())

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if self.body_at < 0:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buf[:end]).lower()
            self.body_at = end + 4
            found = re.search(rb"content-length:\s*(\d+)", head)
            self.length = int(found.group(1)) if found else -1
            self.run.statuses[int(head.split(b" ", 2)[1])] += 1
            if self.length < 0:
                self.run.errors["answer without Content-Length"] += 1
                assert self.transport is not None
                self.transport.close()
                return
        if len(self.buf) - self.body_at < self.length:
            return
        self.run.latencies.append((time.perf_counter() - self.sent) * 1000)
        if b"TASK_STATE_COMPLETED" not in self.buf:
            self.run.wrong += 1
        self.next()

    def connection_lost(self, exc: Exception | None) -> None:
        if asyncio.get_running_loop().time() < self.run.stop_at:
            self.run.errors["closed by the server"] += 1
        self.run.ended()


def _fast_loop() -> None:
    """uvloop when this interpreter has it (the SDK's venv does): a cheaper load client."""
    try:
        import uvloop  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def run_load(server: Server, text: str, connections: int, seconds: float) -> Sample:
    """A :class:`LoadRun` in a child process (the SDK venv's Python, for uvloop)."""
    python = SDK_VENV / "bin" / "python"
    assert server.proc is not None
    cpu_before = group_cpu_seconds(server.proc.pid)
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    out = subprocess.run(
        [str(python if python.exists() else sys.executable), str(Path(__file__).resolve()),
         "--load", json.dumps([server.port, text, connections, seconds])],
        capture_output=True, text=True, timeout=seconds + 60)
    wall = time.monotonic() - began
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_after = group_cpu_seconds(server.proc.pid)
    if out.returncode != 0:
        raise RuntimeError(f"load client failed: {out.stderr[-2000:]}")
    raw = json.loads(out.stdout)
    requests = max(raw["requests"], 1)
    errors = (raw["wrong"] + sum(raw["errors"].values())
              + sum(v for k, v in raw["statuses"].items() if k != "200"))
    client = ((usage_after.ru_utime - usage_before.ru_utime)
              + (usage_after.ru_stime - usage_before.ru_stime))
    return Sample(rps=raw["requests"] / raw["seconds"], p50_ms=raw["p50_ms"] or 0.0,
                  p99_ms=raw["p99_ms"] or 0.0, errors=errors,
                  server_cpu_us=(cpu_after - cpu_before) / requests * 1e6,
                  wrk_cpu=client / wall, mean_ms=raw["mean_ms"] or 0.0)


# --------------------------------------------------------------------------- held streams


def percentile(values: Iterable[float], pct: float) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


@dataclass
class Held:
    """One held-streams cell: one fresh server, N streams, one hold."""

    server: str
    streams: int
    opened: int = 0  # got the task snapshot at some point before the hold ended
    open_at_end: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # at the end of the hold
    open_p50_s: float | None = None
    open_p99_s: float | None = None
    get_sent: int = 0
    get_ok: int = 0
    get_p50_ms: float | None = None
    get_p99_ms: float | None = None
    get_failures: dict[str, int] = field(default_factory=dict)
    get_stale_replaced: int = 0  # kept-alive probe connections the server had closed
    rss_before_kib: int = 0
    rss_hold_kib: int = 0
    rss_per_stream_kib: float | None = None
    server_cpu_hold: float = 0.0  # share of one core while holding (GetTask probe included)
    #: Share of one core while only holding (no probe), per second of the idle window:
    #: the median (a tick falls into one or two of the seconds) and the mean.
    idle_cpu_median: float | None = None
    idle_cpu_mean: float | None = None
    client_cpu_hold: float = 0.0
    tick_lag_p50_ms: float | None = None
    tick_lag_p99_ms: float | None = None
    ticks_per_stream: float | None = None
    cancel: str = ""
    saw_canceled: int = 0
    notes: list[str] = field(default_factory=list)


async def create_hold_task(port: int, tick: float) -> str:
    """A task whose agent stays WORKING until canceled; its id once it is WORKING."""
    answer = await rpc(port, "SendMessage", message_params(f"hold {tick:g}",
                                                           return_immediately=True))
    task_id = str(answer["result"]["task"]["id"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        got = await rpc(port, "GetTask", {"id": task_id})
        if got["result"]["status"]["state"] == WORKING:
            return task_id
        await asyncio.sleep(0.05)
    raise RuntimeError(f"task {task_id} never became WORKING")


async def check_held(server: Server, tick: float) -> list[str]:
    """By hand: a hold task, one stream on it (task WORKING first), GetTask, cancel.

    Returns notes on what is not a reason to refuse timing (a canceled stream that
    does not show CANCELED); raises on what is.
    """
    loop = asyncio.get_running_loop()
    task_id = await create_hold_task(server.port, tick)
    fleet = Fleet(server.port, task_id, 1)
    await fleet.open(1000)
    await fleet.wait_opened(loop.time() + 10)
    stream = fleet.streams[0]
    assert stream.first is not None, f"{server.name}: subscribe gave {stream.kind()}"
    got = await rpc(server.port, "GetTask", {"id": task_id})
    assert got["result"]["status"]["state"] == WORKING, got
    canceled = await rpc(server.port, "CancelTask", {"id": task_id})
    assert canceled["result"]["status"]["state"] == CANCELED, canceled
    await fleet.wait_closed(5)
    notes = []
    if stream.final_state != CANCELED or stream.closed is None:
        notes.append(f"{server.name}: a subscriber of a canceled task saw "
                     f"{stream.final_state or 'no final event'}, stream "
                     f"{'ended' if stream.closed else 'still open after 5 s'}")
    fleet.close()
    return notes


async def held_cell(name: str, count: int, args: argparse.Namespace, logdir: Path) -> Held:
    """Start a fresh server, hold ``count`` streams on one task, measure, tear down."""
    server = build(name)
    result = Held(server=name, streams=count)
    start(server, logdir)
    fleet: Fleet | None = None
    task_id = ""
    try:
        assert server.proc is not None
        pgid = server.proc.pid
        result.notes += await check_held(server, args.tick)
        task_id = await create_hold_task(server.port, args.tick)
        await asyncio.sleep(0.5)
        result.rss_before_kib = group_rss_kib(pgid)
        loop = asyncio.get_running_loop()
        fleet = Fleet(server.port, task_id, count)
        await fleet.open(args.open_rate)
        await fleet.wait_opened(loop.time() + args.open_timeout)
        await hold(fleet, server, task_id, result, args)
        await finish(fleet, server, task_id, result)
    finally:
        if fleet is not None:
            fleet.close()
        await asyncio.sleep(0.5)
        stop_fast(server)
    return result


async def hold(fleet: Fleet, server: Server, task_id: str, result: Held,
               args: argparse.Namespace) -> None:
    """The hold itself: the probe runs, RSS is sampled, CPU is read around it."""
    assert server.proc is not None
    pgid = server.proc.pid
    loop = asyncio.get_running_loop()
    await measure_idle(server, result, args.idle)
    cpu_before, client_before = group_cpu_seconds(pgid), _self_cpu()
    began = loop.time()
    probe_task = asyncio.create_task(run_probe(server.port, task_id, args.probe_rate,
                                               args.hold, args.probe_timeout))
    samples = []
    every = max(1.0, args.hold / 12)
    while loop.time() - began < args.hold:
        await asyncio.sleep(min(every, max(0.0, args.hold - (loop.time() - began))))
        samples.append(group_rss_kib(pgid))
    elapsed = loop.time() - began
    result.server_cpu_hold = (group_cpu_seconds(pgid) - cpu_before) / elapsed
    result.client_cpu_hold = (_self_cpu() - client_before) / elapsed
    kinds = fleet.kinds()
    result.kinds = dict(kinds)
    result.open_at_end = kinds.get("open", 0)
    opened = [s for s in fleet.streams if s.first is not None]
    result.opened = len(opened)
    took = [s.first - s.started for s in opened if s.first is not None]
    result.open_p50_s = percentile(took, 50)
    result.open_p99_s = percentile(took, 99)
    result.rss_hold_kib = int(statistics.median(samples)) if samples else 0
    if result.open_at_end * 2 >= result.streams:  # else it is the cost of refusing them
        result.rss_per_stream_kib = ((result.rss_hold_kib - result.rss_before_kib)
                                     / result.open_at_end)
    lags = [lag * 1000 for s in opened for lag in s.lags]
    result.tick_lag_p50_ms = percentile(lags, 50)
    result.tick_lag_p99_ms = percentile(lags, 99)
    if opened:
        result.ticks_per_stream = sum(len(s.lags) for s in opened) / len(opened)
    got = await probe_task
    result.get_sent = got["sent"]
    result.get_ok = len(got["latencies_ms"])
    result.get_p50_ms = percentile(got["latencies_ms"], 50)
    result.get_p99_ms = percentile(got["latencies_ms"], 99)
    result.get_failures = got["failures"]
    result.get_stale_replaced = got["stale_replaced"]


async def measure_idle(server: Server, result: Held, seconds: float) -> None:
    """The server's CPU, second by second, while the streams are only held (no probe)."""
    assert server.proc is not None
    if seconds <= 0:
        return
    loop = asyncio.get_running_loop()
    shares = []
    last_cpu, last_at = group_cpu_seconds(server.proc.pid), loop.time()
    end = last_at + seconds
    while loop.time() < end:
        await asyncio.sleep(1.0)
        cpu, now = group_cpu_seconds(server.proc.pid), loop.time()
        shares.append((cpu - last_cpu) / (now - last_at))
        last_cpu, last_at = cpu, now
    result.idle_cpu_median = statistics.median(shares)
    result.idle_cpu_mean = statistics.fmean(shares)


async def finish(fleet: Fleet, server: Server, task_id: str, result: Held) -> None:
    """Cancel the task, see how many streams end with CANCELED, then hang up on the rest.

    Under gthread the cancel may wait behind every queued subscribe: it is sent
    again once the streams are closed, so the agent stops either way.
    """
    try:
        await rpc(server.port, "CancelTask", {"id": task_id}, timeout=10)
        result.cancel = "answered"
    except (TimeoutError, OSError, RuntimeError) as exc:
        result.cancel = f"not answered in 10 s ({type(exc).__name__})"
    await fleet.wait_closed(10)
    result.saw_canceled = sum(s.final_state == CANCELED for s in fleet.streams)
    fleet.close()
    if result.cancel != "answered":
        await asyncio.sleep(1)
        try:
            await rpc(server.port, "CancelTask", {"id": task_id}, timeout=20)
        except (TimeoutError, OSError, RuntimeError) as exc:
            result.notes.append(f"cancel after hanging up failed too: {exc}")


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --------------------------------------------------------------------------- slow and cost


def check_slow(server: Server, millis: int) -> None:
    """By hand: a slow send completes with the echo, and takes at least the wait."""
    from benchmarks.run import _post

    began = time.monotonic()
    status, text = _post(server.url, "SendMessage", f"slow {millis}")
    took = time.monotonic() - began
    task = json.loads(text)["result"]["task"]
    assert status == 200 and task["status"]["state"] == "TASK_STATE_COMPLETED", text
    assert task["artifacts"][0]["parts"][0]["text"] == f"slow {millis}", text
    assert took >= millis / 1000, f"{server.name}: slow {millis} answered in {took:.3f} s"


def measure(servers: list[Server], cells: dict[tuple[str, str], Cell], key: str,
            rounds: int, one: Callable[[Server, float], Sample], seconds: float) -> None:
    """Interleaved rounds of one load over every server (``one(server, seconds)``)."""
    by_name = {s.name: s for s in servers}
    for server in servers:  # warm-up
        one(server, 1)
    for order in rotations(list(by_name), rounds):
        for name in order:
            sample = one(by_name[name], seconds)
            cells.setdefault((key, name), Cell()).samples.append(sample)
            print(f"  {key:<10} {name:<13} {sample.rps:>8.0f} req/s p50 {sample.p50_ms:.2f} "
                  f"ms p99 {sample.p99_ms:.2f} ms cpu {sample.server_cpu_us:.0f} us/req "
                  f"errors {sample.errors}", flush=True)


def _slow_load(server: Server, seconds: float, *, text: str, connections: int) -> Sample:
    return run_load(server, text, connections, seconds)


def _wrk(server: Server, seconds: float, *, scenario: str, connections: int,
         events: int) -> Sample:
    return run_wrk(server, scenario, seconds, connections, events)


def run_wrk_phases(names: list[str], phases: list[str], args: argparse.Namespace,
                   logdir: Path) -> dict[tuple[str, str], Cell]:
    """The slow and cost phases, on servers started once for both."""
    cells: dict[tuple[str, str], Cell] = {}
    servers = [build(name) for name in names]
    try:
        for server in servers:
            start(server, logdir)
            server.scenarios = COST_SCENARIOS
        for server in servers:
            if "slow" in phases:
                check_slow(server, args.slow_ms)
            if "cost" in phases:
                check(server, args.events)
        if "slow" in phases:
            for conns in args.slow_connections:
                measure(servers, cells, f"slow@{conns}", args.rounds,
                        partial(_slow_load, text=f"slow {args.slow_ms}", connections=conns),
                        args.slow_duration)
        if "cost" in phases:
            for scenario in COST_SCENARIOS:
                measure(servers, cells, scenario, args.rounds,
                        partial(_wrk, scenario=scenario, connections=args.connections,
                                events=args.events), args.duration)
    finally:
        for server in servers:
            stop_fast(server)
    return cells


# --------------------------------------------------------------------------- report


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(statistics.median(known)) if known else None


def held_table(held: list[Held]) -> list[str]:
    lines = [f"{'streams':>7} {'server':<13} {'opened':>6} {'open@end':>8} {'open p99 s':>10} "
             f"{'GetTask ok':>11} {'p50 ms':>7} {'p99 ms':>8} {'KiB/stream':>10} "
             f"{'cpu hold':>8} {'cpu idle':>8} {'tick lag p99 ms':>15} {'canceled':>8}"]
    for count, name, cells in _held_groups(held):
        ok = _median([c.get_ok for c in cells])
        sent = _median([c.get_sent for c in cells])
        lines.append(
            f"{count:>7} {name:<13} {_num(_median([c.opened for c in cells]), '.0f'):>6} "
            f"{_num(_median([c.open_at_end for c in cells]), '.0f'):>8} "
            f"{_num(_median([c.open_p99_s for c in cells]), '.2f'):>10} "
            f"{_num(ok, '.0f') + '/' + _num(sent, '.0f'):>11} "
            f"{_num(_median([c.get_p50_ms for c in cells]), '.1f'):>7} "
            f"{_num(_median([c.get_p99_ms for c in cells]), '.1f'):>8} "
            f"{_num(_median([c.rss_per_stream_kib for c in cells]), '.1f'):>10} "
            f"{_num(_median([c.server_cpu_hold for c in cells]), '.0%'):>8} "
            f"{_num(_median([c.idle_cpu_median for c in cells]), '.1%'):>8} "
            f"{_num(_median([c.tick_lag_p99_ms for c in cells]), '.0f'):>15} "
            f"{_num(_median([c.saw_canceled for c in cells]), '.0f'):>8}")
    lines.append("")
    for count, name, cells in _held_groups(held):
        for index, cell in enumerate(cells):
            others = {k: v for k, v in cell.kinds.items() if k != "open"}
            lines.append(f"{count} {name} round {index + 1}: streams at the end of the hold "
                         f"{dict(sorted(cell.kinds.items()))}; GetTask failures "
                         f"{cell.get_failures or 'none'} (stale keep-alive replaced: "
                         f"{cell.get_stale_replaced}); cancel {cell.cancel}; "
                         f"RSS {cell.rss_before_kib} -> {cell.rss_hold_kib} KiB; "
                         f"ticks/stream {_num(cell.ticks_per_stream, '.1f')}; "
                         f"client cpu {cell.client_cpu_hold:.0%}; idle cpu median "
                         f"{_num(cell.idle_cpu_median, '.1%')} mean "
                         f"{_num(cell.idle_cpu_mean, '.1%')}"
                         + (f"; not open: {sum(others.values())}" if others else ""))
            lines.extend(f"  note: {note}" for note in cell.notes)
    return lines


def _held_groups(held: list[Held]) -> list[tuple[int, str, list[Held]]]:
    groups: dict[tuple[int, str], list[Held]] = {}
    for cell in held:
        groups.setdefault((cell.streams, cell.server), []).append(cell)
    return [(count, name, cells) for (count, name), cells in
            sorted(groups.items(), key=lambda item: (item[0][0], SERVERS.index(item[0][1])))]


def _connections(key: str, cost_connections: int) -> int:
    return int(key[5:]) if key.startswith("slow@") else cost_connections


def wrk_table(cells: dict[tuple[str, str], Cell], names: list[str],
              cost_connections: int) -> list[str]:
    lines = [f"{'scenario':<10} {'server':<13} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} "
             f"{'cpu us/req':>10} {'spread':>7} {'errors':>6}"]
    keys = sorted({k for k, _ in cells}, key=_scenario_order)
    for key in keys:
        for name in names:
            cell = cells.get((key, name))
            if not cell or not cell.samples:
                continue
            conns = _connections(key, cost_connections)
            mark = "" if all(s.latency_consistent(conns) for s in cell.samples) else "*"
            lines.append(f"{key:<10} {name:<13} {cell.median('rps'):>8.0f} "
                         f"{cell.median('p50_ms'):>8.2f} {cell.median('p99_ms'):>7.2f}{mark or ' '}"
                         f"{cell.median('server_cpu_us'):>10.0f} {cell.spread():>6.0%} "
                         f"{sum(s.errors for s in cell.samples):>6}")
    if any(not s.latency_consistent(_connections(k, cost_connections))
           for (k, _), c in cells.items() for s in c.samples):
        lines.append("* wrk's latencies break Little's law there (mean > connections / rate): "
                     "not to be trusted; its req/s and the CPU are")
    lines.append("")
    lines.append(f"{'scenario':<10} {'gevent/sdk':>10} {'gthread/sdk':>11} "
                 f"{'gevent/gthread':>14} {'(cpu) gthread/gevent':>20}")
    for key in keys:
        cpu = _ratio(cells, key, "ours-gthread", "ours-gevent", "server_cpu_us")
        lines.append(f"{key:<10} {fmt_ratio(_ratio(cells, key, 'ours-gevent', 'sdk')):>10} "
                     f"{fmt_ratio(_ratio(cells, key, 'ours-gthread', 'sdk')):>11} "
                     f"{fmt_ratio(_ratio(cells, key, 'ours-gevent', 'ours-gthread')):>14} "
                     f"{fmt_ratio(cpu):>20}")
    return lines


def _scenario_order(key: str) -> tuple[int, int]:
    if key.startswith("slow@"):
        return 0, int(key[5:])
    return 1, COST_SCENARIOS.index(key)


def _ratio(cells: dict[tuple[str, str], Cell], key: str, mine: str, theirs: str,
           attr: str = "rps") -> float | None:
    a, b = cells.get((key, mine)), cells.get((key, theirs))
    if not a or not b or not a.samples or not b.samples or not b.median(attr):
        return None
    return a.median(attr) / b.median(attr)


def goals(held: list[Held], cells: dict[tuple[str, str], Cell], default: str) -> list[str]:
    """The targets, each MET / MISSED / n/a."""
    def verdict(ok: bool | None) -> str:
        return "n/a" if ok is None else ("MET" if ok else "MISSED")

    lines = []
    groups = {(count, name): group for count, name, group in _held_groups(held)}
    for name in SERVERS:
        cells_1k = groups.get((1000, name))
        if cells_1k:
            open_end = _median([c.open_at_end for c in cells_1k]) or 0
            p99 = _median([c.get_p99_ms for c in cells_1k])
            failed = max(c.get_sent - c.get_ok for c in cells_1k)
            ok = open_end >= 1000 and p99 is not None and p99 < 100 and failed == 0
            lines.append(f"goal 1,000 held streams, GetTask p99 < 100 ms [{name}]: "
                         f"{open_end:.0f} open, p99 {_num(p99, '.1f')} ms, "
                         f"{failed} GetTask failed: {verdict(ok)}")
        cells_10k = groups.get((10000, name))
        if cells_10k:
            open_end = _median([c.open_at_end for c in cells_10k]) or 0
            p99 = _median([c.get_p99_ms for c in cells_10k])
            kib = _median([c.rss_per_stream_kib for c in cells_10k])
            cpu = _median([c.idle_cpu_median for c in cells_10k])
            ok = (open_end >= 10000 and p99 is not None and p99 < 100 and kib is not None
                  and kib <= 15 and cpu is not None and cpu < 0.05)
            lines.append(f"goal 10,000 held streams, GetTask p99 < 100 ms, <= 15 KiB/stream, "
                         f"idle cpu < 5% [{name}]: {open_end:.0f} open, p99 "
                         f"{_num(p99, '.1f')} ms, {_num(kib, '.1f')} KiB/stream, idle cpu "
                         f"{_num(cpu, '.1%')}: {verdict(ok)}")
        cells_5k = groups.get((5000, name))
        if cells_5k:
            open_end = _median([c.open_at_end for c in cells_5k]) or 0
            lines.append(f"goal 5,000 held streams [{name}]: {open_end:.0f} open: "
                         f"{verdict(open_end >= 5000)}")
    slow = _ratio(cells, "slow@256", f"ours-{default}", "sdk")
    lines.append(f"goal slow agent @256 ours-{default} >= sdk req/s: {fmt_ratio(slow)} "
                 f"{verdict(None if slow is None else slow >= 1.0)}")
    for key in COST_SCENARIOS:
        got = _ratio(cells, key, f"ours-{default}", "sdk")
        lines.append(f"goal {key} under the default a2a serve ({default}) >= 3x sdk: "
                     f"{fmt_ratio(got)} {verdict(None if got is None else got >= 3.0)}")
    return lines


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--streams", default="1000,5000", help="held streams per cell")
    parser.add_argument("--hold", type=float, default=60.0, help="seconds the streams are held")
    parser.add_argument("--tick", type=float, default=10.0,
                        help="seconds between the held task's WORKING updates")
    parser.add_argument("--open-rate", type=float, default=1000.0,
                        help="stream connects started per second")
    parser.add_argument("--open-timeout", type=float, default=30.0,
                        help="seconds after the last connect to wait for streams to open")
    parser.add_argument("--probe-rate", type=float, default=20.0, help="GetTask per second")
    parser.add_argument("--probe-timeout", type=float, default=5.0,
                        help="seconds before a GetTask counts as failed")
    parser.add_argument("--idle", type=float, default=10.0,
                        help="seconds of only holding (no GetTask) before the hold, CPU "
                             "sampled each second")
    parser.add_argument("--hold-rounds", type=int, default=2, help="held cells per server and N")
    parser.add_argument("--rounds", type=int, default=3, help="wrk runs per cell (median)")
    parser.add_argument("--slow-ms", type=int, default=50)
    parser.add_argument("--slow-connections", default="64,256")
    parser.add_argument("--slow-duration", type=float, default=10.0)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per cost wrk run")
    parser.add_argument("--connections", type=int, default=16, help="cost phase connections")
    parser.add_argument("--events", type=int, default=10, help="artifact chunks per stream")
    parser.add_argument("--quick", action="store_true",
                        help="300 streams held 8 s, 1 round of 2 s runs: a smoke run")
    parser.add_argument("--json", type=Path, help="write the raw results here")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--load", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.streams, args.hold, args.tick, args.open_timeout = "300", 8.0, 3.0, 5.0
        args.idle = 3.0
        args.hold_rounds, args.rounds, args.duration, args.slow_duration = 1, 1, 2.0, 4.0
    args.stream_counts = [int(n) for n in str(args.streams).split(",") if n]
    args.slow_connections = [int(n) for n in str(args.slow_connections).split(",") if n]
    return args


def preflight(names: list[str], phases: list[str]) -> None:
    if {"slow", "cost"} & set(phases) and shutil.which("wrk") is None:
        raise SystemExit("wrk not found: apt-get install wrk (see benchmarks/README.md)")
    if "sdk" in names and not (SDK_VENV / "bin" / "python").exists():
        raise SystemExit(f"no a2a-sdk venv at {SDK_VENV}: see benchmarks/README.md "
                         "(or pass --servers ours-gevent,ours-gthread)")


async def run_held(names: list[str], args: argparse.Namespace, logdir: Path) -> list[Held]:
    held = []
    for count in args.stream_counts:
        for order in rotations(names, args.hold_rounds):
            for name in order:
                cell = await held_cell(name, count, args, logdir)
                held.append(cell)
                print(f"  held {count:<5} {name:<13} opened {cell.opened} open@end "
                      f"{cell.open_at_end} GetTask {cell.get_ok}/{cell.get_sent} "
                      f"p99 {_num(cell.get_p99_ms, '.1f')} ms RSS/stream "
                      f"{_num(cell.rss_per_stream_kib, '.1f')} KiB cpu "
                      f"{cell.server_cpu_hold:.0%} idle {_num(cell.idle_cpu_median, '.1%')} "
                      f"{dict(cell.kinds)}", flush=True)
    return held


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.probe:
        port, task_id, rate, seconds, timeout = json.loads(args.probe)
        raise_nofile()
        print(json.dumps(asyncio.run(probe(port, task_id, rate, seconds, timeout))))
        return 0
    if args.load:
        _fast_loop()
        print(json.dumps(asyncio.run(LoadRun(*json.loads(args.load)).run())))
        return 0
    names = [n for n in args.servers.split(",") if n]
    phases = [p for p in args.phases.split(",") if p]
    preflight(names, phases)
    limit = raise_nofile()
    from a2a_wsgi._serve import default_worker_class

    default = default_worker_class()
    print(f"cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} nofile={limit} "
          f"a2a serve default worker={default}", flush=True)
    for name in names:
        print(f"  {name}: {settings_of(name)}", flush=True)
    logdir = Path(tempfile.mkdtemp(prefix="a2a-streams-"))
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    held: list[Held] = []
    cells: dict[tuple[str, str], Cell] = {}
    try:
        if "slow" in phases or "cost" in phases:
            cells = run_wrk_phases(names, phases, args, logdir)
        if "held" in phases:
            held = asyncio.run(run_held(names, args, logdir))
        print(f"\nload at the end={os.getloadavg()[0]:.2f}")
        if held:
            print(f"\nheld streams: hold {args.hold:g} s, tick every {args.tick:g} s, "
                  f"GetTask {args.probe_rate:g}/s (timeout {args.probe_timeout:g} s), "
                  f"connects {args.open_rate:g}/s")
            print("\n".join(held_table(held)))
        if cells:
            print(f"\nslow = SendMessage 'slow {args.slow_ms}' (blocking, the agent waits "
                  f"{args.slow_ms} ms); cost = {args.connections} connections, stream = "
                  f"{args.events + 3} SSE events")
            print("\n".join(wrk_table(cells, names, args.connections)))
        print()
        print("\n".join(goals(held, cells, default)))
        if args.json:
            args.json.write_text(json.dumps({
                "held": [asdict(cell) for cell in held],
                "wrk": {f"{k[0]}/{k[1]}": [vars(s) for s in c.samples]
                        for k, c in cells.items()},
            }, indent=1))
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
