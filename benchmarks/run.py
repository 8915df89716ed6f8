"""Run every benchmark in one go and print one table.

    .venv/bin/python benchmarks/run.py                 # ~4 minutes: 3 rounds x 5 s per cell
    .venv/bin/python benchmarks/run.py --quick         # 1 round x 2 s, a smoke run
    .venv/bin/python benchmarks/run.py --json out.json # also write the raw numbers

Three servers on the same worker count, started once and measured
interleaved (each round visits every server for a scenario before moving
on, and the server order rotates between rounds, so a burst of noise from
elsewhere on the machine lands on all of them alike):

* ``ours``   benchmarks/apps/ours.py (the examples/echo.py agent) served by ``a2a serve``
             itself, so with its settings (a2a_wsgi._serve.gunicorn_settings) for the worker
             class ``--worker-class`` names (default: ``a2a serve``'s, gevent when installed);
* ``sdk``    the official a2a-sdk, same agent, on uvicorn (uvloop + httptools), from
             benchmarks/.venv-sdk (see README.md for how to create it);
* ``bare``   benchmarks/apps/bare.py, a bare WSGI JSON app served the same way.

Blocking send is also measured on our durable stores (``ours-sqlite``,
``ours-postgres``) when this checkout has them and, for PostgreSQL, when a
server answers on 127.0.0.1:5432.

The load generator is wrk (one thread, C, epoll). Every process started here
runs in its own session and is killed by process group on exit.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["main"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LUA = HERE / "bench.lua"
SDK_VENV = Path(os.environ.get("BENCH_SDK_VENV", HERE / ".venv-sdk"))
CARD_PATH = "/.well-known/agent-card.json"
SCENARIOS = ("card", "card304", "send", "stream")
MAIN_SERVERS = ("ours", "sdk", "bare")
#: Targets as (scenario, against, minimum ratio ours/against).
TARGETS = (("send", "sdk", 5.0), ("send", "bare", 0.5),
           ("card", "bare", 0.9), ("card304", "bare", 0.9), ("stream", "sdk", 5.0))
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- servers


@dataclass
class Server:
    """One server under test: how to start it, and its process once started."""

    name: str
    argv: list[str]
    env: dict[str, str]
    port: int
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    etag: str = ""
    scenarios: tuple[str, ...] = SCENARIOS

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def free_port() -> int:
    """An ephemeral port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def default_worker_class() -> str:
    """The worker class ``a2a serve`` picks by default here (gevent when it is installed)."""
    sys.path.insert(0, str(ROOT))
    from a2a_wsgi._serve import default_worker_class as chosen

    return chosen()


def serve_settings(worker_class: str, workers: int) -> dict[str, object]:
    """The gunicorn settings ``a2a serve -k worker_class -w workers`` runs with."""
    sys.path.insert(0, str(ROOT))
    from a2a_wsgi._serve import gunicorn_settings

    return gunicorn_settings(worker_class, workers=workers)


def gunicorn_argv(target: str, port: int, workers: int,
                  worker_class: str | None = None) -> list[str]:
    """``a2a serve`` itself (so exactly its settings and hooks), on ``port``.

    Under gevent it re-executes itself patched before importing anything, as in
    production; the process keeps its pid, so the process group is still ours.
    """
    chosen = worker_class or default_worker_class()
    return [sys.executable, "-m", "a2a_wsgi._cli", "serve", target,
            "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
            "--worker-class", chosen, "--log-level", "warning"]


def uvicorn_argv(port: int, workers: int) -> list[str]:
    """uvicorn in its fastest standard setup (uvloop, httptools), no access log."""
    return [str(SDK_VENV / "bin" / "python"), "-m", "uvicorn", "benchmarks.apps.sdk:app",
            "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
            "--loop", "uvloop", "--http", "httptools", "--no-access-log",
            "--log-level", "warning"]


