"""Held gRPC streams: N open SubscribeToTask streams on one server process, and GetTask.

    .venv/bin/python benchmarks/grpc_streams.py                       # 1,000 streams, 60 s
    .venv/bin/python benchmarks/grpc_streams.py --streams 2000 --hold 30

The server is what ``a2a serve --grpc`` starts, ``python -m a2a_wsgi.grpc
benchmarks.apps.ours:app`` on a SQLite file in a temporary directory, with its default
settings unless ``--server-arg`` adds some (``--server-arg=--max-streams=500``). One task is
sent ``hold S`` (WORKING, a status update every S = ``--tick`` seconds, so the streams see
traffic), then ``--streams`` SubscribeToTask streams are opened on it from this process
(grpc.aio, spread over ``--channels`` HTTP/2 connections) and held ``--hold`` seconds while
a second process sends GetTask at ``--probe-rate`` per second (its latencies do not wait on
this process's event loop). Then the task is canceled and every stream must end CANCELED.

Reported: streams opened, refused and still open at the end of the hold; GetTask p50/p99
and failures; the server's threads, RSS (and RSS per held stream) and CPU (share of one
core) while holding; its CPU over ``--idle`` seconds with nothing but the held streams;
the load average at each step. The exit status is 1 when the target misses: every stream
held, GetTask p99 < 100 ms, no GetTask failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402  (the checkout's root must be on the path first)

from a2a_core._grpc import message_class  # noqa: E402
from benchmarks.grpc_run import (  # noqa: E402
    GrpcServer,
    cpu_seconds,
    load_average,
    proc_status,
    start,
    stop,
)

SERVICE = "/lf.a2a.v1.A2AService/"
_Send = message_class("lf.a2a.v1.SendMessageRequest")
_SendAnswer = message_class("lf.a2a.v1.SendMessageResponse")
_Get = message_class("lf.a2a.v1.GetTaskRequest")
_Task = message_class("lf.a2a.v1.Task")
_Subscribe = message_class("lf.a2a.v1.SubscribeToTaskRequest")
_Event = message_class("lf.a2a.v1.StreamResponse")
_Cancel = message_class("lf.a2a.v1.CancelTaskRequest")
WORKING, CANCELED = 2, 5
TARGET_P99_MS = 100.0


def hold_task(target: str, tick: float) -> str:
    """Send ``hold S`` without waiting; the task's id once it is WORKING."""
    request = _Send()
    request.message.message_id = f"hold-{time.time_ns()}"
    request.message.role = 1
    request.message.parts.add().text = f"hold {tick:g}"
    request.configuration.return_immediately = True
    with grpc.insecure_channel(target) as channel:
        answer = _SendAnswer.FromString(channel.unary_unary(SERVICE + "SendMessage")(
            request.SerializeToString(), timeout=30))
        task_id = answer.task.id
        get = channel.unary_unary(SERVICE + "GetTask")
        deadline = time.monotonic() + 30
        while _Task.FromString(get(_Get(id=task_id).SerializeToString(), timeout=30)
                               ).status.state != WORKING:
            if time.monotonic() > deadline:
                raise RuntimeError("the hold task never reached WORKING")
            time.sleep(0.05)
    return task_id


def cancel(target: str, task_id: str) -> None:
    with grpc.insecure_channel(target) as channel:
        channel.unary_unary(SERVICE + "CancelTask")(
            _Cancel(id=task_id).SerializeToString(), timeout=30)


