"""``python -m a2a_wsgi.grpc module:app --bind HOST:PORT``: serve an app over gRPC.

The process serves gRPC only, beside the app's HTTP server (``a2a serve``), sharing its
task store: name one both can open (``A2A_STORE=sqlite:///path`` on one host). It runs
until SIGINT or SIGTERM, then ends open calls within ``--grace`` seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from .._app import A2AApp
from .._store_choice import MemoryStoreInManyProcessesError, MissingExtraError
from ..stores._base import StoreOpenError
from ._server import DEFAULT_MAX_STREAMS, DEFAULT_MAX_WORKERS, serve_grpc


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m a2a_wsgi.grpc",
                                     description="Serve an A2AApp's A2A 1.0 gRPC service.")
    parser.add_argument("app", help="the app to serve, e.g. examples.echo:app")
    parser.add_argument("--bind", default="127.0.0.1:50051", help="HOST:PORT to listen on")
    parser.add_argument("--max-workers", type=int, default=DEFAULT_MAX_WORKERS,
                        help="threads for unary calls in flight")
    parser.add_argument("--max-streams", type=int, default=DEFAULT_MAX_STREAMS,
                        help="streams open at once, a thread each; one more is refused")
    parser.add_argument("--grace", type=float, default=5.0,
                        help="seconds open calls get to end when stopping")
    parser.add_argument("--with-parent", action="store_true",
                        help="also stop when stdin closes (a2a serve --grpc: when it ends)")
    args = parser.parse_args(argv)
    from .._gunicorn_internals import import_app

    sys.path.insert(0, ".")  # as gunicorn and `a2a serve` do: `examples.echo:app` from cwd
    app = import_app(args.app)
    if not isinstance(app, A2AApp):
        parser.error(f"{args.app} is not an A2AApp")
    _raise_open_files(2 * args.max_streams + 256)
    # Other processes (the HTTP workers) may serve the same app: an in-memory store is refused.
    try:
        server = serve_grpc(app, args.bind, max_workers=args.max_workers,
                            max_streams=args.max_streams, multiprocess=True)
    except (MemoryStoreInManyProcessesError, MissingExtraError, StoreOpenError, OSError,
            RuntimeError) as exc:  # (grpcio's "Failed to bind" is a RuntimeError)
        print(f"a2a: gRPC on {args.bind}: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"a2a: serving gRPC on {args.bind.rsplit(':', 1)[0]}:{server.port}", flush=True)
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.with_parent:
        threading.Thread(target=_stop_at_eof, args=(stopping,), name="a2a-grpc-parent",
                         daemon=True).start()
    stopping.wait()
    server.stop(args.grace)
    app.close()
    return 0


def _raise_open_files(needed: int) -> None:
    """Each held stream keeps two descriptors (its hang-up socket pair, ._hangup): raise
    the soft limit towards the hard one when the default (often 1,024) is too low."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _stop_at_eof(stopping: threading.Event) -> None:
    """Read stdin to its end (the parent holds the other end of the pipe), then stop.
    The bare descriptor: a thread blocked in the buffered reader would hold its lock at exit."""
    while os.read(sys.stdin.fileno(), 4096):
        pass
    stopping.set()


if __name__ == "__main__":
    sys.exit(main())
