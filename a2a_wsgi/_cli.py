"""``a2a serve MODULE:OBJECT``: run a WSGI app under gunicorn with stream-friendly defaults.

The ``a2a`` command (:mod:`a2a_client.cli`) delegates ``a2a serve …`` here;
``python -m a2a_wsgi._cli serve …`` works without it. Before gunicorn starts, the
address and the app are checked (:mod:`a2a_wsgi._serve_checks`): a server that
cannot start says why in one line, with an exit code of its own.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence

from ._concurrency import cooperative
from ._grpc_process import check_grpc, grpc_environ, start_grpc_process
from ._serve import (
    GEVENT_DEFAULTS,
    GUNICORN_DEFAULTS,
    default_worker_class,
    parse_addr,
    run_gunicorn,
)
from ._serve_checks import (
    EXIT_ADDRESS,
    EXIT_APP,
    EXIT_EXTRA,
    EXIT_GRPC,
    EXIT_MODULE,
    EXIT_STOPPED,
    EXIT_STORE,
    EXIT_USAGE,
    StartupFailure,
    check_address,
    probe_app,
)

__all__ = ["build_parser", "serve_main", "main"]

#: The exit codes ``--help`` names (serve_checks.EXIT_CODES has them all, at length).
_SHORT = {EXIT_USAGE: "bad arguments", EXIT_MODULE: "module not importable",
          EXIT_APP: "no such app in it", EXIT_ADDRESS: "address not usable",
          EXIT_EXTRA: "extra not installed", EXIT_STORE: "task store not usable",
          EXIT_GRPC: "--grpc address not usable or gRPC process failed",
          EXIT_STOPPED: "stopped by a second Ctrl-C"}


def build_parser(prog: str = "a2a serve") -> argparse.ArgumentParser:
    """The ``serve`` options; defaults shown come from :data:`GUNICORN_DEFAULTS`."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve an A2A agent (any WSGI app) with gunicorn: its gevent worker "
                    "(gevent comes with a2a-wsgi), or --worker-class gthread.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog="Before gunicorn starts, the address, the app and its task stores are checked; "
               "a failure is one line and its own exit code: "
               + ", ".join(f"{code} {_SHORT[code]}" for code in sorted(_SHORT))
               + " (docs/deployment.md). The first Ctrl-C waits up to --graceful-timeout "
                 "for running tasks; a second one stops at once.",
    )
    parser.add_argument("target", metavar="MODULE:OBJECT",
                        help="the WSGI app to serve, e.g. examples.echo:app")
    parser.add_argument("-b", "--bind", default="127.0.0.1:8000", help="HOST:PORT to listen on")
    parser.add_argument("-w", "--workers", type=int, default=GUNICORN_DEFAULTS["workers"],
                        help="worker processes; with more than 1, apps that name no store use "
                             "SQLite ($A2A_STORE, default sqlite:// = $A2A_DB or "
                             "./a2a-tasks.sqlite3)")
    parser.add_argument("-k", "--worker-class", choices=("gevent", "gthread"),
                        default=default_worker_class(),
                        help="gevent: a stream is a greenlet (thousands per worker); gthread: a "
                             "stream holds a thread")
    parser.add_argument("--threads", type=int, default=GUNICORN_DEFAULTS["threads"],
                        help="gthread: threads per worker; each open SSE stream holds one")
    parser.add_argument("--worker-connections", type=int,
                        default=GEVENT_DEFAULTS["worker_connections"],
                        help="gevent: connections (open streams included) per worker")
    parser.add_argument("--timeout", type=int, default=GUNICORN_DEFAULTS["timeout"],
                        help="seconds of worker silence before it is restarted (0: never)")
    parser.add_argument("--graceful-timeout", type=int,
                        default=GUNICORN_DEFAULTS["graceful_timeout"],
                        help="seconds to finish open requests on shutdown")
    parser.add_argument("--keepalive", type=int, default=GUNICORN_DEFAULTS["keepalive"],
                        help="seconds an idle keep-alive connection stays open")
    parser.add_argument("--log-level", default="info", help="gunicorn log level")
    parser.add_argument("--grpc", metavar="HOST:PORT", default=None,
                        help="also serve A2A 1.0 over gRPC there, from a process of its own on "
                             "the workers' task store (the grpc extra; docs/grpc.md)")
    return parser


