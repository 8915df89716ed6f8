"""The ``a2a`` command line: its subcommands, their options, and the option types."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from a2a_core import __version__
from a2a_core.models import TaskState

from ._cli_exits import EXIT_CODES
from ._polling import DEFAULT_POLL_EVERY
from ._transport import expand_headers

__all__ = ["DEFAULT_ACCEPT", "build_parser"]


def _header(value: str) -> tuple[str, str]:
    """``'Name: value'`` -> (name, value); the value is a template, expanded per request."""
    name, sep, rest = value.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError("expected 'Name: value'")
    return name.strip(), rest.strip()


def _binding(value: str) -> str:
    """``auto``, ``JSONRPC``, ``HTTP+JSON`` or ``GRPC``, in any case."""
    for known in ("auto", "JSONRPC", "HTTP+JSON", "GRPC"):
        if value.strip().upper() == known.upper():
            return known
    raise argparse.ArgumentTypeError(f"unknown binding {value!r} (auto, JSONRPC, HTTP+JSON, "
                                     "GRPC)")


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
        "--timeout", type=float, default=60.0, metavar="S",
        help="read timeout per request, seconds (default: 60)"
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
        metavar="auto|JSONRPC|HTTP+JSON|GRPC",
        help="protocol binding (default: the card's first one this client speaks; GRPC, "
             "only when named, needs the grpc extra)",
    )
    common.add_argument(
        "--token",
        type=_token,
        metavar="TOKEN",
        help="bearer token, sent to the agent's origin only; ${VAR} expands from the environment",
    )
    return common


#: acceptedOutputModes sent when --accept is not given: what the command can print. Some
#: 0.3 servers refuse a send without the member (one answered HTTP 500).
DEFAULT_ACCEPT = ("text/plain", "application/json")

_URL_HELP = "the agent's base URL, or its card URL"


def _json_value(value: str) -> object:
    """``--data``: any JSON value (A2A 0.3 allows only an object)."""
    try:
        return json.loads(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc})") from None


def _count(value: str) -> int:
    """A count that may be zero (``--history 0``: no history)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return number


def _history(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--history", type=_count, metavar="N",
                        help="at most N history messages in the task shown (0: none)")


def _send_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    send = sub.add_parser("send", parents=[common], help="send a message (text, files, data)")
    send.add_argument("url", metavar="URL", help=_URL_HELP)
    send.add_argument("text", metavar="TEXT",
                      help="the message text ('' to send only --file/--data parts)")
    send.add_argument("--file", action="append", default=[], metavar="PATH",
                      help="attach a file (bytes inline, media type guessed from the name); "
                      "repeatable")
    send.add_argument("--data", action="append", default=[], type=_json_value, metavar="JSON",
                      help="attach a data part (a JSON value; an object for A2A 0.3); repeatable")
    send.add_argument("--accept", action="append", default=[], metavar="MIME",
                      help="an output media type you accept (acceptedOutputModes); repeatable;"
                      f" default: {' and '.join(DEFAULT_ACCEPT)}")
    _history(send)
    send.add_argument("--stream", action="store_true", help="stream the task's events")
    send.add_argument("--wait", action="store_true",
                      help="follow the task until it settles (completed, failed, needs input…)")
    send.add_argument("--wait-timeout", type=float, default=300.0, metavar="S",
                      help="--wait budget, seconds (default: 300)")
    send.add_argument(
        "--poll-every", type=float, default=DEFAULT_POLL_EVERY, metavar="S",
        help="--wait first polling interval, seconds (when the agent neither streams"
        " nor long-polls)",
    )
    send.add_argument("--context", metavar="ID", help="context id to continue")
    send.add_argument("--task", metavar="ID",
                      help="task id to continue (e.g. after input-required)")


def _push_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    push = sub.add_parser("push", help="manage a task's push-notification configs",
                          description="Manage a task's push-notification (webhook) configs.")
    actions = push.add_subparsers(dest="push_command", required=True, metavar="ACTION",
                                  help="set, get, list or delete")
    made = {
        "set": actions.add_parser("set", parents=[common],
                                  help="register a webhook for the task's updates"),
        "get": actions.add_parser("get", parents=[common], help="show one config"),
        "list": actions.add_parser("list", parents=[common], help="list the task's configs"),
        "delete": actions.add_parser("delete", parents=[common], help="delete one config"),
    }
    for name, parser in made.items():
        parser.add_argument("url", metavar="URL", help=_URL_HELP)
        parser.add_argument("task_id", metavar="TASK", help="the task's id")
        if name == "set":
            parser.add_argument("webhook", metavar="WEBHOOK",
                                help="the http(s) URL the agent POSTs the task's updates to")
            parser.add_argument("--id", dest="config_id", metavar="ID",
                                help="the config's id (default: the agent picks one)")
            parser.add_argument("--webhook-token", metavar="TOKEN",
                                help="a token the agent sends with each notification "
                                "(X-A2A-Notification-Token), for the receiver to check")
        elif name in ("get", "delete"):
            parser.add_argument("config_id", metavar="CONFIG",
                                help="the config's id (as 'push set' or 'push list' shows it)")


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(
        prog="a2a",
        description="Call A2A agents; serve one with 'a2a serve'.",
        epilog="exit codes: " + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items()),
    )
    parser.add_argument("--version", action="version", version=f"a2a {__version__}",
                        help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="what to do ('a2a COMMAND --help' for its options)")
    card = sub.add_parser("card", parents=[common], help="show the agent card")
    card.add_argument("url", metavar="URL", help=_URL_HELP)
    card.add_argument("--check", action="store_true",
                      help="check the served card against the published A2A schemas")
    _send_parser(sub, common)
    get = sub.add_parser("get", parents=[common], help="show a task")
    get.add_argument("url", metavar="URL", help=_URL_HELP)
    get.add_argument("task_id", metavar="TASK", help="the task's id")
    _history(get)
    subscribe = sub.add_parser("subscribe", parents=[common],
                               help="follow a task's events until it settles")
    subscribe.add_argument("url", metavar="URL", help=_URL_HELP)
    subscribe.add_argument("task_id", metavar="TASK", help="the task's id")
    cancel = sub.add_parser("cancel", parents=[common], help="cancel a task")
    cancel.add_argument("url", metavar="URL", help=_URL_HELP)
    cancel.add_argument("task_id", metavar="TASK", help="the task's id")
    tasks = sub.add_parser("tasks", parents=[common], help="list tasks (A2A 1.0)")
    tasks.add_argument("url", metavar="URL", help=_URL_HELP)
    tasks.add_argument("--context", metavar="ID", help="only this context")
    tasks.add_argument("--status", type=_state, metavar="STATE",
                       help="only tasks in this state (e.g. working, input-required)")
    tasks.add_argument("--page-size", type=int, metavar="N", help="tasks per request (1-100)")
    tasks.add_argument("--limit", type=int, metavar="N", help="stop after N tasks")
    _push_parser(sub, common)
    sub.add_parser("serve", help="serve an agent (see 'a2a serve --help')", add_help=False)
    sub.add_parser("db", help="create or upgrade a task store's tables (see 'a2a db --help')",
                   add_help=False)
    sub.add_parser("inspect", help="open the inspector page for any agent "
                   "(see 'a2a inspect --help')", add_help=False)
    return parser
