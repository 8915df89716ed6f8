"""Soak: the default deployment under mixed load, its workers' descriptors and memory over time.

    .venv/bin/python benchmarks/soak.py --requests 20000      # until 20,000 requests
    .venv/bin/python benchmarks/soak.py --minutes 30          # for 30 minutes
    .venv/bin/python benchmarks/soak.py --seconds 60 --json out.json
    .venv/bin/python benchmarks/soak.py --seconds 120 --tracemalloc DIR  # then memdiff.py DIR

Runs ``a2a serve examples.echo:app --workers 2`` as an operator would: the
default store (the shared SQLite file, here in a fresh temporary directory)
and the default worker class (gevent when installed). ``--clients`` threads
send (half of them on one keep-alive connection each, half on a new connection
for every request) a mix of blocking SendMessage,
GetTask of a task sent before, ListTasks (a page of 10) and short
SendStreamingMessage streams read to their end. Every ``--every`` seconds it
samples each worker's open descriptors (``/proc/PID/fd``) and RSS, and prints
a row of the table.

Exit status 1 when any request failed (HTTP status, JSON-RPC error, a stream
without its final event, a connection error), the server logged a traceback,
a worker was replaced, or a
worker grew between the end of the run's first 10% and its end by more than
``--max-fd-growth`` descriptors (20) or ``--max-rss-growth`` (25%).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
#: The share of each kind of request in the mix (the rest: blocking sends).
MIX = (("get", 0.25), ("list", 0.15), ("stream", 0.20))


@dataclass
class Sample:
    at: float
    requests: int
    errors: int
    workers: dict[int, tuple[int, int]]  # pid -> (descriptors, RSS in KiB)


@dataclass
class Outcome:
    requests: int = 0
    errors: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    first_errors: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int, workdir: Path, extra: list[str],
                 trace: Path | None = None) -> subprocess.Popen[bytes]:
    """``a2a serve`` in its own process group, with a fresh SQLite file.

    ``trace``: each worker writes tracemalloc snapshots there (``memtrace/sitecustomize.py``).
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT), A2A_DB=str(workdir / "a2a-tasks.sqlite3"))
    env.pop("A2A_STORE", None)
    if trace is not None:
        trace.mkdir(parents=True, exist_ok=True)
        env.update(PYTHONPATH=f"{ROOT / 'benchmarks' / 'memtrace'}{os.pathsep}{ROOT}",
                   A2A_SOAK_TRACEMALLOC=str(trace.resolve()))
    argv = [sys.executable, "-m", "a2a_wsgi._cli", "serve", "examples.echo:app",
            "--workers", "2", "--bind", f"127.0.0.1:{port}", "--log-level", "warning", *extra]
    log = open(workdir / "server.log", "wb")  # noqa: SIM115  (closed with the process)
    return subprocess.Popen(argv, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the group, SIGKILL after 15 s."""
    for sig, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (gunicorn's workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return sorted(found)


def measure(pid: int) -> tuple[int, int] | None:
    """(open descriptors, RSS in KiB) of ``pid``; None once it is gone."""
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return fds, int(line.split()[1])
    except OSError:
        return None
    return None


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            if requests.get(f"{url}/.well-known/agent-card.json", timeout=2).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError("the server did not answer within 30 s")


def _message(text: str) -> dict[str, Any]:
    return {"messageId": f"soak-{uuid.uuid4().hex}", "role": "ROLE_USER",
            "parts": [{"text": text}]}


def _rpc(session: requests.Session, url: str, method: str, params: dict[str, Any],
         *, stream: bool = False) -> requests.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return session.post(url, json=body, stream=stream, timeout=30,
                        headers={"A2A-Version": "1.0"})


def _result(response: requests.Response) -> dict[str, Any]:
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
    payload = response.json()
    if "error" in payload:
        raise RuntimeError(f"JSON-RPC error {payload['error']}")
    result: dict[str, Any] = payload["result"]
    return result


def _stream_events(response: requests.Response) -> Iterator[dict[str, Any]]:
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
    for line in response.iter_lines(decode_unicode=True):
        if line and line.startswith("data:"):
            payload = json.loads(line[5:])
            if "error" in payload:
                raise RuntimeError(f"JSON-RPC error in a stream {payload['error']}")
            yield payload["result"]


def one_request(kind: str, session: requests.Session, url: str, task_ids: list[str]) -> None:
    """One request of ``kind``; raises on anything but a full, successful answer."""
    if kind == "get" and task_ids:
        task = _result(_rpc(session, url, "GetTask", {"id": task_ids[-1], "historyLength": 1}))
        if task.get("status", {}).get("state") != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"GetTask answered {task.get('status')}")
    elif kind == "list":
        if "tasks" not in _result(_rpc(session, url, "ListTasks", {"pageSize": 10})):
            raise RuntimeError("ListTasks answered no tasks member")
    elif kind == "stream":
        with _rpc(session, url, "SendStreamingMessage", {"message": _message("soak stream")},
                  stream=True) as response:
            states = [event["statusUpdate"]["status"]["state"]
                      for event in _stream_events(response) if "statusUpdate" in event]
        if not states or states[-1] != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"a stream ended after {states}")
    else:
        result = _result(_rpc(session, url, "SendMessage",
                              {"message": _message("soak send"),
                               "configuration": {"returnImmediately": False}}))
        task = result.get("task") or {}
        if task.get("status", {}).get("state") != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"a blocking send answered {str(result)[:200]}")
        task_ids.append(task["id"])
        del task_ids[:-50]


def client(url: str, seed: int, fresh: bool, stop: threading.Event, budget: Budget,
           outcome: Outcome, lock: threading.Lock) -> None:
    """Requests of the mix, one after another, until ``stop`` or the budget is spent;
    ``fresh``: each on a new connection (as one-shot clients and the CLI do), else all
    on one keep-alive connection."""
    session = requests.Session()
    task_ids: list[str] = []
    n = seed
    try:
        while not stop.is_set() and budget.take():
            n += 1
            kind = _kind(n)
            try:
                one_request(kind, session, url, task_ids)
                failed = None
            except Exception as exc:  # every failure is counted and the run goes on
                failed = f"{kind}: {type(exc).__name__}: {exc}"[:300]
                session.close()
                session = requests.Session()
            if fresh:
                session.close()
            with lock:
                outcome.requests += 1
                outcome.kinds[kind] += 1
                if failed is not None:
                    outcome.errors += 1
                    if len(outcome.first_errors) < 10:
                        outcome.first_errors.append(failed)
    finally:
        session.close()


def _kind(n: int) -> str:
    """The mix, spread evenly over every 20 requests."""
    slot = (n * 7) % 20 / 20
    edge = 0.0
    for kind, share in MIX:
        edge += share
        if slot < edge:
            return kind
    return "send"


class Budget:
    """At most ``total`` requests in all (None: no limit)."""

    def __init__(self, total: int | None) -> None:
        self._left, self._lock = total, threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self._left is None:
                return True
            if self._left <= 0:
                return False
            self._left -= 1
            return True


def growth(samples: list[Sample]) -> dict[int, tuple[int, float]]:
    """Per worker: (descriptor growth, RSS growth ratio), end of the first 10% to the end.

    ``samples[0]`` is taken before the load starts (the idle server) and is not a base:
    the base is the last sample of the run's first 10%, or the first one under load.
    """
    loaded = samples[1:] or samples
    start, end = samples[0].at, loaded[-1].at
    cut = start + (end - start) * 0.10
    early = [s for s in loaded if s.at <= cut] or loaded[:1]
    base, last = early[-1], loaded[-1]
    out = {}
    for pid, (fds, rss) in last.workers.items():
        if pid in base.workers:
            base_fds, base_rss = base.workers[pid]
            out[pid] = (fds - base_fds, rss / base_rss - 1.0)
    return out


def print_row(sample: Sample, started: float, previous: Sample | None) -> None:
    rate = 0.0
    if previous is not None and sample.at > previous.at:
        rate = (sample.requests - previous.requests) / (sample.at - previous.at)
    cells = "  ".join(f"{pid}: {fds:5d} fd {rss / 1024:7.1f} MB"
                      for pid, (fds, rss) in sorted(sample.workers.items()))
    print(f"{sample.at - started:7.1f} s {sample.requests:8d} req {rate:7.1f}/s "
          f"{sample.errors:5d} err   {cells}", flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    length = parser.add_mutually_exclusive_group()
    length.add_argument("--requests", type=int, help="stop after this many requests")
    length.add_argument("--minutes", type=float, help="run this many minutes")
    length.add_argument("--seconds", type=float, help="run this many seconds")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between samples")
    parser.add_argument("--max-fd-growth", type=int, default=20)
    parser.add_argument("--max-rss-growth", type=float, default=0.25)
    parser.add_argument("--json", type=Path, help="write the samples and verdict here")
    parser.add_argument("--serve-arg", action="append", default=[],
                        help="an extra option for a2a serve (e.g. --serve-arg=-kgthread)")
    parser.add_argument("--tracemalloc", type=Path, metavar="DIR",
                        help="workers write tracemalloc snapshots to DIR every 20 s "
                             "(A2A_SOAK_TRACEMALLOC_EVERY); compare them with memdiff.py")
    return parser.parse_args(argv)


def run(options: argparse.Namespace) -> int:
    seconds = (options.minutes * 60 if options.minutes is not None
               else options.seconds if options.seconds is not None
               else None if options.requests is not None else 60.0)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="a2a-soak-") as tmp:
        workdir = Path(tmp)
        server = start_server(port, workdir, options.serve_arg, options.tracemalloc)
        try:
            wait_ready(url, server)
            status = soak(options, url, server, seconds)
        finally:
            stop_server(server)
        log = (workdir / "server.log").read_text(errors="replace")
        if "Traceback" in log:  # an error the server logged counts as one too
            print("FAIL: the server logged tracebacks:\n" + log[-3000:])
            return 1
        return status


def soak(options: argparse.Namespace, url: str, server: subprocess.Popen[bytes],
         seconds: float | None) -> int:
    deadline = time.monotonic() + 30
    while len(workers := children(server.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)  # the card answered from the first worker; the second is booting
    outcome, lock, stop = Outcome(), threading.Lock(), threading.Event()
    budget = Budget(options.requests)
    threads = [threading.Thread(target=client, args=(url + "/", i * 3, i % 2 == 0, stop, budget,
                                                     outcome, lock), daemon=True)
               for i in range(options.clients)]
    started = time.monotonic()
    samples: list[Sample] = []
    replaced: set[int] = set()

    def sample() -> None:
        now_workers = children(server.pid)
        replaced.update(set(now_workers) ^ set(workers))
        measured = {pid: m for pid in now_workers if (m := measure(pid)) is not None}
        with lock:
            row = Sample(time.monotonic(), outcome.requests, outcome.errors, measured)
        print_row(row, started, samples[-1] if samples else None)
        samples.append(row)

    print(f"a2a serve examples.echo:app --workers 2 {' '.join(options.serve_arg)} on {url}; "
          f"workers {workers}; {options.clients} clients", flush=True)
    sample()
    for thread in threads:
        thread.start()
    try:
        while any(t.is_alive() for t in threads):
            if seconds is not None and time.monotonic() - started >= seconds:
                break
            time.sleep(0.1)
            if time.monotonic() - samples[-1].at >= options.every:
                sample()
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=40)
    sample()
    return verdict(options, samples, outcome, replaced, started)


def verdict(options: argparse.Namespace, samples: list[Sample], outcome: Outcome,
            replaced: set[int], started: float) -> int:
    elapsed = samples[-1].at - started
    grown = growth(samples)
    failures = []
    if outcome.errors:
        failures.append(f"{outcome.errors} failed requests: {outcome.first_errors}")
    if replaced:
        failures.append(f"workers replaced during the run: {sorted(replaced)}")
    for pid, (fds, rss) in sorted(grown.items()):
        if fds > options.max_fd_growth:
            failures.append(f"worker {pid}: +{fds} descriptors (at most {options.max_fd_growth})")
        if rss > options.max_rss_growth:
            failures.append(f"worker {pid}: RSS +{rss:.0%} (at most {options.max_rss_growth:.0%})")
    print(f"\n{outcome.requests} requests in {elapsed:.0f} s "
          f"({outcome.requests / max(elapsed, 1e-9):.0f}/s), {outcome.errors} errors; "
          f"mix {dict(outcome.kinds)}")
    for pid, (fds, rss) in sorted(grown.items()):
        print(f"worker {pid}: descriptors {fds:+d}, RSS {rss:+.1%} "
              "(end of the first 10% to the end)")
    print("FAIL: " + "; ".join(failures) if failures else "OK: no errors, no growth")
    if options.json is not None:
        options.json.write_text(json.dumps({
            "requests": outcome.requests, "errors": outcome.errors, "seconds": elapsed,
            "first_errors": outcome.first_errors, "replaced": sorted(replaced),
            "growth": {str(pid): {"descriptors": fds, "rss_ratio": rss}
                       for pid, (fds, rss) in grown.items()},
            "samples": [asdict(s) for s in samples], "failures": failures,
        }, indent=1))
    return 1 if failures else 0


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM ends the run like Ctrl-C, so the server is stopped on the way out."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        return run(parse_args(argv))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
