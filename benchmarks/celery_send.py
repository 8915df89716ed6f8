"""Runs on Celery against runs in the web worker: added latency, streams, worker scaling.

    .venv/bin/python benchmarks/celery_send.py                  # ~4 minutes
    .venv/bin/python benchmarks/celery_send.py --quick          # ~1 minute

Three measurements, each on its own SQLite file, one web worker (``a2a serve --workers 1``):

1. **Added latency** of a blocking send of an instant agent (echo): ``--sends`` sequential
   sends (taking turns, so that a shared machine's changing load weighs on both alike) to
   ``examples/celery_agent.py`` (one Celery worker, ``-c 1``, RabbitMQ) against
   ``benchmarks/apps/ours.py`` (the same echo, run in the web worker): p50 and p99 of each,
   and the difference.
2. **Streams**: ``--streams`` sequential 10-chunk streams through Celery; events/s.
3. **Scaling**: ``--tasks`` non-blocking sends of a ``--work-ms`` agent at once, then the
   wall time until all are COMPLETED, on 1, 2 and 4 Celery workers of ``--concurrency``
   each (the web tier stays at one worker); tasks/s and the ratio to one worker.

The workers' pool is ``--pool`` (default prefork). The broker is ``--broker`` (default
RabbitMQ on 127.0.0.1); each run uses a queue of its
own and deletes it afterwards. ``--postgres URL`` runs the latency and stream parts on
PostgreSQL (a schema of their own, dropped afterwards) instead of SQLite files: a
worker's change then reaches the web tier by ``LISTEN/NOTIFY``, not by polling the file.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Procs:
    """Started processes, each in its own session; all stopped at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.started = folder, []  # type: list[subprocess.Popen[bytes]]

    def start(self, argv: list[str], env: dict[str, str], name: str) -> subprocess.Popen[bytes]:
        log = (self.folder / f"{name}.log").open("ab")
        proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **env}, stdout=log,
                                stderr=log, start_new_session=True)
        log.close()
        self.started.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.started:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for proc in self.started:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def _web(procs: _Procs, app: str, env: dict[str, str], name: str) -> str:
    port = _free_port()
    procs.start([str(BIN / "a2a"), "serve", app, "--workers", "1",
                 "--bind", f"127.0.0.1:{port}"], env, name)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            requests.get(url + ".well-known/agent-card.json", timeout=2)
            return url
        except requests.RequestException:
            time.sleep(0.2)
    raise SystemExit(f"{app} did not start; see {procs.folder / name}.log")


#: The Celery workers' pool (``--pool``): prefork, as docs/work-tier.md recommends.
POOL = ["-P", "prefork"]


def _worker(procs: _Procs, env: dict[str, str], concurrency: int, name: str) -> None:
    procs.start([str(BIN / "celery"), "-A", "examples.celery_agent:celery", "worker", *POOL,
                 "-c", str(concurrency), "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h",
                 "--without-mingle", "--without-gossip", "--loglevel", "WARNING"], env, name)


def _send(session: requests.Session, url: str, text: str, blocking: bool) -> dict[str, object]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                    "parts": [{"text": text}]},
        "configuration": {"blocking": blocking}}}
    answer = session.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=120)
    result = answer.json()["result"]
    return result.get("task", result)  # type: ignore[no-any-return]


def _latencies(urls: list[str], count: int) -> list[list[float]]:
    """Blocking sends taking turns between ``urls`` (so a shared machine's load, which
    comes and goes, weighs on each alike): each one's times in ms."""
    sessions = [requests.Session() for _ in urls]
    try:
        for session, url in zip(sessions, urls, strict=True):
            for _ in range(20):  # warm up: connections, the workers' first run
                _send(session, url, "hello", True)
        took: list[list[float]] = [[] for _ in urls]
        for _ in range(count):
            for times, session, url in zip(took, sessions, urls, strict=True):
                started = time.perf_counter()
                task = _send(session, url, "hello", True)
                times.append((time.perf_counter() - started) * 1000)
                assert task["status"]["state"] == "TASK_STATE_COMPLETED", task  # type: ignore[index]
        return took
    finally:
        for session in sessions:
            session.close()


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


def _streams(url: str, count: int) -> float:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": "", "role": "ROLE_USER", "parts": [{"text": "stream 10"}]}}}
    events = 0
    started = time.perf_counter()
    with requests.Session() as session:
        for _ in range(count):
            body["params"]["message"]["messageId"] = uuid.uuid4().hex  # type: ignore[index]
            with session.post(url, json=body, headers={"A2A-Version": "1.0"}, stream=True,
                              timeout=60) as answer:
                events += sum(1 for line in answer.iter_lines() if line.startswith(b"data:"))
    return events / (time.perf_counter() - started)


