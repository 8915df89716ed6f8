"""``python -m a2a_wsgi.grpc module:app --bind HOST:PORT``: serve an app over gRPC.

The process serves gRPC only, beside the app's HTTP server (``a2a serve``), sharing its
task store: name one both can open (``A2A_STORE=sqlite:///path`` on one host). It runs
until SIGINT or SIGTERM, then ends open calls within ``--grace`` seconds.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from ..app import A2AApp
from ._server import DEFAULT_MAX_WORKERS, serve_grpc


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m a2a_wsgi.grpc",
                                     description="Serve an A2AApp's A2A 1.0 gRPC service.")
    parser.add_argument("app", help="the app to serve, e.g. examples.echo:app")
    parser.add_argument("--bind", default="127.0.0.1:50051", help="HOST:PORT to listen on")
    parser.add_argument("--max-workers", type=int, default=DEFAULT_MAX_WORKERS,
                        help="threads: calls and open streams together")
    parser.add_argument("--grace", type=float, default=5.0,
                        help="seconds open calls get to end when stopping")
    args = parser.parse_args(argv)
    from gunicorn.util import import_app  # type: ignore[import-untyped]

    sys.path.insert(0, ".")  # as gunicorn and `a2a serve` do: `examples.echo:app` from cwd
    app = import_app(args.app)
    if not isinstance(app, A2AApp):
        parser.error(f"{args.app} is not an A2AApp")
    # Other processes (the HTTP workers) may serve the same app: an in-memory store is refused.
    server = serve_grpc(app, args.bind, max_workers=args.max_workers, multiprocess=True)
    print(f"a2a: serving gRPC on {args.bind.rsplit(':', 1)[0]}:{server.port}", flush=True)
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    stopping.wait()
    server.stop(args.grace)
    app.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