class Fleet:
    """The held streams: how far each got, and how it ended."""

    def __init__(self, target: str, task_id: str, count: int, channels: int) -> None:
        self.target, self.task_id, self.count = target, task_id, count
        self.channels = [grpc.aio.insecure_channel(
            target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(channels)]
        self.opened = 0
        self.open = 0
        self.events = 0
        self.ends: dict[str, int] = {}
        self.tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        request = _Subscribe(id=self.task_id).SerializeToString()
        for index in range(self.count):
            channel = self.channels[index % len(self.channels)]
            self.tasks.append(asyncio.ensure_future(self._one(channel, request)))

    async def _one(self, channel: grpc.aio.Channel, request: bytes) -> None:
        call = channel.unary_stream(SERVICE + "SubscribeToTask")(request)
        last = None
        first = True
        try:
            async for raw in call:
                self.events += 1
                if first:
                    self.opened += 1
                    self.open += 1
                    first = False
                event = _Event.FromString(raw)
                if event.HasField("status_update"):
                    last = event.status_update.status.state
            end = "canceled" if last == CANCELED else f"ended in state {last}"
        except grpc.aio.AioRpcError as exc:
            end = f"{exc.code().name}: {exc.details()}"
        if not first:
            self.open -= 1
        self.ends[end] = self.ends.get(end, 0) + 1

    async def wait_opened(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.opened + sum(self.ends.values()) < self.count \
                and time.monotonic() < deadline:
            await asyncio.sleep(0.1)

    async def wait_ended(self, timeout: float) -> None:
        await asyncio.wait(self.tasks, timeout=timeout)
        for task in self.tasks:
            task.cancel()
        for channel in self.channels:
            await channel.close()


def probe(target: str, task_id: str, rate: float, seconds: float) -> dict[str, Any]:
    """GetTask every 1/rate s for ``seconds`` (runs as a process of its own)."""
    latencies, failures = [], 0
    request = _Get(id=task_id).SerializeToString()
    with grpc.insecure_channel(target) as channel:
        get = channel.unary_unary(SERVICE + "GetTask")
        get(request, timeout=30)
        began = time.monotonic()
        for index in range(int(rate * seconds)):
            due = began + index / rate
            time.sleep(max(0.0, due - time.monotonic()))
            sent = time.perf_counter()
            try:
                get(request, timeout=10)
                latencies.append((time.perf_counter() - sent) * 1000)
            except grpc.RpcError:
                failures += 1
    return {"latencies_ms": latencies, "failures": failures}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def run(server: GrpcServer, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"streams": args.streams, "load_start": load_average()}
    base = proc_status(server.pid)
    task_id = hold_task(server.target, args.tick)
    fleet = Fleet(server.target, task_id, args.streams, args.channels)
    opening = time.monotonic()
    fleet.start()
    await fleet.wait_opened(args.open_timeout)
    result["open_seconds"] = round(time.monotonic() - opening, 2)
    await asyncio.sleep(2)  # the threads settle
    result["opened"] = fleet.opened
    result["refused_at_open"] = dict(fleet.ends)
    held = proc_status(server.pid)
    result["threads_before"], result["threads_held"] = base["Threads"], held["Threads"]
    result["rss_before_mib"] = round(base["VmRSS"] / 1024, 1)
    # idle: only the held streams (and their ticks)
    result["load_idle"] = load_average()
    cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
    await asyncio.sleep(args.idle)
    result["cpu_idle"] = round((cpu_seconds(server.pid) - cpu0) / (time.monotonic() - t0), 3)
    # hold with the GetTask probe in another process
    result["load_hold"] = load_average()
    cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--probe", json.dumps(
            [server.target, task_id, args.probe_rate, args.hold]),
        stdout=subprocess.PIPE, cwd=ROOT)
    rss = []
    while proc.returncode is None:
        rss.append(proc_status(server.pid)["VmRSS"])
        try:
            await asyncio.wait_for(proc.wait(), timeout=max(1.0, args.hold / 10))
        except asyncio.TimeoutError:
            pass
    assert proc.stdout is not None
    probed = json.loads(await proc.stdout.read())
    result["cpu_hold"] = round((cpu_seconds(server.pid) - cpu0) / (time.monotonic() - t0), 3)
    result["load_end"] = load_average()
    result["rss_held_mib"] = round(statistics.median(rss) / 1024, 1)
    result["rss_per_stream_kib"] = round(
        (statistics.median(rss) - base["VmRSS"]) / max(fleet.open, 1), 1)
    result["open_at_end"] = fleet.open
    latencies = probed["latencies_ms"]
    result.update(gettask_count=len(latencies), gettask_failures=probed["failures"],
                  gettask_p50_ms=round(pct(latencies, 0.5), 2),
                  gettask_p99_ms=round(pct(latencies, 0.99), 2),
                  gettask_max_ms=round(max(latencies, default=float("nan")), 2))
    cancel(server.target, task_id)
    await fleet.wait_ended(30)
    result["ends"] = dict(fleet.ends)
    result["threads_after"] = proc_status(server.pid)["Threads"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=60.0, help="seconds the probe runs")
    parser.add_argument("--idle", type=float, default=10.0,
                        help="seconds of holding alone, for the idle CPU")
    parser.add_argument("--tick", type=float, default=10.0,
                        help="seconds between the task's status updates")
    parser.add_argument("--channels", type=int, default=10, help="HTTP/2 connections")
    parser.add_argument("--probe-rate", type=float, default=20.0, help="GetTask per second")
    parser.add_argument("--open-timeout", type=float, default=60.0)
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an option for python -m a2a_wsgi.grpc (repeatable)")
    parser.add_argument("--json", type=Path, help="write the result here")
    parser.add_argument("--log", type=Path, help="copy the server's stderr here")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(*json.loads(args.probe))))
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    server = GrpcServer("ours-grpc", [sys.executable, "-m", "a2a_wsgi.grpc",
                                      "benchmarks.apps.ours:app", "--bind", "127.0.0.1:0",
                                      *args.server_arg], {"BENCH_STORE": "sqlite"})
    with tempfile.TemporaryDirectory(prefix="a2a-grpc-streams-") as folder:
        try:
            start(server, Path(folder))
            result = asyncio.run(run(server, args))
        finally:
            stop(server)
            if args.log:
                args.log.write_bytes((Path(folder) / f"{server.name}.log").read_bytes())
    for key, value in result.items():
        print(f"{key:>20}: {value}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    met = (result["open_at_end"] == args.streams and result["gettask_failures"] == 0
           and result["gettask_p99_ms"] < TARGET_P99_MS)
    print(f"target: {args.streams} held, GetTask p99 < {TARGET_P99_MS:g} ms, none failed: "
          f"{'MET' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