def _completed(session: requests.Session, url: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks",
            "params": {"status": "TASK_STATE_COMPLETED", "pageSize": 1}}
    answer = session.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=30)
    return int(answer.json()["result"]["totalSize"])


def _scaling(url: str, tasks: int, work_ms: int) -> float:
    """Seconds from the first send until all ``tasks`` are COMPLETED."""
    with requests.Session() as session:
        before = _completed(session, url)
        started = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda _: _send(requests.Session(), url, f"slow {work_ms}", False),
                          range(tasks)))
        while _completed(session, url) < before + tasks:
            time.sleep(0.1)
        return time.perf_counter() - started


def _delete_queue(broker: str, queue: str) -> None:
    from kombu import Connection

    try:
        with Connection(broker, connect_timeout=2) as conn:
            conn.default_channel.queue_delete(queue)
    except Exception as exc:
        print(f"(could not delete queue {queue}: {exc})")


def _drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--broker", default="amqp://guest:guest@127.0.0.1:5672//")
    parser.add_argument("--sends", type=int, default=500)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--work-ms", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="fewer sends, 40 tasks")
    parser.add_argument("--postgres", metavar="URL", help="latency and streams on PostgreSQL")
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--pool", default="prefork", choices=["prefork", "threads", "solo"],
                        help="the Celery workers' pool (solo: one run at a time)")
    args = parser.parse_args(argv)
    POOL[1] = args.pool
    if args.quick:
        args.sends, args.streams, args.tasks = 100, 10, 40
    folder = Path(tempfile.mkdtemp(prefix="celery-bench-"))
    queue = f"a2a-bench-{uuid.uuid4().hex[:8]}"
    procs = _Procs(folder)
    schema = f"a2a_bench_{uuid.uuid4().hex[:8]}"
    pg = f"{args.postgres}?schema={schema}" if args.postgres else None
    try:
        inproc = _web(procs, "benchmarks.apps.ours:app",
                      {"BENCH_STORE": "postgres" if pg else "sqlite",
                       "BENCH_STORE_URL": pg or f"sqlite:///{folder / 'inproc.sqlite3'}"},
                      "inproc")
        env = {"A2A_CELERY_BROKER": args.broker, "A2A_CELERY_QUEUE": queue,
               "A2A_DB": str(folder / "celery.sqlite3"), "A2A_STORE": pg or ""}
        _worker(procs, env, 1, "latency-worker")
        queued = _web(procs, "examples.celery_agent:app", env, "web")
        base, celery = _latencies([inproc, queued], args.sends)
        print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
        print(f"blocking send, instant agent, {args.sends} sequential sends, "
              f"{'PostgreSQL' if pg else 'SQLite'}, Celery pool {args.pool} (ms):")
        for name, took in (("in the web worker", base), ("on Celery", celery)):
            print(f"  {name:18} p50 {_pct(took, 50):7.2f}  p99 {_pct(took, 99):7.2f}")
        print(f"  {'added':18} p50 {_pct(celery, 50) - _pct(base, 50):7.2f}  "
              f"p99 {_pct(celery, 99) - _pct(base, 99):7.2f}")
        print(f"10-chunk streams on Celery: {_streams(queued, args.streams):.0f} events/s")
        procs.stop()
        procs.started.clear()
        env["A2A_STORE"] = ""
        if args.skip_scaling:
            return 0
        print(f"{args.tasks} tasks of a {args.work_ms} ms agent, workers of -c "
              f"{args.concurrency}:")
        env["A2A_DB"] = str(folder / "scaling.sqlite3")
        queued = _web(procs, "examples.celery_agent:app", env, "web2")
        first, running = 0.0, 0
        for workers in (1, 2, 4):
            while running < workers:
                _worker(procs, env, args.concurrency, f"worker{running}")
                running += 1
            time.sleep(3)  # the new workers connect
            took = _scaling(queued, args.tasks, args.work_ms)
            first = first or took
            print(f"  {workers} worker(s): {took:6.1f} s, {args.tasks / took:6.2f} tasks/s, "
                  f"x{first / took:.2f}")
    finally:
        print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")
        procs.stop()
        _delete_queue(args.broker, queue)
        if args.postgres:
            _drop_schema(args.postgres, schema)
    return 0


if __name__ == "__main__":
    sys.exit(main())
