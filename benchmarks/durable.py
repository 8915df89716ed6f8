"""Blocking send on durable stores: ours against the official SDK on its own durable store.

    .venv/bin/python benchmarks/durable.py                    # ~3 minutes: 3 rounds x 5 s
    .venv/bin/python benchmarks/durable.py --quick            # 1 round x 2 s
    .venv/bin/python benchmarks/durable.py --stores sqlite    # without PostgreSQL

The SDK side runs from its own venv, ``benchmarks/.venv-sdk-durable``
(``requirements-durable.txt``: the SDK with its ``sqlite`` and ``postgresql`` extras), not
``benchmarks/.venv-sdk``: SQLAlchemy, once installed, is imported by the SDK's in-memory app
too, and would weigh on ``run.py``'s and ``startup.py``'s numbers.

The same blocking ``SendMessage`` as ``run.py``'s ``send`` (wrk, ``bench.lua``, a fresh
``messageId`` per request, the echo agent, task COMPLETED in the answer), one worker each,
against, for each database:

* ``ours-sqlite`` / ``ours-postgres``: ``a2a serve benchmarks.apps.ours:app`` with
  ``BENCH_STORE`` (our SQLite and PostgreSQL stores, :mod:`benchmarks.apps.stores`);
* ``sdk-sqlite`` / ``sdk-postgres``: the SDK app of ``benchmarks/apps/sdk.py`` with its
  ``DatabaseTaskStore`` (SQLAlchemy; aiosqlite / asyncpg) instead of the in-memory store
  (``benchmarks/apps/sdk_durable.py``), on uvicorn with uvloop and httptools, as ``run.py``
  runs the SDK;
* ``bare``: ``benchmarks/apps/bare.py`` under ``a2a serve`` (parses the body, answers a
  task-shaped JSON, stores nothing): the ceiling.

"The same database": for SQLite one file in the run's temporary directory holds both stores'
tables; for PostgreSQL the server on 127.0.0.1:5432, database ``test``, with one schema per
server (``a2a_bench_<pid>`` and ``sdk_bench_<pid>``, dropped at the end). The database's own
CPU (PostgreSQL's backends) is not in the servers' CPU per request, for either side.

Measured interleaved as ``run.py`` does: every server once per round, the order rotating, the
median of the rounds reported, with CPU per request and the spread. Goal (issue 33): ours at
least 5x the SDK on each database.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.run import (  # noqa: E402  (the checkout's root must be on the path first)
    CARD_PATH,
    Cell,
    Server,
    _psql,
    check,
    default_worker_class,
    fmt_ratio,
    free_port,
    gunicorn_argv,
    postgres_up,
    rotations,
    run_wrk,
    start,
    stop,
)

__all__ = ["main"]

GOAL = 5.0
SDK_VENV = Path(os.environ.get("BENCH_SDK_DURABLE_VENV", HERE / ".venv-sdk-durable"))
DATABASES = ("sqlite", "postgres")


def sdk_argv(port: int) -> list[str]:
    """The SDK on its durable store, under uvicorn as run.py runs the SDK (one worker)."""
    return [str(SDK_VENV / "bin" / "python"), "-m", "uvicorn", "benchmarks.apps.sdk_durable:app",
            "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
            "--loop", "uvloop", "--http", "httptools", "--no-access-log",
            "--log-level", "warning"]


def build_servers(databases: list[str], tmp: Path, worker_class: str,
                  with_memory: bool) -> tuple[list[Server], list[str], list[str]]:
    """(servers, notes, PostgreSQL schemas to drop at the end)."""
    servers: list[Server] = []
    notes: list[str] = []
    schemas: list[str] = []
    user = os.environ.get("BENCH_PG_USER", "postgres")

    def ours(name: str, env: dict[str, str]) -> Server:
        port = free_port()
        return Server(name, gunicorn_argv("benchmarks.apps.ours:app", port, 1, worker_class),
                      env, port, scenarios=("send",))

    for db in databases:
        if db == "sqlite":
            path = tmp / "durable.sqlite3"  # one file: both stores' tables side by side
            servers.append(ours("ours-sqlite", {"BENCH_STORE": "sqlite",
                                                "BENCH_STORE_URL": f"sqlite:///{path}"}))
            port = free_port()
            servers.append(Server("sdk-sqlite", sdk_argv(port),
                                  {"SDK_STORE_URL": f"sqlite+aiosqlite:///{path}"}, port,
                                  scenarios=("send",)))
        elif db == "postgres":
            if not postgres_up():
                notes.append("postgres: nothing listens on 127.0.0.1:5432, skipped")
                continue
            mine, theirs = f"a2a_bench_{os.getpid()}", f"sdk_bench_{os.getpid()}"
            _psql(f"CREATE SCHEMA IF NOT EXISTS {theirs}")
            schemas += [mine, theirs]
            servers.append(ours("ours-postgres", {
                "BENCH_STORE": "postgres",
                "BENCH_STORE_URL": f"postgresql://{user}@127.0.0.1:5432/test?schema={mine}"}))
            port = free_port()
            servers.append(Server("sdk-postgres", sdk_argv(port), {
                "SDK_STORE_URL": f"postgresql+asyncpg://{user}@127.0.0.1:5432/test",
                "SDK_PG_SCHEMA": theirs}, port, scenarios=("send",)))
    if with_memory:
        servers.append(ours("ours-memory", {}))
        port = free_port()
        servers.append(Server("sdk-memory", [*sdk_argv(port)[:3], "benchmarks.apps.sdk:app",
                                             *sdk_argv(port)[4:]], {}, port,
                              scenarios=("send",)))
    port = free_port()
    card_file = tmp / "card.json"
    servers.append(Server("bare", gunicorn_argv("benchmarks.apps.bare:app", port, 1,
                                                worker_class),
                          {"BENCH_CARD_FILE": str(card_file)}, port, scenarios=("send",)))
    return servers, notes, schemas


def report(cells: dict[str, Cell], databases: list[str], notes: list[str]) -> str:
    lines = [f"{'server':<14} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'cpu us/req':>10} "
             f"{'spread':>7} {'errors':>6}"]
    for name, cell in cells.items():
        lines.append(f"{name:<14} {cell.median('rps'):>8.0f} {cell.median('p50_ms'):>8.2f} "
                     f"{cell.median('p99_ms'):>8.2f} {cell.median('server_cpu_us'):>10.0f} "
                     f"{cell.spread():>6.0%} {sum(s.errors for s in cell.samples):>6}")
    lines.append("")
    lines.append(f"{'database':<10} {'ours/sdk':>9} {'(cpu) sdk/ours':>15} {'ours/bare':>10}")
    bare = cells.get("bare")
    for db in [*databases, "memory"]:
        mine, theirs = cells.get(f"ours-{db}"), cells.get(f"sdk-{db}")
        if not mine or not theirs:
            continue
        rps = mine.median("rps") / theirs.median("rps")
        cpu = theirs.median("server_cpu_us") / mine.median("server_cpu_us")
        of_bare = mine.median("rps") / bare.median("rps") if bare else None
        lines.append(f"{db:<10} {fmt_ratio(rps):>9} {fmt_ratio(cpu):>15} "
                     f"{fmt_ratio(of_bare):>10}")
        if db != "memory":
            lines.append(f"target send on {db} ours/sdk >= {GOAL}x: {fmt_ratio(rps)} "
                         f"{'MET' if rps >= GOAL else 'MISSED'}  (by cpu/req: {fmt_ratio(cpu)})")
    lines.extend(notes)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3, help="runs per server (median taken)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--stores", default=",".join(DATABASES),
                        help="databases: sqlite,postgres")
    parser.add_argument("--worker-class", choices=("gevent", "gthread"), default=None,
                        help="gunicorn worker for ours and bare (default: a2a serve's)")
    parser.add_argument("--with-memory", action="store_true",
                        help="also both in-memory stores, for context")
    parser.add_argument("--quick", action="store_true", help="1 round of 2 s")
    parser.add_argument("--json", type=Path, help="write the raw samples here")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.duration = 1, 2
    if shutil.which("wrk") is None:
        raise SystemExit("wrk not found: apt-get install wrk (see benchmarks/README.md)")
    if not (SDK_VENV / "bin" / "python").exists():
        raise SystemExit(f"no a2a-sdk venv at {SDK_VENV}: see requirements-durable.txt")
    databases = [d for d in args.stores.split(",") if d]
    worker_class = args.worker_class or default_worker_class()
    tmp = Path(tempfile.mkdtemp(prefix="a2a-durable-"))
    servers, notes, schemas = build_servers(databases, tmp, worker_class, args.with_memory)
    started: list[Server] = []
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cells: dict[str, Cell] = {}
    try:
        for server in servers:
            if server.name == "bare" and started:  # the bare app serves a copy of our card
                ours = next(s for s in started if s.name.startswith("ours-"))
                with urllib.request.urlopen(ours.url + CARD_PATH, timeout=10) as resp:
                    (tmp / "card.json").write_bytes(resp.read())
            start(server, tmp)
            started.append(server)
        for server in servers:
            check(server, 0)
        print(f"worker class={worker_class}; one worker each; connections={args.connections} "
              f"duration={args.duration}s rounds={args.rounds} cores={os.cpu_count()} "
              f"load={os.getloadavg()[0]:.2f}", flush=True)
        for server in servers:  # warm-up: imports, pools, first-task paths, tables
            run_wrk(server, "send", 1, args.connections, 0)
        by_name = {s.name: s for s in servers}
        for order in rotations(list(by_name), args.rounds):
            for name in order:
                sample = run_wrk(by_name[name], "send", args.duration, args.connections, 0)
                cells.setdefault(name, Cell()).samples.append(sample)
                print(f"  send {name:<14} {sample.rps:>8.0f} req/s p50 {sample.p50_ms:.2f} ms "
                      f"p99 {sample.p99_ms:.2f} ms cpu {sample.server_cpu_us:.0f} us/req "
                      f"errors {sample.errors}", flush=True)
        ordered = {s.name: cells[s.name] for s in servers if s.name in cells}
        print()
        print(report(ordered, databases, notes))
        if args.json:
            args.json.write_text(json.dumps(
                {name: [vars(s) for s in c.samples] for name, c in ordered.items()}, indent=1))
    finally:
        for server in started:
            stop(server)
        for schema in schemas:
            _psql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        shutil.rmtree(tmp, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)
    return 0


if __name__ == "__main__":
    sys.exit(main())
