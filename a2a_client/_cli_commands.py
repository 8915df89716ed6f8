"""The client commands of ``a2a`` (card, send, get, …): parsed, run, failures mapped to exit
codes. :mod:`a2a_client.cli` imports this module only for such a command, so ``a2a --version``
and ``a2a serve`` load nothing of the client."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import Any

from a2a_core.errors import A2AError, MethodNotFoundError, UnsupportedOperationError
from a2a_core.models import Task, TaskState
from a2a_core.wire import encode

from ._channels import GrpcExtraMissingError
from ._cli_check import check_card_command
from ._cli_exits import EXIT_CTRL_C, EXIT_OK, EXIT_RPC_ERROR, EXIT_USAGE
from ._cli_failures import describe_failure, url_problem
from ._cli_message import build_message
from ._cli_output import Output, show_event, show_result, state_name, stream_events, task_exit
from ._cli_parser import DEFAULT_ACCEPT, build_parser
from ._cli_push import push_command
from ._client import A2AClient
from ._polling import is_settled

__all__ = ["run"]


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
    except GrpcExtraMissingError as exc:  # --binding GRPC without the extra
        return _fail(out, EXIT_USAGE, str(exc))
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


def run(argv: list[str]) -> int:
    """Parse ``argv`` (a client command) and run it; returns the exit code."""
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
