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
    a2a serve ...                       (delegated to a2a_wsgi.cli)
    a2a db upgrade URL                  (delegated to a2a_wsgi.db_cli)
    a2a inspect URL [--port N] [--no-open] [--timeout S] [--allow-origin O]   (a2a_client.inspect)

Common options: ``--json`` (machine output on stdout), ``--header 'Name: value'``
(repeatable; ``${VAR}`` expands from the environment at each request), ``--token TOKEN``
(a bearer token for the agent's own origin; ``${VAR}`` expands too), ``--timeout S``,
``--protocol auto|0.3|1.0``, ``--binding auto|JSONRPC|HTTP+JSON``. While ``--wait`` waits,
the task's state and the elapsed time are shown on stderr as a live line when stderr is a
terminal, and not at all on a pipe.

Exit codes (:data:`EXIT_CODES`) tell failure kinds apart for scripts.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

from a2a_core.errors import A2AError, MethodNotFoundError, UnsupportedOperationError
from a2a_core.models import Task, TaskState
from a2a_core.wire import encode

from ._cli_check import check_card_command
from ._cli_exits import EXIT_CODES, EXIT_CTRL_C, EXIT_OK, EXIT_RPC_ERROR, EXIT_USAGE
from ._cli_exits import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from ._cli_exits import EXIT_TASK_FAILED as EXIT_TASK_FAILED
from ._cli_failures import describe_failure, url_problem
from ._cli_message import build_message
from ._cli_output import Output, show_event, show_result, state_name, stream_events, task_exit
from ._cli_parser import DEFAULT_ACCEPT, build_parser
from ._cli_push import push_command
from ._cli_signals import stop_on_signals
from .client import A2AClient
from .polling import is_settled

__all__ = ["main", "EXIT_CODES"]


def _send(client: A2AClient, args: argparse.Namespace, out: Output) -> int:
    message = build_message(args.text, args.file, args.data, args.context, args.task)
    options: dict[str, Any] = {"history_length": args.history,
                               "accepted_output_modes": args.accept or DEFAULT_ACCEPT}
    if args.stream:
        with client.stream_message(message, **options) as events:
            return stream_events(out, events)
    if not args.wait:
        result = client.send_message(message, **options)
        code = show_result(out, result)
        if isinstance(result, Task) and not is_settled(result):
            # The send blocks until the task settles; an agent that answers sooner (one
            # that ignores `blocking`, or a long task) leaves it running: say how to follow.
            out.err.write(f"a2a: task {result.id} is still {state_name(result.status.state)}; "
                          f"follow it with 'a2a subscribe {args.url} {result.id}', "
                          "or send with --wait\n")
        return code
    try:
        result = client.send_and_wait(
            message,
            poll_every=args.poll_every,
            timeout=args.wait_timeout,
            on_update=out.status,
            **options,
        )
    finally:
        out.end_status()
    return show_result(out, result)


def _subscribe(client: A2AClient, args: argparse.Namespace, out: Output) -> int:
    """SubscribeToTask until the stream ends; a task already settled is shown as it is.

    An agent whose card says it does not stream is followed by polling GetTask instead:
    each new state is a line, then the settled task as ``get`` shows it.
    """
    if not client.card.capabilities.streaming:
        shown: list[TaskState] = []

        def changed(snapshot: Task, _elapsed: float) -> None:
            if not is_settled(snapshot) and shown[-1:] != [snapshot.status.state]:
                shown.append(snapshot.status.state)
                show_event(out, snapshot)

        task = client.wait(args.task_id, timeout=math.inf, on_update=changed)
        if out.as_json:
            show_event(out, task)  # one StreamResponse per line, as on the stream path
            return task_exit(task)
        return show_result(out, task)
    try:
        with client.subscribe(args.task_id) as events:
            return stream_events(out, events)
    except UnsupportedOperationError:
        task = client.get_task(args.task_id)  # -32004: often the task is already settled
        if not is_settled(task):
            raise
        return show_result(out, task)


def _tasks(client: A2AClient, args: argparse.Namespace, out: Output) -> int:
    for count, task in enumerate(
        client.list_tasks(context_id=args.context, status=args.status, page_size=args.page_size)
    ):
        if args.limit is not None and count >= args.limit:
            break
        if out.as_json:
            out.json(encode(task, "1.0"))
        else:
            out.line(f"{task.id}  {state_name(task.status.state):15}  {task.context_id}")
    return EXIT_OK


_COMMANDS: dict[str, Callable[[A2AClient, argparse.Namespace, Output], int]] = {
    "card": lambda c, a, o: show_result(o, c.get_card()),
    "send": _send,
    "get": lambda c, a, o: show_result(o, c.get_task(a.task_id, history_length=a.history)),
    "subscribe": _subscribe,
    "cancel": lambda c, a, o: show_result(o, c.cancel_task(a.task_id)),
    "tasks": _tasks,
    "push": push_command,
}

#: The commands whose operation A2A 0.3 lacks: command -> the 1.0 operation.
_ONLY_1_0 = {"tasks": "ListTasks"}


def _command(client: A2AClient, args: argparse.Namespace, out: Output) -> int:
    """Run the command; a 1.0 operation a 0.3 agent does not know is explained as such."""
    try:
        return _COMMANDS[args.command](client, args, out)
    except MethodNotFoundError:
        operation = _ONLY_1_0.get(args.command)
        if operation is None or client.version != "0.3":
            raise
        speaks = ("you asked for 0.3 (--protocol 0.3)" if args.protocol == "0.3"
                  else "this agent speaks 0.3")
        return _fail(out, EXIT_RPC_ERROR,
                     f"{operation} is A2A 1.0; {speaks} (it answered -32601 Method not found)")


def _run(args: argparse.Namespace, out: Output) -> int:
    """Run one command, turning each failure kind into its exit code and one stderr line."""
    problem = url_problem(args.url)
    if problem is not None:
        return _fail(out, EXIT_USAGE, problem)
    try:
        if args.command == "card" and args.check:
            return check_card_command(args, out)
        with A2AClient(
            args.url,
            headers=dict(args.header),
            timeout=(min(args.timeout, 10.0), args.timeout),
            version=args.protocol,
            binding=args.binding,
            auth=args.token,
        ) as client:
            return _command(client, args, out)
    except (A2AError, ValueError) as exc:
        given = args.token is not None or any(
            name.lower() == "authorization" for name, _ in args.header)
        known = describe_failure(exc, args.url, args.timeout, credentials=given)
        if known is not None:
            return _fail(out, *known)
        if isinstance(exc, ValueError):
            return _fail(out, EXIT_USAGE, str(exc))
        raise


def _fail(out: Output, code: int, message: str) -> int:
    out.err.write(f"a2a: {message}\n")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``a2a`` console script; returns the exit code.

    Run as the script (``argv`` None), Ctrl-C and SIGTERM stop it even when it was
    started with SIGINT ignored; a caller passing ``argv`` keeps its own handlers.
    """
    if argv is None:
        stop_on_signals()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        from a2a_wsgi.cli import serve_main  # lazy: the client does not need the server

        return serve_main(argv[1:])
    if argv[:1] == ["db"]:
        from a2a_wsgi.db_cli import db_main  # lazy, like serve

        return db_main(argv[1:])
    if argv[:1] == ["inspect"]:
        from .inspect import main as inspect_main  # lazy: it serves a page

        return inspect_main(argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    out = Output(args.json, sys.stdout, sys.stderr)
    try:
        return _run(args, out)
    except KeyboardInterrupt:
        out.end_status()
        return EXIT_CTRL_C


if __name__ == "__main__":
    sys.exit(main())
