"""Blocking SendMessage over gRPC: our server against the official SDK's and a bare one.

    .venv/bin/python benchmarks/grpc_run.py                  # 5 rounds x 5 s per server
    .venv/bin/python benchmarks/grpc_run.py --quick          # 1 round x 2 s, a smoke run

Servers, one process each, started once and measured interleaved (each round visits every
server, the order rotating between rounds, so noise from elsewhere on the machine lands on
all of them alike):

* ``ours``        benchmarks/apps/grpc_ours.py: benchmarks/apps/ours.py's echo agent over
                  ``serve_grpc`` (the sync grpcio server, ``DEFAULT_MAX_WORKERS`` threads),
                  memory store;
* ``ours-sqlite`` ``python -m a2a_wsgi.grpc benchmarks.apps.ours:app``, what ``a2a serve
                  --grpc`` starts, on a SQLite file (``--servers`` adds it; not by default);
* ``sdk``         benchmarks/apps/grpc_sdk.py: the same agent on the official a2a-sdk's
                  ``GrpcHandler`` (``grpc.aio``), ``InMemoryTaskStore``, from benchmarks/.venv-sdk;
* ``bare``        benchmarks/apps/grpc_bare.py: grpcio answering a Task built directly as a
                  message; nothing validated or stored (the ceiling).

The load is this process: ``--connections`` concurrent calls (grpc.aio, one channel) in a
closed loop for ``--duration`` seconds, each a SendMessage with a fresh ``messageId``,
request bytes made here and answers left as bytes (so the client's cost stays small). Each
server is first checked by hand (a COMPLETED task echoing the text). Reported per cell
(median of the rounds): calls/s, p50/p99 latency, the server's CPU per call (utime+stime
from /proc: steadier than calls/s on a shared machine), and the load average at the start.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402  (the checkout's root must be on the path first)

from a2a_core._grpc import message_class  # noqa: E402

SDK_VENV = Path(os.environ.get("BENCH_SDK_VENV", HERE / ".venv-sdk"))
SEND = "/lf.a2a.v1.A2AService/SendMessage"
SERVERS = ("ours", "sdk", "bare")
CLK_TCK = os.sysconf("SC_CLK_TCK")
_REQUEST = message_class("lf.a2a.v1.SendMessageRequest")
_RESPONSE = message_class("lf.a2a.v1.SendMessageResponse")
_COMPLETED = 3


@dataclass
class GrpcServer:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[str] | None = None
    port: int = 0

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


def server_argv(name: str, *, max_workers: int | None = None) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that start ``name`` on a free port (it prints it)."""
    workers = [] if max_workers is None else ["--max-workers", str(max_workers)]
    if name == "ours":
        return [sys.executable, "-m", "benchmarks.apps.grpc_ours", *workers], {}
    if name == "ours-sqlite":
        return ([sys.executable, "-m", "a2a_wsgi.grpc", "benchmarks.apps.ours:app",
                 "--bind", "127.0.0.1:0", *workers], {"BENCH_STORE": "sqlite"})
    if name == "sdk":
        return [str(SDK_VENV / "bin" / "python"), "-m", "benchmarks.apps.grpc_sdk"], {}
    if name == "bare":
        return [sys.executable, "-m", "benchmarks.apps.grpc_bare"], {}
    raise ValueError(name)


def start(server: GrpcServer, tmp: Path, timeout: float = 60.0) -> None:
    """Start ``server`` in a session of its own and wait for its port."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **server.env}
    if server.env.get("BENCH_STORE") == "sqlite":
        env["BENCH_STORE_URL"] = f"sqlite:///{tmp / (server.name + '.sqlite3')}"
    log = open(tmp / f"{server.name}.log", "w")  # noqa: SIM115  (closed with the process)
    server.proc = subprocess.Popen(server.argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                   stderr=log, text=True, start_new_session=True)
    assert server.proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = server.proc.stdout.readline()
        if not line:
            break
        words = line.split()
        if words[:1] == ["LISTENING"]:
            server.port = int(words[1])
            return
        if line.startswith("a2a: serving gRPC on "):
            server.port = int(line.rsplit(":", 1)[1])
            return
    raise RuntimeError(f"{server.name} did not start: see {tmp / (server.name + '.log')}")


def stop(server: GrpcServer) -> None:
    if server.proc is None or server.proc.poll() is not None:
        return
    os.killpg(server.proc.pid, signal.SIGTERM)
    try:
        server.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(server.proc.pid, signal.SIGKILL)
        server.proc.wait()


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_status(pid: int) -> dict[str, int]:
    """Threads and VmRSS (KiB) of one process."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Threads", "VmRSS"):
            found[key] = int(value.split()[0])
    return found


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


_serial = itertools.count()
_prefix = f"m{os.getpid()}-{time.time_ns()}-"


def send_request(text: str = "hello") -> bytes:
    """A blocking SendMessage with a fresh messageId, serialized."""
    request = _REQUEST()
    message = request.message
    message.message_id = f"{_prefix}{next(_serial)}"
    message.role = 1  # ROLE_USER
    message.parts.add().text = text
    return bytes(request.SerializeToString())


