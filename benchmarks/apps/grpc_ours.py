"""Our gRPC server for the benchmarks: benchmarks/apps/ours.py's agent over ``serve_grpc``.

    python -m benchmarks.apps.grpc_ours --bind 127.0.0.1:9000 [--max-workers N]

One process, as ``python -m a2a_wsgi.grpc`` runs it, but on the store ``BENCH_STORE``
names (default memory, the store the SDK's server uses too): ``python -m a2a_wsgi.grpc``
refuses a memory store because ``a2a serve --grpc`` runs it beside other processes.
Prints ``LISTENING <port>`` once it serves; SIGTERM or SIGINT stops it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from a2a_wsgi.grpc import DEFAULT_MAX_WORKERS, serve_grpc

from .ours import app


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bind", default="127.0.0.1:0")
    parser.add_argument("--max-workers", type=int, default=DEFAULT_MAX_WORKERS)
    args = parser.parse_args(argv)
    server = serve_grpc(app, args.bind, max_workers=args.max_workers, multiprocess=False)
    print(f"LISTENING {server.port}", flush=True)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    stopping.wait()
    server.stop(1)
    app.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