def start(server: Server, logdir: Path) -> None:
    """Start ``server`` in its own session and wait until its card answers."""
    env = {**os.environ, "A2A_BASE_URL": server.url + "/", "PYTHONPATH": str(ROOT),
           **server.env}
    server.log = logdir / f"{server.name}.log"
    with open(server.log, "wb") as log:
        server.proc = subprocess.Popen(server.argv, cwd=ROOT, env=env, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.name} exited at start:\n{server.log.read_text()}")
        try:
            with urllib.request.urlopen(server.url + CARD_PATH, timeout=1) as resp:
                server.etag = resp.headers.get("ETag", "")
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.1)
    raise RuntimeError(f"{server.name} did not answer within 30 s:\n{server.log.read_text()}")


def stop(server: Server) -> None:
    """SIGTERM the server's process group, then SIGKILL what is left after 10 s."""
    proc = server.proc
    if proc is None:
        return
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    _reap_group(proc.pid)
    server.proc = None


def _reap_group(pgid: int) -> None:
    """Kill any straggler still in the group (a worker whose master died first)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU of every live process in a process group (master and workers)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()
        if int(fields[2]) == pgid:  # field 5, pgrp
            total += int(fields[11]) + int(fields[12])  # fields 14, 15: utime, stime
    return total / CLK_TCK


# --------------------------------------------------------------------------- checks


def _post(url: str, method: str, text: str, accept: str = "application/json") -> tuple[int, str]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": {
        "messageId": f"probe-{time.monotonic_ns()}", "role": "ROLE_USER",
        "parts": [{"text": text}]}}}).encode()
    request = urllib.request.Request(url + "/", data=body, headers={
        "Content-Type": "application/json", "A2A-Version": "1.0", "Accept": accept})
    with urllib.request.urlopen(request, timeout=10) as resp:
        return resp.status, resp.read().decode()


def check(server: Server, events: int) -> dict[str, int]:
    """Each scenario once by hand: a server that answers wrongly must not be timed.

    Returns the response size of each scenario (bytes of body), for the table's notes.
    """
    sizes: dict[str, int] = {}
    if "card" in server.scenarios:
        with urllib.request.urlopen(server.url + CARD_PATH, timeout=10) as resp:
            raw = resp.read()
            assert json.loads(raw)["name"] == "Echo Agent", raw
            sizes["card"] = len(raw)
    if "card304" in server.scenarios:
        assert server.etag, f"{server.name}: card without ETag"
        request = urllib.request.Request(server.url + CARD_PATH,
                                         headers={"If-None-Match": server.etag})
        try:
            urllib.request.urlopen(request, timeout=10)
            raise AssertionError(f"{server.name}: If-None-Match did not give 304")
        except urllib.error.HTTPError as exc:
            assert exc.code == 304, exc.code
        sizes["card304"] = 0
    if "send" in server.scenarios:
        status, text = _post(server.url, "SendMessage", "hello")
        task = json.loads(text)["result"]["task"]
        assert status == 200 and task["status"]["state"] == "TASK_STATE_COMPLETED", text
        assert task["artifacts"][0]["parts"][0]["text"] == "hello", text
        sizes["send"] = len(text)
    if "stream" in server.scenarios:
        status, text = _post(server.url, "SendStreamingMessage", f"stream {events}",
                             accept="text/event-stream")
        data = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
        assert len(data) == events + 3, (server.name, len(data))
        final = data[-1]["result"]["statusUpdate"]["status"]["state"]
        assert final == "TASK_STATE_COMPLETED", data[-1]
        assert sum("artifactUpdate" in d["result"] for d in data) == events
        sizes["stream"] = len(text)
    return sizes


# --------------------------------------------------------------------------- load


@dataclass
class Sample:
    """One wrk run against one server for one scenario."""

    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    server_cpu_us: float  # server CPU per request
    wrk_cpu: float  # share of one core wrk used
    mean_ms: float = 0.0  # the load generator's mean latency

    def latency_consistent(self, connections: int) -> bool:
        """Little's law: with at most ``connections`` requests outstanding the mean latency
        cannot exceed connections / rate. wrk 4.1 breaks it against gunicorn's gevent
        worker (strace of such a run shows the real, lower latencies), so its p50/p99
        there are not to be trusted; its request counts are (they match the server's log).
        """
        return not self.rps or self.mean_ms <= 1.25 * connections / self.rps * 1000


@dataclass
class Cell:
    samples: list[Sample] = field(default_factory=list)

    def median(self, attr: str) -> float:
        return float(statistics.median(getattr(s, attr) for s in self.samples))

    def spread(self) -> float:
        """(max - min) / median of requests/s across rounds: how noisy this cell was."""
        values = [s.rps for s in self.samples]
        mid = statistics.median(values)
        return (max(values) - min(values)) / mid if mid else 0.0


def run_wrk(server: Server, scenario: str, seconds: float, connections: int,
            events: int) -> Sample:
    """One wrk run; the server's CPU and wrk's own CPU are measured around it."""
    env = {**os.environ, "BENCH_MODE": scenario, "BENCH_ETAG": server.etag,
           "BENCH_N": str(events), "BENCH_SEED": f"{os.getpid()}-{time.time_ns()}"}
    assert server.proc is not None
    cpu_before = group_cpu_seconds(server.proc.pid)
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s",
                          "--timeout", "10s", "-s", str(LUA), server.url + "/"],
                         env=env, capture_output=True, text=True, timeout=seconds + 60)
    wall = time.monotonic() - started
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_after = group_cpu_seconds(server.proc.pid)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("BENCH_RESULT ")), None)
    if line is None:
        raise RuntimeError(f"wrk gave no result for {server.name}/{scenario}:\n"
                           f"{out.stdout}\n{out.stderr}")
    raw = json.loads(line.split(" ", 1)[1])
    requests = max(raw["requests"], 1)
    errors = sum(raw[k] for k in raw if k.startswith("err_"))
    wrk_cpu = ((usage_after.ru_utime - usage_before.ru_utime)
               + (usage_after.ru_stime - usage_before.ru_stime))
    return Sample(rps=raw["requests"] / (raw["duration_us"] / 1e6),
                  p50_ms=raw["p50_us"] / 1000, p99_ms=raw["p99_us"] / 1000, errors=errors,
                  server_cpu_us=(cpu_after - cpu_before) / requests * 1e6,
                  wrk_cpu=wrk_cpu / wall, mean_ms=raw["mean_us"] / 1000)


def rotations(names: list[str], rounds: int) -> Iterator[list[str]]:
    """The server order for each round, rotated so no server always goes first."""
    for index in range(rounds):
        shift = index % len(names)
        yield names[shift:] + names[:shift]


# --------------------------------------------------------------------------- stores


def postgres_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


def _psql(sql: str) -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", os.environ.get("BENCH_PG_USER", "postgres"),
                    "-d", "test", "-v", "ON_ERROR_STOP=1", "-q", "-c", sql],
                   check=True, capture_output=True, timeout=30)


def store_servers(stores: list[str], workers: int, tmp: Path,
                  worker_class: str | None = None) -> tuple[list[Server], list[str]]:
    """Servers for the durable stores this checkout has, and notes on those skipped."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.apps.stores import store_available

    servers, notes = [], []
    for kind in stores:
        if not store_available(kind):
            notes.append(f"{kind}: store not in this checkout yet (TODO, see README)")
            continue
        env = {"BENCH_STORE": kind}
        if kind == "sqlite":
            env["BENCH_STORE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
        if kind == "postgres":
            if not postgres_up():
                notes.append("postgres: nothing listens on 127.0.0.1:5432, skipped")
                continue
            schema = f"a2a_bench_{os.getpid()}"
            env["BENCH_PG_SCHEMA"] = schema  # the store creates it; we drop it at the end
            user = os.environ.get("BENCH_PG_USER", "postgres")
            env["BENCH_STORE_URL"] = f"postgresql://{user}@127.0.0.1:5432/test?schema={schema}"
        port = free_port()
        servers.append(Server(f"ours-{kind}", gunicorn_argv("benchmarks.apps.ours:app", port,
                                                            workers, worker_class), env, port,
                              scenarios=("send",)))
    return servers, notes


def drop_store_objects(servers: list[Server]) -> None:
    for server in servers:
        schema = server.env.get("BENCH_PG_SCHEMA")
        if schema:
            _psql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


# --------------------------------------------------------------------------- report


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def report(cells: dict[tuple[str, str], Cell], servers: list[Server], events: int,
           notes: list[str], connections: int = 16) -> str:
    """The results table, the ratios with their targets, and the noise."""
    lines = [f"{'scenario':<10} {'server':<14} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
             f"{'cpu us/req':>10} {'spread':>7} {'errors':>6} {'wrk cpu':>7}"]
    for scenario in SCENARIOS:
        for server in servers:
            cell = cells.get((scenario, server.name))
            if not cell or not cell.samples:
                continue
            mark = "" if all(s.latency_consistent(connections) for s in cell.samples) else "*"
            lines.append(
                f"{scenario:<10} {server.name:<14} {cell.median('rps'):>9.0f} "
                f"{cell.median('p50_ms'):>8.2f} {cell.median('p99_ms'):>7.2f}{mark or ' '}"
                f"{cell.median('server_cpu_us'):>10.0f} {cell.spread():>6.0%} "
                f"{sum(s.errors for s in cell.samples):>6} {cell.median('wrk_cpu'):>6.0%}")
    lines.append("")
    lines.append(f"{'scenario':<10} {'ours/sdk':>9} {'ours/bare':>10}   "
                 f"{'(cpu) sdk/ours':>15} {'(cpu) bare/ours':>16}")

    def ratio(scenario: str, other: str, attr: str, invert: bool = False) -> float | None:
        mine, theirs = cells.get((scenario, "ours")), cells.get((scenario, other))
        if not mine or not theirs or not mine.samples or not theirs.samples:
            return None
        a, b = mine.median(attr), theirs.median(attr)
        return (b / a) if invert else (a / b)

    for scenario in SCENARIOS:
        lines.append(f"{scenario:<10} {fmt_ratio(ratio(scenario, 'sdk', 'rps')):>9} "
                     f"{fmt_ratio(ratio(scenario, 'bare', 'rps')):>10}   "
                     f"{fmt_ratio(ratio(scenario, 'sdk', 'server_cpu_us', True)):>15} "
                     f"{fmt_ratio(ratio(scenario, 'bare', 'server_cpu_us', True)):>16}")
    lines.append("")
    for scenario, other, minimum in TARGETS:
        got = ratio(scenario, other, "rps")
        cpu = ratio(scenario, other, "server_cpu_us", True)
        verdict = "n/a" if got is None else ("MET" if got >= minimum else "MISSED")
        lines.append(f"target {scenario} ours/{other} >= {minimum}x: {fmt_ratio(got)} {verdict}"
                     f"  (by cpu/req: {fmt_ratio(cpu)})")
    stores = [s for s in servers if s.name.startswith("ours-")]
    if stores and ("send", "ours") in cells:
        base = cells[("send", "ours")].median("rps")
        for server in stores:
            cell = cells.get(("send", server.name))
            if cell and cell.samples:
                lines.append(f"blocking send on {server.name[5:]}: {cell.median('rps'):.0f} req/s "
                             f"= {cell.median('rps') / base:.2f}x memory")
    lines.extend(notes)
    if any(not s.latency_consistent(connections) for c in cells.values() for s in c.samples):
        lines.append("* wrk's latencies there break Little's law (mean > connections / rate): "
                     "not to be trusted (see Sample.latency_consistent); req/s and CPU are.")
    lines.append(f"stream = one SendStreamingMessage of {events + 3} SSE events "
                 f"({events} artifact chunks); req/s there is streams/s.")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3, help="runs per cell (median taken)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--worker-class", choices=("gevent", "gthread"), default=None,
                        help="gunicorn worker for ours and bare (default: a2a serve's)")
    parser.add_argument("--events", type=int, default=20, help="artifact chunks per stream")
    parser.add_argument("--stores", default="sqlite,postgres",
                        help="durable stores for blocking send ('' for none)")
    parser.add_argument("--servers", default=",".join(MAIN_SERVERS))
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--quick", action="store_true", help="1 round of 2 s: a smoke run")
    parser.add_argument("--json", type=Path, help="write the raw samples here")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.duration = 1, 2
    return args


def preflight(args: argparse.Namespace) -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk not found: apt-get install wrk (see benchmarks/README.md)")
    if "sdk" in args.servers and not (SDK_VENV / "bin" / "python").exists():
        raise SystemExit(f"no a2a-sdk venv at {SDK_VENV}: see benchmarks/README.md "
                         "(or pass --servers ours,bare)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    preflight(args)
    names = [n for n in args.servers.split(",") if n]
    scenarios = [s for s in args.scenarios.split(",") if s]
    worker_class = args.worker_class or default_worker_class()
    tmp = Path(tempfile.mkdtemp(prefix="a2a-bench-"))
    card_file = tmp / "card.json"
    builders = {
        "ours": lambda port: Server("ours", gunicorn_argv("benchmarks.apps.ours:app", port,
                                                          args.workers, worker_class), {}, port),
        "sdk": lambda port: Server("sdk", uvicorn_argv(port, args.workers), {}, port),
        "bare": lambda port: Server("bare", gunicorn_argv("benchmarks.apps.bare:app", port,
                                                          args.workers, worker_class),
                                    {"BENCH_CARD_FILE": str(card_file)}, port),
    }
    servers = [builders[name](free_port()) for name in names]
    extra, notes = store_servers([s for s in args.stores.split(",") if s], args.workers, tmp,
                                 worker_class) \
        if "send" in scenarios and "ours" in names else ([], [])
    servers += extra
    started: list[Server] = []
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cells: dict[tuple[str, str], Cell] = {}
    try:
        # ours first: the bare app serves a copy of its card
        for server in sorted(servers, key=lambda s: s.name != "ours"):
            start(server, tmp)
            started.append(server)
            if server.name == "ours":
                with urllib.request.urlopen(server.url + CARD_PATH) as resp:
                    card_file.write_bytes(resp.read())
        sizes = {s.name: check(s, args.events) for s in servers}
        print(f"worker class={worker_class} ({serve_settings(worker_class, args.workers)})",
              flush=True)
        print(f"workers={args.workers} connections={args.connections} "
              f"duration={args.duration}s rounds={args.rounds} events={args.events} "
              f"cores={os.cpu_count()} load={os.getloadavg()[0]:.2f}", flush=True)
        print("response bytes: " + "; ".join(
            f"{n}: " + ", ".join(f"{k}={v}" for k, v in s.items()) for n, s in sizes.items()),
            flush=True)
        for server in servers:  # warm-up: imports, caches, first-task paths
            for scenario in scenarios:
                if scenario in server.scenarios:
                    run_wrk(server, scenario, 1, args.connections, args.events)
        for scenario in scenarios:
            todo = [s for s in servers if scenario in s.scenarios]
            by_name = {s.name: s for s in todo}
            for order in rotations([s.name for s in todo], args.rounds):
                for name in order:
                    sample = run_wrk(by_name[name], scenario, args.duration,
                                     args.connections, args.events)
                    cells.setdefault((scenario, name), Cell()).samples.append(sample)
                    print(f"  {scenario:<8} {name:<14} {sample.rps:>8.0f} req/s "
                          f"p50 {sample.p50_ms:.2f} ms p99 {sample.p99_ms:.2f} ms "
                          f"cpu {sample.server_cpu_us:.0f} us/req errors {sample.errors}",
                          flush=True)
        print()
        print(report(cells, servers, args.events, notes, args.connections))
        if args.json:
            args.json.write_text(json.dumps(
                {f"{k[0]}/{k[1]}": [vars(s) for s in c.samples] for k, c in cells.items()},
                indent=1))
    finally:
        for server in started:
            stop(server)
        drop_store_objects(extra)
        shutil.rmtree(tmp, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
