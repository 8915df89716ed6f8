"""The ``a2a`` command line: its subcommands, their options, and the option types."""

from __future__ import annotations

import argparse
import os

from a2a_core import __version__
from a2a_core.models import TaskState

from ._cli_exits import EXIT_CODES
from .polling import DEFAULT_POLL_EVERY
from .transport import expand_headers

__all__ = ["build_parser"]


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
    parser.add_argument("--version", action="version", version=f"a2a {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    card = sub.add_parser("card", parents=[common], help="show the agent card")
    card.add_argument("url")
    card.add_argument("--check", action="store_true",
                      help="check the served card against the published A2A schemas")
    send = sub.add_parser("send", parents=[common], help="send a text message")
    send.add_argument("url")
    send.add_argument("text")
    send.add_argument("--stream", action="store_true", help="stream the task's events")
    send.add_argument("--wait", action="store_true", help="wait until the task settles")
    send.add_argument("--wait-timeout", type=float, default=300.0, help="--wait budget, seconds")
    send.add_argument(
        "--poll-every", type=float, default=DEFAULT_POLL_EVERY,
        help="--wait first polling interval, seconds (when the agent neither streams"
        " nor long-polls)",
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
