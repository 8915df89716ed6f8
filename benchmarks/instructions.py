"""CPU instructions per request under the real server, counted by callgrind: a ratio without noise.

    .venv/bin/python benchmarks/instructions.py               # card304, card, send, stream
    .venv/bin/python benchmarks/instructions.py --scenarios card304 --servers ours,bare

wrk's requests/s on a shared two-core machine moves by 10-30% from run to run
(the same bare app measured 269 and 437 us of CPU per request minutes apart),
so a ratio near its target (card 304 at 0.9x bare) can land on either side.
This counts what does not move: the instructions the gunicorn worker executes
per request. Each server (``ours``: benchmarks/apps/ours.py, ``bare``:
benchmarks/apps/bare.py serving our card's bytes, both under ``a2a serve``
with one worker; ``sdk``: the official SDK on uvicorn, one process; each
exactly as run.py starts it) runs inside ``valgrind
--tool=callgrind`` with counting off; per scenario a warm-up, then counting on
(``callgrind_control -z -i on``) for ``--requests`` requests from 16
keep-alive connections, off, and a dump whose total is divided by the count.
Everything the worker does in that window counts: gunicorn's parsing and
writing, gevent's hub (uvicorn's loop), the app. ``stream`` is one
``SendStreamingMessage`` of ``"stream 10"`` (13 SSE events) per request.

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
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.run import SDK_VENV, gunicorn_argv, uvicorn_argv  # noqa: E402

SCENARIOS = ("card304", "card", "send", "stream")
SERVERS = ("ours", "bare", "sdk")
CARD_PATH = "/.well-known/agent-card.json"
CONNECTIONS = 16


def _request(scenario: str, port: int, etag: str, n: int) -> bytes:
    head = f"Host: 127.0.0.1:{port}\r\nUser-Agent: instructions.py\r\nAccept: */*\r\n"
    if scenario == "card304":
        return f"GET {CARD_PATH} HTTP/1.1\r\n{head}If-None-Match: {etag}\r\n\r\n".encode()
    if scenario == "card":
        return f"GET {CARD_PATH} HTTP/1.1\r\n{head}\r\n".encode()
    streamed = scenario == "stream"
    body = json.dumps({"jsonrpc": "2.0", "id": n, "method": (
        "SendStreamingMessage" if streamed else "SendMessage"), "params": {
        "message": {"messageId": f"m-{os.getpid()}-{time.time_ns()}-{n}", "role": "ROLE_USER",
                    "parts": [{"text": "stream 10" if streamed else "hello"}]}}}).encode()
    accept = "Accept: text/event-stream\r\n" if streamed else ""
    return (f"POST / HTTP/1.1\r\n{head}{accept}Content-Type: application/json\r\n"
            f"A2A-Version: 1.0\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


#: The end of a chunked body, the chunk line before it included (a stream's events are chunks).
_LAST_CHUNK = b"\r\n0\r\n\r\n"


def _read_until(sock: socket.socket, buffer: bytes,
                done: Callable[[bytes], bool]) -> bytes | None:
    """``buffer`` and what the socket sends after it until ``done(buffer)``; None: closed."""
    while not done(buffer):
        data = sock.recv(65536)
        if not data:
            return None
        buffer += data
    return buffer


def _at_least(length: int, buffer: bytes) -> bool:
    return len(buffer) >= length


def _drive(scenario: str, port: int, etag: str, count: int) -> None:
    """``count`` requests over CONNECTIONS keep-alive connections; every answer checked."""
    expected = b"HTTP/1.1 304" if scenario == "card304" else b"HTTP/1.1 200"
    failures: list[str] = []

    def one_connection(share: int, offset: int) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=600) as sock:
            buffer = b""
            for index in range(share):
                sock.sendall(_request(scenario, port, etag, offset + index))
                read = _read_until(sock, buffer, lambda b: b"\r\n\r\n" in b)
                if read is None:
                    failures.append("closed")
                    return
                head, _, buffer = read.partition(b"\r\n\r\n")
                if not head.startswith(expected):
                    failures.append(head.split(b"\r\n", 1)[0].decode(errors="replace"))
                length = 0
                chunked = False
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                    elif name.strip().lower() == b"transfer-encoding":
                        chunked = b"chunked" in value.lower()
                if chunked:  # a stream: read to the last chunk (every event is in a chunk)
                    read = _read_until(sock, buffer, lambda b: _LAST_CHUNK in b)
                    if read is None:
                        failures.append("closed in a stream")
                        return
                    events, _, buffer = read.partition(_LAST_CHUNK)
                    if events.count(b"data: ") != 13 and scenario == "stream":
                        failures.append(f"{events.count(b'data: ')} events, not 13")
                    continue
                read = _read_until(sock, buffer, partial(_at_least, length))
                if read is None:
                    failures.append("closed in a body")
                    return
                buffer = read[length:]

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


def _server_argv(name: str, port: int) -> list[str]:
    if name == "sdk":
        return uvicorn_argv(port, 1)  # one process: uvicorn forks no worker for one
    target = "benchmarks.apps.ours:app" if name == "ours" else "benchmarks.apps.bare:app"
    return [*gunicorn_argv(target, port, 1), "--timeout", "900"]


def measure(name: str, env: dict[str, str], scenarios: list[str],
            requests: int, streams: int, out: Path) -> dict[str, float]:
    """Instructions per request of server ``name``'s worker for each scenario."""
    port = _free_port()
    argv = ["valgrind", "--tool=callgrind", "--trace-children=yes", "--instr-atstart=no",
            f"--callgrind-out-file={out}/cg.%p", *_server_argv(name, port)]
    log = open(out / f"{name}.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONPATH": str(ROOT),
                                    "A2A_BASE_URL": f"http://127.0.0.1:{port}/", **env},
                               start_new_session=True)
    results: dict[str, float] = {}
    try:
        _wait_ready(port, process)
        worker = process.pid if name == "sdk" else _worker_pid(process.pid)
        etag = _etag(port)
        for scenario in scenarios:
            _drive(scenario, port, etag, 320)  # warm-up: first-use work done, caches filled
            before = set(out.glob(f"cg.{worker}.*"))
            subprocess.run(["callgrind_control", "-z", "-i", "on", str(worker)], check=True,
                           capture_output=True)
            count = streams if scenario == "stream" else requests
            _drive(scenario, port, etag, count)
            subprocess.run(["callgrind_control", "-i", "off", str(worker)], check=True,
                           capture_output=True)
            subprocess.run(["callgrind_control", "-d", str(worker)], check=True,
                           capture_output=True)
            share = count // CONNECTIONS * CONNECTIONS
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
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--requests", type=int, default=1000, help="counted per scenario")
    parser.add_argument("--streams", type=int, default=192, help="counted for stream")
    parser.add_argument("--keep", action="store_true", help="keep callgrind's files")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("needs valgrind: apt-get install -y valgrind", file=sys.stderr)
        return 2
    scenarios = [s for s in args.scenarios.split(",") if s]
    servers = [s for s in args.servers.split(",") if s]
    unknown = (set(scenarios) - set(SCENARIOS)) | (set(servers) - set(SERVERS))
    if unknown:
        parser.error(f"unknown scenarios or servers: {sorted(unknown)}")
    if "sdk" in servers and not (SDK_VENV / "bin" / "python").exists():
        parser.error(f"no SDK venv at {SDK_VENV} (see benchmarks/README.md)")
    out = Path(tempfile.mkdtemp(prefix="a2a-instructions-"))
    counted: dict[str, dict[str, float]] = {}
    try:
        for name in servers:
            env = {"BENCH_CARD_FILE": str(_our_card(out))} if name == "bare" else {}
            # the SDK has no card validators: only send and stream compare with it
            mine = [s for s in scenarios if name != "sdk" or s in ("send", "stream")]
            counted[name] = measure(name, env, mine, args.requests, args.streams, out)
    finally:
        if args.keep:
            print(f"callgrind files in {out}")
        else:
            shutil.rmtree(out, ignore_errors=True)
    print(f"\n{'scenario':<10}" + "".join(f"{name:>12}" for name in servers)
          + "".join(f"{name + '/ours':>11}" for name in servers if name != "ours"))
    for scenario in scenarios:
        row = [counted[name].get(scenario) for name in servers]
        ours = counted.get("ours", {}).get(scenario)
        ratios = [counted[name].get(scenario) for name in servers if name != "ours"]
        print(f"{scenario:<10}" + "".join(f"{v:>12,.0f}" if v else f"{'-':>12}" for v in row)
              + "".join(f"{v / ours:>10.2f}x" if v and ours else f"{'-':>11}" for v in ratios))
    print("(x/ours: ours's throughput relative to x's if CPU were all that counted)")
    return 0


def _our_card(out: Path) -> Path:
    """Our card's bytes, for the bare app to serve (as in run.py)."""
    card_file = out / "card.json"
    port = _free_port()
    probe = subprocess.Popen(gunicorn_argv("benchmarks.apps.ours:app", port, 1), cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "PYTHONPATH": str(ROOT)},
                             start_new_session=True)
    try:
        card_file.write_bytes(_wait_ready(port, probe))
    finally:
        os.killpg(probe.pid, signal.SIGTERM)
        probe.wait()
    return card_file


if __name__ == "__main__":
    raise SystemExit(main())
