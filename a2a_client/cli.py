"""The ``a2a`` command: talk to an agent from a shell, or serve one (``a2a serve``).

::

    a2a card URL [--check]
    a2a --version
    a2a send URL TEXT [--file PATH] [--data JSON] [--accept MIME] [--history N]
                      [--stream] [--wait] [--context ID] [--task ID]
    a2a get URL TASK [--history N]
    a2a subscribe URL TASK
    a2a cancel URL TASK
    a2a tasks URL [--context ID] [--status STATE] [--page-size N] [--limit N]
    a2a push set URL TASK WEBHOOK [--id ID] [--webhook-token TOKEN]
    a2a push get|delete URL TASK CONFIG
    a2a push list URL TASK
    a2a serve ...                       (delegated to a2a_wsgi._cli)
    a2a db upgrade URL                  (delegated to a2a_wsgi._db_cli)
    a2a inspect URL [--port N] [--no-open] [--timeout S] [--allow-origin O]   (a2a_client._inspect)

Common options: ``--json`` (machine output on stdout), ``--header 'Name: value'``
(repeatable; ``${VAR}`` expands from the environment at each request), ``--token TOKEN``
(a bearer token for the agent's own origin; ``${VAR}`` expands too), ``--timeout S``,
``--protocol auto|0.3|1.0``, ``--binding auto|JSONRPC|HTTP+JSON|GRPC``. While ``--wait`` waits,
the task's state and the elapsed time are shown on stderr as a live line when stderr is a
terminal, and not at all on a pipe.

Exit codes (:data:`EXIT_CODES`) tell failure kinds apart for scripts.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from a2a_core import __version__

from ._cli_exits import EXIT_CODES, EXIT_OK
from ._cli_exits import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from ._cli_exits import EXIT_TASK_FAILED as EXIT_TASK_FAILED
from ._cli_signals import stop_on_signals

__all__ = ["main", "EXIT_CODES"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``a2a`` console script; returns the exit code.

    Run as the script (``argv`` None), Ctrl-C and SIGTERM stop it even when it was
    started with SIGINT ignored; a caller passing ``argv`` keeps its own handlers.
    """
    if argv is None:
        stop_on_signals()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # answered before anything of the client is imported
        sys.stdout.write(f"a2a {__version__}\n")
        return EXIT_OK
    if argv[:1] == ["serve"]:
        from a2a_wsgi._cli import serve_main  # lazy: the client does not need the server

        return serve_main(argv[1:])
    if argv[:1] == ["db"]:
        from a2a_wsgi._db_cli import db_main  # lazy, like serve

        return db_main(argv[1:])
    if argv[:1] == ["inspect"]:
        from ._inspect import main as inspect_main  # lazy: it serves a page

        return inspect_main(argv[1:])
    from ._cli_commands import run  # lazy: the client's modules, only for its commands

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
