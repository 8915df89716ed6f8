"""The README's examples, run for real, so the README can never silently lie.

The ten-line server block is executed and its ``app`` served on a free loopback port;
the five-line client block and the ``a2a card`` / ``a2a send`` shell lines are pointed
at it (only the URL is rewritten) and their output checked.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a_core.models import TaskState
from a2a_wsgi import serve

README = Path(__file__).resolve().parents[1] / "README.md"
#: The URL the README's examples use; the tests put the served one in its place.
README_URL = "http://127.0.0.1:8000/"


def _blocks(language: str) -> list[str]:
    """The bodies of the README's fenced blocks in ``language``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(), re.S | re.M)


def _python_block(first_line: str) -> str:
    """The one ```python block that starts with ``first_line``."""
    found = [b for b in _blocks("python") if b.startswith(first_line)]
    assert len(found) == 1, f"README has {len(found)} python blocks starting {first_line!r}"
    return found[0]


def _client_commands() -> list[list[str]]:
    """The README's ``a2a card`` and ``a2a send`` shell lines, as argument lists."""
    lines = [line for block in _blocks("sh") for line in block.splitlines()]
    return [shlex.split(line) for line in lines if re.match(r"a2a (card|send) ", line)]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The README's server block, served; yields its URL (with the trailing slash)."""
    namespace: dict[str, Any] = {"__name__": "readme_server"}
    exec(_python_block("from a2a_core.models import"), namespace)
    app = namespace["app"]
    assert app.base_url is None  # the card advertises the URL the request came in on
    with serve(app, "127.0.0.1:0") as handle:
        yield handle.url + "/"
    app.close()


def _a2a(argv: list[str], url: str) -> subprocess.CompletedProcess[str]:
    """Run one README shell line through the installed ``a2a`` command."""
    assert argv[0] == "a2a" and README_URL in argv, argv
    # The venv's own entry point, by path: PATH may hold another a2a, or none at all.
    command = [str(Path(sys.executable).parent / "a2a")]
    args = [url if arg == README_URL else arg for arg in argv[1:]]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=60)


def test_the_client_block_prints_the_echoed_text(url: str) -> None:
    code = _python_block("from a2a_client import")
    assert code.count(README_URL) == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code.replace(README_URL, url), {"__name__": "readme_client"})
    assert out.getvalue() == f"{TaskState.COMPLETED} hello\n"


def test_the_readme_shows_the_card_and_send_commands() -> None:
    commands = [argv[:2] + argv[3:] for argv in _client_commands()]
    assert ["a2a", "card"] in commands
    assert ["a2a", "send", "hello", "--wait"] in commands


@pytest.mark.parametrize("argv", _client_commands(), ids=shlex.join)
def test_each_a2a_shell_line_works_against_the_server(argv: list[str], url: str) -> None:
    done = _a2a(argv, url)
    assert done.returncode == 0, done.stderr
    if argv[1] == "card":
        lines = done.stdout.splitlines()
        assert lines[:2] == ["Echo 0.1.0", "Says back what it hears"]
        assert f"JSONRPC 1.0  {url}" in done.stdout and "- echo: Echoes text" in done.stdout
    elif "--json" in argv:
        events = [json.loads(line) for line in done.stdout.splitlines()]
        assert "task" in events[0]
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        texts = [p["text"] for e in events if "artifactUpdate" in e
                 for p in e["artifactUpdate"]["artifact"]["parts"]]
        assert texts == ["hello"]
    else:
        first, *rest = done.stdout.splitlines()
        assert re.fullmatch(r"task \S+ \(completed\)  context \S+", first), first
        assert rest == ["hello"]


def test_python_m_a2a_client_runs_the_command(url: str) -> None:
    """``python -m a2a_client`` is the ``a2a`` command (it printed nothing and exited 0 once)."""
    done = subprocess.run([sys.executable, "-m", "a2a_client", "card", url],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "Echo 0.1.0"
    usage = subprocess.run([sys.executable, "-m", "a2a_client", "--help"],
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 0 and "usage: a2a" in usage.stdout
