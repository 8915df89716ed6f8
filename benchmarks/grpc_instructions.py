"""Instructions per blocking SendMessage over gRPC, counted by callgrind: a ratio without noise.

    .venv/bin/python benchmarks/grpc_instructions.py                 # ours, sdk, bare
    .venv/bin/python benchmarks/grpc_instructions.py --servers ours,sdk --calls 400

grpc_run.py's calls/s and CPU per call move with the other load on a shared two-core
machine; this counts what does not move, as benchmarks/instructions.py does for HTTP. Each
server (exactly as grpc_run.py starts it, one process) runs inside ``valgrind
--tool=callgrind`` with counting off; a warm-up of ``--warmup`` calls, then counting on
(``callgrind_control -z -i on``) for ``--calls`` calls from 16 concurrent callers, off, and
a dump whose total (every thread of the process: grpcio's own, the pool's, the app's) is
divided by the count. Slow: the server runs ~50x slower under callgrind.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.grpc_run import (  # noqa: E402
    SERVERS,
    GrpcServer,
    check,
    server_argv,
    start,
    stop,
)


def _total(out: Path, pid: int, before: set[Path]) -> int:
    """The total of the dump callgrind wrote for ``pid`` since ``before`` was listed."""
    for _ in range(300):
        for path in sorted(set(out.glob(f"cg.{pid}*")) - before):
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("totals:"):
                    return int(line.split()[1])
        time.sleep(0.2)
    raise RuntimeError("callgrind wrote no dump")


def _calls(target: str, count: int, connections: int) -> int:
    """``count`` sends (a multiple of ``connections``) from ``connections`` callers."""
    async def run() -> int:
        import grpc

        from benchmarks.grpc_run import SEND, send_request

        async with grpc.aio.insecure_channel(target) as channel:
            call = channel.unary_unary(SEND)

            async def caller() -> None:
                for _ in range(count // connections):
                    await call(send_request(), timeout=600)

            await asyncio.gather(*(caller() for _ in range(connections)))
        return count // connections * connections
    return asyncio.run(run())


def measure(name: str, calls: int, warmup: int, out: Path) -> float:
    argv, env = server_argv(name)
    server = GrpcServer(name, ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                               f"--callgrind-out-file={out}/cg.%p", *argv], env)
    try:
        start(server, out, timeout=600)
        check(server)
        _calls(server.target, warmup, 16)
        before = set(out.glob(f"cg.{server.pid}*"))
        control = ["callgrind_control"]
        subprocess.run([*control, "-z", "-i", "on", str(server.pid)], check=True,
                       capture_output=True)
        done = _calls(server.target, calls, 16)
        subprocess.run([*control, "-i", "off", str(server.pid)], check=True, capture_output=True)
        subprocess.run([*control, "-d", str(server.pid)], check=True, capture_output=True)
        per_call = _total(out, server.pid, before) / done
    finally:
        stop(server)
    print(f"  {name:<6} {per_call:>12,.0f} instructions/call", flush=True)
    return per_call


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--calls", type=int, default=320)
    parser.add_argument("--warmup", type=int, default=160)
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("needs valgrind (callgrind, callgrind_control)", file=sys.stderr)
        return 2
    results = {}
    with tempfile.TemporaryDirectory(prefix="a2a-grpc-cg-") as folder:
        for name in [n for n in args.servers.split(",") if n]:
            results[name] = measure(name, args.calls, args.warmup, Path(folder))
    if "ours" in results:
        for other, count in results.items():
            if other != "ours":
                print(f"{other}/ours: {count / results['ours']:.2f}x instructions per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
