"""The ``a2a`` command: talk to an agent from a shell, or serve one (``a2a serve``).

::

    a2a card URL
    a2a send URL TEXT [--stream] [--wait] [--context ID] [--task ID]
    a2a get URL TASK [--history N]
    a2a cancel URL TASK
    a2a tasks URL [--context ID] [--status STATE] [--page-size N] [--limit N]
    a2a serve ...                       (delegated to a2a_wsgi.cli)
    a2a db upgrade URL                  (delegated to a2a_wsgi.db_cli)
    a2a inspect URL [--port N] [--no-open] [--timeout S]   (a2a_client.inspect)

Common options: ``--json`` (machine output on stdout), ``--header 'Name: value'``
(repeatable; ``${VAR}`` expands from the environment at each request), ``--token TOKEN``
(a bearer token for the agent's own origin; ``${VAR}`` expands too), ``--timeout S``,
``--protocol auto|0.3|1.0``, ``--binding auto|JSONRPC|HTTP+JSON``. While ``--wait`` polls,
the task's state and the elapsed time are shown on stderr as a live line when stderr is a
terminal, and not at all on a pipe.

Exit codes (:data:`EXIT_CODES`) tell failure kinds apart for scripts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from a2a_core.errors import RemoteProtocolError, RPCError
from a2a_core.models import (
    AgentCard,
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_core.wire import encode, encode_stream_event

from .client import A2AClient
from .errors import HTTPStatusError, TransportError, WaitTimeout
from .transport import expand_headers

__all__ = ["main", "EXIT_CODES"]

EXIT_OK = 0
EXIT_TASK_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 3
EXIT_RPC_ERROR = 4
EXIT_TRANSPORT = 5
EXIT_HTTP_STATUS = 6
EXIT_PROTOCOL = 7
EXIT_WAIT_TIMEOUT = 8
EXIT_CTRL_C = 130

#: code -> meaning, the documented contract (docs/client.md repeats it).
EXIT_CODES = {
    EXIT_OK: "success (task completed, message reply, or the command's answer)",
    EXIT_TASK_FAILED: "the task ended failed, canceled or rejected",
    EXIT_USAGE: "bad command line",
    EXIT_INTERRUPTED: "the task needs input or authentication (input-required, auth-required)",
    EXIT_RPC_ERROR: "the agent answered with an A2A error (e.g. task not found)",
    EXIT_TRANSPORT: "the agent could not be reached, or a timeout expired",
    EXIT_HTTP_STATUS: "an HTTP error status without an A2A error body (401, 404, 502…)",
    EXIT_PROTOCOL: "the agent's answer was not valid A2A",
    EXIT_WAIT_TIMEOUT: "--wait ran out of time before the task settled",
    EXIT_CTRL_C: "interrupted by Ctrl-C",
}


def _header(value: str) -> tuple[str, str]:
    """``'Name: value'`` -> (name, value); the value is a template, expanded per request."""
    name, sep, rest = value.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError("expected 'Name: value'")
    return name.strip(), rest.strip()


def _binding(value: str) -> str:
    """``auto``, ``JSONRPC`` or ``HTTP+JSON``, in any case."""
    for known in ("auto", "JSONRPC", "HTTP+JSON"):
        if value.strip().upper() == known.upper():
            return known
    raise argparse.ArgumentTypeError(f"unknown binding {value!r} (auto, JSONRPC, HTTP+JSON)")


def _token(value: str) -> str:
    """A bearer token; ``${VAR}`` expands from the environment once, here."""
    try:
        token = expand_headers({"token": value}, os.environ)["token"]
    except ValueError:
        raise argparse.ArgumentTypeError("the token contains a line break or NUL") from None
    if not token.strip():
        raise argparse.ArgumentTypeError("the token is empty (an unset variable?)")
    return token


def _state(value: str) -> TaskState:
    """A state in any spelling: completed, input-required, TASK_STATE_WORKING."""
    name = value.strip().upper().replace("-", "_").removeprefix("TASK_STATE_")
    try:
        return TaskState[name]
    except KeyError:
        raise argparse.ArgumentTypeError(f"unknown task state {value!r}") from None


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON (A2A 1.0 shapes) on stdout")
    common.add_argument(
        "--header",
        "-H",
        action="append",
        type=_header,
        default=[],
        metavar="'NAME: VALUE'",
        help="extra header; ${VAR} expands from the environment",
    )
    common.add_argument(
        "--timeout", type=float, default=60.0, help="read timeout per request, seconds"
    )
    common.add_argument(
        "--protocol",
        choices=("auto", "0.3", "1.0"),
        default="auto",
        help="protocol version to speak (default: from the card)",
    )
    common.add_argument(
        "--binding",
        type=_binding,
        default="auto",
        metavar="auto|JSONRPC|HTTP+JSON",
        help="protocol binding (default: the card's first one this client speaks)",
    )
    common.add_argument(
        "--token",
        type=_token,
        metavar="TOKEN",
        help="bearer token, sent to the agent's origin only; ${VAR} expands from the environment",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(
        prog="a2a",
        description="Call A2A agents; serve one with 'a2a serve'.",
        epilog="exit codes: " + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items()),
    )
    sub = parser.add_subparsers(dest="command", required=True)
    card = sub.add_parser("card", parents=[common], help="show the agent card")
    card.add_argument("url")
    send = sub.add_parser("send", parents=[common], help="send a text message")
    send.add_argument("url")
    send.add_argument("text")
    send.add_argument("--stream", action="store_true", help="stream the task's events")
    send.add_argument("--wait", action="store_true", help="poll until the task settles")
    send.add_argument("--wait-timeout", type=float, default=300.0, help="--wait budget, seconds")
    send.add_argument(
        "--poll-every", type=float, default=1.0, help="--wait first interval, seconds"
    )
    send.add_argument("--context", help="context id to continue")
    send.add_argument("--task", help="task id to continue (e.g. after input-required)")
    get = sub.add_parser("get", parents=[common], help="show a task")
    get.add_argument("url")
    get.add_argument("task_id", metavar="TASK")
    get.add_argument("--history", type=int, help="at most this many history messages")
    cancel = sub.add_parser("cancel", parents=[common], help="cancel a task")
    cancel.add_argument("url")
    cancel.add_argument("task_id", metavar="TASK")
    tasks = sub.add_parser("tasks", parents=[common], help="list tasks")
    tasks.add_argument("url")
    tasks.add_argument("--context", help="only this context")
    tasks.add_argument("--status", type=_state, help="only tasks in this state")
    tasks.add_argument("--page-size", type=int, help="tasks per request (1-100)")
    tasks.add_argument("--limit", type=int, help="stop after this many tasks")
    sub.add_parser("serve", help="serve an agent (see 'a2a serve --help')", add_help=False)
    sub.add_parser("db", help="create or upgrade a task store's tables (see 'a2a db --help')",
                   add_help=False)
    sub.add_parser("inspect", help="open the inspector page for any agent "
                   "(see 'a2a inspect --help')", add_help=False)
    return parser


class _Output:
    """Where results go: human text or JSON lines on stdout; live status on a TTY stderr."""

    def __init__(self, as_json: bool, out: TextIO, err: TextIO) -> None:
        self.as_json = as_json
        self.out = out
        self.err = err
        self.live = err.isatty()
        self._status_shown = False

    def json(self, value: Any) -> None:
        self.out.write(json.dumps(value, ensure_ascii=False) + "\n")

    def line(self, text: str) -> None:
        self.out.write(text + "\n")

    def status(self, task: Task, elapsed: float) -> None:
        """A live ``[state] 3.2s`` line, redrawn in place; nothing on a pipe."""
        if self.live:
            self.err.write(f"\r\x1b[K[{_state_name(task.status.state)}] {task.id} {elapsed:.1f}s")
            self.err.flush()
            self._status_shown = True

    def end_status(self) -> None:
        if self._status_shown:
            self.err.write("\r\x1b[K")
            self.err.flush()
            self._status_shown = False


def _state_name(state: TaskState) -> str:
    return state.value.replace("_", "-")


def _task_exit(task: Task) -> int:
    state = task.status.state
    if state is TaskState.COMPLETED:
        return EXIT_OK
    if state.is_interrupted:
        return EXIT_INTERRUPTED
    if state.is_terminal:
        return EXIT_TASK_FAILED
    return EXIT_OK  # submitted/working: a non-waiting send succeeded


def _describe_task(task: Task) -> list[str]:
    """Human lines: id, state, status message, artifact texts."""
    lines = [f"task {task.id} ({_state_name(task.status.state)})  context {task.context_id}"]
    if task.status.message is not None and task.status.message.text:
        lines.append(f"  status: {task.status.message.text}")
    for artifact in task.artifacts:
        text = "\n".join(p.text for p in artifact.parts if hasattr(p, "text"))
        lines.append(text if text else f"  [artifact {artifact.artifact_id}: non-text parts]")
    return lines


def _show_result(out: _Output, result: Task | Message | AgentCard) -> int:
    if out.as_json:
        out.json(encode(result, "1.0"))
    elif isinstance(result, Message):
        out.line(result.text)
    elif isinstance(result, AgentCard):
        out.line(_describe_card(result))
    else:
        out.line("\n".join(_describe_task(result)))
    return _task_exit(result) if isinstance(result, Task) else EXIT_OK


def _describe_card(card: AgentCard) -> str:
    lines = (
        [f"{card.name} {card.version}", card.description]
        if card.description
        else [f"{card.name} {card.version}"]
    )
    for interface in card.supported_interfaces:
        lines.append(
            f"  {interface.protocol_binding} {interface.protocol_version}  {interface.url}"
        )
    caps = card.capabilities
    lines.append(f"  streaming={bool(caps.streaming)} push={bool(caps.push_notifications)}")
    for skill in card.skills:
        lines.append(f"  - {skill.id}: {skill.description or skill.name}")
    return "\n".join(lines)


def _event_line(event: StreamEvent) -> str:
    if isinstance(event, TaskStatusUpdateEvent):
        text = event.status.message.text if event.status.message else ""
        return f"[{_state_name(event.status.state)}] {text}".rstrip()
    if isinstance(event, TaskArtifactUpdateEvent):
        return "\n".join(p.text for p in event.artifact.parts if hasattr(p, "text"))
    if isinstance(event, Message):
        return event.text
    return f"[{_state_name(event.status.state)}] task {event.id}"


def _stream(out: _Output, events: Iterable[StreamEvent]) -> int:
    """Print each event; the exit code follows the last known task state."""
    code = EXIT_OK
    for event in events:
        if out.as_json:
            out.json(encode_stream_event(event, "1.0"))
        else:
            out.line(_event_line(event))
        if isinstance(event, (Task, TaskStatusUpdateEvent)):
            state = event.status.state
            code = (
                EXIT_OK
                if state is TaskState.COMPLETED
                else EXIT_INTERRUPTED
                if state.is_interrupted
                else EXIT_TASK_FAILED
                if state.is_terminal
                else code
            )
    return code


def _send(client: A2AClient, args: argparse.Namespace, out: _Output) -> int:
    if args.stream:
        with client.stream_message(args.text, context_id=args.context, task_id=args.task) as events:
            return _stream(out, events)
    if not args.wait:
        return _show_result(
            out, client.send_message(args.text, context_id=args.context, task_id=args.task)
        )
    try:
        result = client.send_and_wait(
            args.text,
            context_id=args.context,
            task_id=args.task,
            poll_every=args.poll_every,
            timeout=args.wait_timeout,
            on_update=out.status,
        )
    finally:
        out.end_status()
    return _show_result(out, result)


def _tasks(client: A2AClient, args: argparse.Namespace, out: _Output) -> int:
    for count, task in enumerate(
        client.list_tasks(context_id=args.context, status=args.status, page_size=args.page_size)
    ):
        if args.limit is not None and count >= args.limit:
            break
        if out.as_json:
            out.json(encode(task, "1.0"))
        else:
            out.line(f"{task.id}  {_state_name(task.status.state):15}  {task.context_id}")
    return EXIT_OK


_COMMANDS: dict[str, Callable[[A2AClient, argparse.Namespace, _Output], int]] = {
    "card": lambda c, a, o: _show_result(o, c.get_card()),
    "send": _send,
    "get": lambda c, a, o: _show_result(o, c.get_task(a.task_id, history_length=a.history)),
    "cancel": lambda c, a, o: _show_result(o, c.cancel_task(a.task_id)),
    "tasks": _tasks,
}


def _run(args: argparse.Namespace, out: _Output) -> int:
    """Run one command, turning each failure kind into its exit code (message on stderr)."""
    try:
        with A2AClient(
            args.url,
            headers=dict(args.header),
            timeout=(min(args.timeout, 10.0), args.timeout),
            version=args.protocol,
            binding=args.binding,
            auth=args.token,
        ) as client:
            return _COMMANDS[args.command](client, args, out)
    except WaitTimeout as exc:
        return _fail(out, EXIT_WAIT_TIMEOUT, str(exc))
    except RPCError as exc:
        return _fail(out, EXIT_RPC_ERROR, f"error {exc.code}: {exc.message}")
    except HTTPStatusError as exc:
        return _fail(out, EXIT_HTTP_STATUS, str(exc))
    except TransportError as exc:
        return _fail(out, EXIT_TRANSPORT, f"{type(exc).__name__}: {exc}")
    except RemoteProtocolError as exc:
        return _fail(out, EXIT_PROTOCOL, f"invalid answer: {exc}")
    except ValueError as exc:
        return _fail(out, EXIT_USAGE, str(exc))


def _fail(out: _Output, code: int, message: str) -> int:
    out.err.write(f"a2a: {message}\n")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``a2a`` console script; returns the exit code."""
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
    out = _Output(args.json, sys.stdout, sys.stderr)
    try:
        return _run(args, out)
    except KeyboardInterrupt:
        out.end_status()
        return EXIT_CTRL_C


if __name__ == "__main__":
    sys.exit(main())