def serve_main(argv: Sequence[str]) -> int:
    """Run ``a2a serve`` with ``argv`` (with or without the leading "serve"); the exit code."""
    args = list(argv)
    if args[:1] == ["serve"]:
        args = args[1:]
    options = build_parser().parse_args(args)
    if ":" not in options.target:
        print(f"a2a serve: expected MODULE:OBJECT, got {options.target!r}", file=sys.stderr)
        return EXIT_USAGE
    try:
        host, port = parse_addr(options.bind)
        grpc_addr = None if options.grpc is None else parse_addr(options.grpc)
    except ValueError as exc:
        print(f"a2a serve: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if options.worker_class == "gevent" and not cooperative():
        _exec_patched(args)  # does not return
    sys.path.insert(0, ".")  # gunicorn does the same, so `examples.echo:app` resolves from cwd
    beside = None
    try:
        check_address(host, port)
        if grpc_addr is not None:
            check_grpc(*grpc_addr, http=(host, port))
            grpc_environ(*grpc_addr, os.environ)  # before the probe: it opens that store
        # With --grpc, another process serves the app: its store must be one both share.
        probe_app(options.target, workers=options.workers if grpc_addr is None
                  else max(options.workers, 2), timeout=options.timeout or None)
        if grpc_addr is not None:
            beside = start_grpc_process(options.target, *grpc_addr,
                                        grace=options.graceful_timeout,
                                        timeout=options.timeout or None)
            beside.watch()  # restarted when it dies, as gunicorn restarts a worker
    except StartupFailure as failure:
        print(f"a2a serve: {failure}", file=sys.stderr, flush=True)
        return failure.code
    except KeyboardInterrupt:  # Ctrl-C before gunicorn started: nothing runs yet
        return EXIT_STOPPED
    try:
        _run(options, host, port)
    finally:
        if beside is not None:
            beside.stop()
    return 0


def _freeze_before_fork(server: object, worker: object) -> None:
    """gunicorn's ``pre_fork``: a worker inherits the master's objects; frozen, no collection
    in the worker walks them, so their pages stay shared instead of being copied."""
    gc.collect()
    gc.freeze()


def _run(options: argparse.Namespace, host: str, port: int) -> None:
    run_gunicorn(
        options.target,
        bind=f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        workers=options.workers,
        worker_class=options.worker_class,
        threads=options.threads,
        worker_connections=(options.worker_connections
                            if options.worker_class == "gevent" else None),
        timeout=options.timeout,
        graceful_timeout=options.graceful_timeout,
        keepalive=options.keepalive,
        loglevel=options.log_level,
        pre_fork=_freeze_before_fork,
    )


#: Patch first, import after: modules imported before gevent's patch (ssl, by
#: requests) keep blocking code in them.
_PATCHED_SERVE = (
    "from gevent import monkey; monkey.patch_all()\n"
    "import sys\n"
    "from a2a_wsgi._cli import serve_main\n"
    "sys.exit(serve_main(sys.argv[1:]))\n"
)


def _exec_patched(args: Sequence[str]) -> None:
    """Replace this process by one that patches for gevent before importing anything."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-c", _PATCHED_SERVE, *args])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m a2a_wsgi._cli serve …``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] != ["serve"]:
        print("usage: python -m a2a_wsgi._cli serve MODULE:OBJECT [options]", file=sys.stderr)
        return 2
    return serve_main(args[1:])


if __name__ == "__main__":
    sys.exit(main())
