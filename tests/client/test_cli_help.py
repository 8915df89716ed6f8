"""Every command, argument and option of ``a2a`` has help text, and ``--help`` shows it."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from a2a_client._cli_parser import build_parser


def _parsers(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, argparse.Action]]:
    """(command path, action) for every action of ``parser`` and of every subcommand."""
    for action in parser._actions:
        yield name, action
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:  # the subcommands' own help lines
                yield f"{name} {choice.dest}", choice
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_no_command_argument_or_option_lacks_help() -> None:
    found = list(_parsers(build_parser(), "a2a"))
    missing = [f"{where}: {action.option_strings or action.dest}" for where, action in found
               if not action.help or action.help == argparse.SUPPRESS]
    assert missing == []
    # the walk reached the nested commands, so an empty list means something
    assert {"a2a send", "a2a subscribe", "a2a push set", "a2a push delete"} <= {
        where for where, _ in found}


def test_send_help_explains_url_and_text() -> None:
    done = subprocess.run([str(Path(sys.executable).with_name("a2a")), "send", "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0
    assert "URL                   the agent's base URL, or its card URL" in done.stdout
    assert "TEXT                  the message text" in done.stdout
    assert "default: text/plain and application/json" in " ".join(done.stdout.split())