def check(server: GrpcServer) -> None:
    """By hand: one send answers a COMPLETED task that echoes the text."""
    with grpc.insecure_channel(server.target) as channel:
        call = channel.unary_unary(SEND)
        answer = _RESPONSE.FromString(call(send_request("checked"), timeout=30))
    task = answer.task
    texts = [part.text for artifact in task.artifacts for part in artifact.parts]
    if task.status.state != _COMPLETED or texts != ["checked"]:
        raise RuntimeError(f"{server.name} answered {answer}")


@dataclass
class Sample:
    server: str
    calls: int
    errors: int
    seconds: float
    latencies_ms: list[float]
    server_cpu: float
    load: str

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    @property
    def cpu_us(self) -> float:
        return self.server_cpu / max(self.calls, 1) * 1e6

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def closed_loop(target: str, connections: int, seconds: float
                      ) -> tuple[int, int, list[float], float]:
    """``connections`` calls in flight for ``seconds``; (answered, failed, latencies, span)."""
    latencies: list[float] = []
    errors = 0
    async with grpc.aio.insecure_channel(target) as channel:
        call = channel.unary_unary(SEND)
        await call(send_request("warm"), timeout=30)
        began = time.perf_counter()
        until = began + seconds

        async def worker() -> None:
            nonlocal errors
            while True:
                sent = time.perf_counter()
                if sent >= until:
                    return
                try:
                    await call(send_request(), timeout=30)
                except grpc.aio.AioRpcError:
                    errors += 1
                    continue
                latencies.append((time.perf_counter() - sent) * 1000)

        await asyncio.gather(*(worker() for _ in range(connections)))
        span = time.perf_counter() - began
    return len(latencies), errors, latencies, span


def measure(server: GrpcServer, connections: int, seconds: float) -> Sample:
    load = load_average()
    before = cpu_seconds(server.pid)
    calls, errors, latencies, span = asyncio.run(closed_loop(server.target, connections, seconds))
    used = cpu_seconds(server.pid) - before
    return Sample(server.name, calls, errors, span, latencies, used, load)


def rotations(names: list[str], rounds: int) -> Iterator[list[str]]:
    for index in range(rounds):
        shift = index % len(names)
        yield names[shift:] + names[:shift]


def report(samples: list[Sample], names: list[str]) -> None:
    print(f"\n{'server':<12} {'calls/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'cpu us/call':>11} "
          f"{'spread':>7} {'errors':>6}  load averages at start")
    medians: dict[str, tuple[float, float]] = {}
    for name in names:
        mine = [s for s in samples if s.server == name]
        rates = [s.rate for s in mine]
        rate = statistics.median(rates)
        cpu = statistics.median(s.cpu_us for s in mine)
        medians[name] = (rate, cpu)
        spread = (max(rates) - min(rates)) / rate if rate else 0.0
        p50 = statistics.median(s.pct(0.50) for s in mine)
        p99 = statistics.median(s.pct(0.99) for s in mine)
        print(f"{name:<12} {rate:>8.0f} {p50:>8.2f} {p99:>8.2f} {cpu:>11.0f} {spread:>6.0%} "
              f"{sum(s.errors for s in mine):>6}  {' | '.join(s.load for s in mine)}")
    print()
    for other in names:
        if other == "ours" or "ours" not in medians:
            continue
        rate, cpu = medians["ours"]
        their_rate, their_cpu = medians[other]
        print(f"ours/{other}: {rate / their_rate:.2f}x by calls/s, "
              f"{their_cpu / cpu:.2f}x by server CPU per call")
    if "sdk" in medians and "ours" in medians:
        ratio = medians["ours"][0] / medians["sdk"][0]
        print(f"target ours/sdk >= 3.0x: {ratio:.2f}x {'MET' if ratio >= 3 else 'MISSED'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="1 round of 2 s")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.duration = 1, 2.0
    names = [n for n in args.servers.split(",") if n]
    if "sdk" in names and not (SDK_VENV / "bin" / "python").exists():
        print(f"no SDK venv at {SDK_VENV} (benchmarks/README.md); run with --servers ours,bare",
              file=sys.stderr)
        return 2
    servers = []
    for name in names:
        argv_, env = server_argv(name)
        servers.append(GrpcServer(name, argv_, env))
    samples: list[Sample] = []
    with tempfile.TemporaryDirectory(prefix="a2a-grpc-bench-") as folder:
        tmp = Path(folder)
        try:
            for server in servers:
                start(server, tmp)
                check(server)
            by_name = {s.name: s for s in servers}
            for round_names in rotations(names, args.rounds):
                for name in round_names:
                    sample = measure(by_name[name], args.connections, args.duration)
                    samples.append(sample)
                    print(f"{name:<12} {sample.rate:8.0f} calls/s  p50 {sample.pct(0.5):6.2f} ms"
                          f"  p99 {sample.pct(0.99):7.2f} ms  {sample.cpu_us:6.0f} us/call"
                          f"  load {sample.load}", flush=True)
            for server in servers:
                status = proc_status(server.pid)
                print(f"{server.name}: {status.get('Threads')} threads, "
                      f"RSS {status.get('VmRSS', 0) / 1024:.1f} MiB at the end")
        finally:
            for server in servers:
                stop(server)
    report(samples, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
