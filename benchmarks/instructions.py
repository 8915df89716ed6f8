"""CPU instructions per request under the real server, counted by callgrind: a ratio without noise.

    .venv/bin/python benchmarks/instructions.py                    # card304, card, send
    .venv/bin/python benchmarks/instructions.py --scenarios card304 --requests 2000

wrk's requests/s on a shared two-core machine moves by 10-30% from run to run
(the same bare app measured 269 and 437 us of CPU per request minutes apart),
so a ratio near its target (card 304 at 0.9x bare) can land on either side.
This counts what does not move: the instructions the gunicorn worker executes
per request. Each server (``ours``: benchmarks/apps/ours.py, ``bare``:
benchmarks/apps/bare.py serving our card's bytes) runs under ``a2a serve``
with one worker, exactly as run.py starts it, inside ``valgrind
--tool=callgrind`` with counting off; per scenario a warm-up, then counting on
(``callgrind_control -z -i on``) for ``--requests`` requests from 16
keep-alive connections, off, and a dump whose total is divided by the count.
Everything the worker does in that window counts: gunicorn's parsing and
writing, gevent's hub, the app.

Needs valgrind (Debian's package). Slow: the server runs ~50x slower under
callgrind, about half a minute per server and scenario.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.run import gunicorn_argv  # noqa: E402

SCENARIOS = ("card304", "card", "send")
CARD_PATH = "/.well-known/agent-card.json"
CONNECTIONS = 16


def _request(scenario: str, port: int, etag: str, n: int) -> bytes:
    head = f"Host: 127.0.0.1:{port}\r\nUser-Agent: instructions.py\r\nAccept: */*\r\n"
    if scenario == "card304":
        return f"GET {CARD_PATH} HTTP/1.1\r\n{head}If-None-Match: {etag}\r\n\r\n".encode()
    if scenario == "card":
        return f"GET {CARD_PATH} HTTP/1.1\r\n{head}\r\n".encode()
    body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {
        "message": {"messageId": f"m-{os.getpid()}-{time.time_ns()}-{n}", "role": "ROLE_USER",
                    "parts": [{"text": "hello"}]}}}).encode()
    return (f"POST / HTTP/1.1\r\n{head}Content-Type: application/json\r\nA2A-Version: 1.0\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def _drive(scenario: str, port: int, etag: str, count: int) -> None:
    """``count`` requests over CONNECTIONS keep-alive connections; every answer checked."""
    expected = b"HTTP/1.1 304" if scenario == "card304" else b"HTTP/1.1 200"
    failures: list[str] = []

    def one_connection(share: int, offset: int) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=600) as sock:
            buffer = b""
            for index in range(share):
                sock.sendall(_request(scenario, port, etag, offset + index))
                while b"\r\n\r\n" not in buffer:
                    data = sock.recv(65536)
                    if not data:
                        failures.append("closed")
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                if not head.startswith(expected):
                    failures.append(head.split(b"\r\n", 1)[0].decode(errors="replace"))
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buffer) < length:
                    data = sock.recv(65536)
                    if not data:
                        failures.append("closed in a body")
                        return
                    buffer += data
                buffer = buffer[length:]

    share = count // CONNECTIONS
    threads = [threading.Thread(target=one_connection, args=(share, i * share))
               for i in range(CONNECTIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise AssertionError(f"{scenario}: {len(failures)} bad answers, e.g. {failures[:3]}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(port: int, process: subprocess.Popen[bytes]) -> bytes:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited while starting")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=30) as r:
                return bytes(r.read())
        except OSError:
            time.sleep(1)
    raise RuntimeError("the server did not answer within 300 s")


def _etag(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{CARD_PATH}", timeout=60) as answer:
        return str(answer.headers["ETag"])


def _worker_pid(master: int) -> int:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    if len(children) != 1:
        raise RuntimeError(f"expected one worker under {master}, found {children}")
    return int(children[0])


def _dump_total(out: Path, worker: int, before: set[Path]) -> int:
    """The total of the dump callgrind wrote for ``worker`` since ``before`` was listed."""
    for _ in range(100):
        fresh = sorted(set(out.glob(f"cg.{worker}.*")) - before)
        for path in fresh:
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("totals:"):
                    return int(line.split()[1])
        time.sleep(0.2)
    raise RuntimeError("callgrind wrote no dump")


def measure(name: str, target: str, env: dict[str, str], scenarios: list[str],
            requests: int, out: Path) -> dict[str, float]:
    """Instructions per request of ``target``'s worker for each scenario."""
    port = _free_port()
    argv = ["valgrind", "--tool=callgrind", "--trace-children=yes", "--instr-atstart=no",
            f"--callgrind-out-file={out}/cg.%p",
            *gunicorn_argv(target, port, 1), "--timeout", "900"]
    log = open(out / f"{name}.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **env}, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    results: dict[str, float] = {}
    try:
        _wait_ready(port, process)
        worker = _worker_pid(process.pid)
        etag = _etag(port)
        for scenario in scenarios:
            _drive(scenario, port, etag, 320)  # warm-up: first-use work done, caches filled
            before = set(out.glob(f"cg.{worker}.*"))
            subprocess.run(["callgrind_control", "-z", "-i", "on", str(worker)], check=True,
                           capture_output=True)
            _drive(scenario, port, etag, requests)
            subprocess.run(["callgrind_control", "-i", "off", str(worker)], check=True,
                           capture_output=True)
            subprocess.run(["callgrind_control", "-d", str(worker)], check=True,
                           capture_output=True)
            share = requests // CONNECTIONS * CONNECTIONS
            results[scenario] = _dump_total(out, worker, before) / share
            print(f"  {name:<5} {scenario:<8} {results[scenario]:>10,.0f} instructions/request",
                  flush=True)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--requests", type=int, default=1000, help="counted per scenario")
    parser.add_argument("--keep", action="store_true", help="keep callgrind's files")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("needs valgrind: apt-get install -y valgrind", file=sys.stderr)
        return 2
    scenarios = [s for s in args.scenarios.split(",") if s]
    unknown = set(scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {sorted(unknown)}")
    out = Path(tempfile.mkdtemp(prefix="a2a-instructions-"))
    try:
        ours = measure("ours", "benchmarks.apps.ours:app", {}, scenarios, args.requests, out)
        # the bare app serves our card's bytes, as in run.py
        card_file = out / "card.json"
        port = _free_port()
        probe = subprocess.Popen(gunicorn_argv("benchmarks.apps.ours:app", port, 1), cwd=ROOT,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
        try:
            card_file.write_bytes(_wait_ready(port, probe))
        finally:
            os.killpg(probe.pid, signal.SIGTERM)
            probe.wait()
        bare = measure("bare", "benchmarks.apps.bare:app", {"BENCH_CARD_FILE": str(card_file)},
                       scenarios, args.requests, out)
    finally:
        if args.keep:
            print(f"callgrind files in {out}")
        else:
            shutil.rmtree(out, ignore_errors=True)
    print(f"\n{'scenario':<10} {'ours':>12} {'bare':>12} {'bare/ours':>10}")
    for scenario in scenarios:
        print(f"{scenario:<10} {ours[scenario]:>12,.0f} {bare[scenario]:>12,.0f} "
              f"{bare[scenario] / ours[scenario]:>9.2f}x")
    print("(bare/ours: ours's throughput relative to bare's if CPU were all that counted)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
