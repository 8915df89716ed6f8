"""The shell sessions in the docs are run, and their output checked.

A session is a ```sh block whose lines start with ``$ ``: each ``$ `` line is a command,
the lines after it (up to the next command) its output, where ``…`` stands for any text
(ids, timestamps, the rest of a long line). The commands run in bash against a fresh
``examples/echo.py`` app served on an ephemeral port (``http://127.0.0.1:8000`` in the
docs is rewritten to it), with the venv's ``a2a`` first on PATH and ``$TASK`` set to the
first task id an answer showed.

``curl`` lines run with /usr/bin/curl when it is there; they also run through a small
curl interpreter over requests (the flags the docs use: -s -S -N -X -H -d -w, quoting
by shlex), so the docs stay checked on a machine without curl, and both must agree.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from support.a2a_http import served

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"serving": ROOT / "docs" / "serving.md", "client": ROOT / "docs" / "client.md"}
DOC_URL = "http://127.0.0.1:8000"
CURL = Path("/usr/bin/curl")
VENV_BIN = Path(sys.executable).parent
_TASK_ID = re.compile(r"\b(tsk-[0-9a-f]{32})\b")


@dataclass(frozen=True)
class Step:
    command: str
    expected: tuple[str, ...]


def sessions(markdown: str) -> list[list[Step]]:
    """The ``$ `` sessions of every ```sh block."""
    found: list[list[Step]] = []
    for block in re.findall(r"^```sh\n(.*?)^```", markdown, flags=re.S | re.M):
        steps: list[Step] = []
        for line in block.rstrip("\n").split("\n"):
            if line.startswith("$ "):
                steps.append(Step(line[2:], ()))
            elif steps:
                last = steps[-1]
                steps[-1] = Step(last.command, (*last.expected, line))
        if steps:
            found.append(steps)
    return found


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(piece) for piece in line.split("…")), re.S)


def assert_output(step: Step, output: str) -> None:
    lines = output.rstrip("\n").split("\n") if output.strip() else []
    expected = list(step.expected)
    while expected and expected[-1] == "":
        expected.pop()
    assert len(lines) == len(expected), (step.command, output)
    for got, want in zip(lines, expected, strict=True):
        assert _pattern(want).fullmatch(got), f"{step.command}\n  want {want}\n  got  {got}"


# -- running a command -------------------------------------------------------------------


def run_in_bash(command: str, env: dict[str, str]) -> str:
    """stdout and stderr in the order written, as a terminal shows them."""
    result = subprocess.run(["bash", "-c", command], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, timeout=60,
                            stdin=subprocess.DEVNULL)
    return result.stdout


def run_curl_interpreted(command: str, env: dict[str, str]) -> str:
    """One ``curl`` command line, done with requests: the flags the docs use."""
    words = shlex.split(_expand(command, env))
    assert words[0] == "curl", command
    method, headers, data, write_out, url = None, {}, None, None, None
    args = iter(words[1:])
    for word in args:
        if word in ("-s", "-S", "-N", "-sN", "-sS"):
            continue
        if word == "-X":
            method = next(args)
        elif word == "-H":
            name, _, value = next(args).partition(":")
            headers[name.strip()] = value.strip()
        elif word == "-d":
            data = next(args).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif word == "-w":
            write_out = next(args)
        elif word.startswith("-"):
            raise AssertionError(f"the interpreter does not know curl's {word}")
        else:
            url = word
    assert url is not None, command
    verb = method or ("POST" if data is not None else "GET")
    response = requests.request(verb, url, headers=headers, data=data, timeout=30)
    out = response.content.decode()
    if write_out is not None:
        out += write_out.replace("%{http_code}", str(response.status_code)).replace("\\n", "\n")
    return out


def _expand(command: str, env: dict[str, str]) -> str:
    """``$NAME`` outside single quotes, as bash would (the docs use ``$TASK`` only)."""
    pieces = re.split(r"('[^']*')", command)
    return "".join(p if p.startswith("'") else re.sub(
        r"\$([A-Z_]+)", lambda m: env.get(m.group(1), ""), p) for p in pieces)


# -- the app the docs talk to --------------------------------------------------------------


def _echo_app() -> object:
    """A fresh examples/echo.py app (the module builds it at import)."""
    path = ROOT / "examples" / "echo.py"
    spec = importlib.util.spec_from_file_location("docs_echo_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


@pytest.fixture
def echo_url() -> Iterator[str]:
    with served(_echo_app()) as handle:
        yield handle.url


def _run_session(steps: list[Step], url: str, runner: str) -> None:
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
           "LANG": "C.UTF-8"}
    for step in steps:
        command = step.command.replace(DOC_URL, url)
        if runner == "interpreter" and command.startswith("curl "):
            output = run_curl_interpreted(command, env)
        else:
            output = run_in_bash(command, env)
        assert_output(step, output.replace(url, DOC_URL))
        if "TASK" not in env and (found := _TASK_ID.search(output)):
            env["TASK"] = found.group(1)


def _cases() -> list[tuple[str, int]]:
    return [(name, index) for name, path in DOCS.items()
            for index, _ in enumerate(sessions(path.read_text()))]


def test_the_docs_have_the_sessions_we_expect() -> None:
    """The HTTP+JSON section of serving.md and the binding section of client.md."""
    serving = [s.command for steps in sessions(DOCS["serving"].read_text()) for s in steps]
    client = [s.command for steps in sessions(DOCS["client"].read_text()) for s in steps]
    assert sum(c.startswith("curl ") for c in serving) >= 10
    assert any("--binding HTTP+JSON" in c for c in client)
    assert any(c.startswith("curl ") for c in client)


@pytest.mark.parametrize("runner", ["bash", "interpreter"])
@pytest.mark.parametrize(("doc", "index"), _cases(), ids=[f"{d}-{i}" for d, i in _cases()])
def test_doc_session(echo_url: str, doc: str, index: int, runner: str) -> None:
    if runner == "bash" and not CURL.exists():
        steps = sessions(DOCS[doc].read_text())[index]
        if any(step.command.startswith("curl ") for step in steps):
            pytest.skip("no /usr/bin/curl here: the interpreter runs these lines")
    _run_session(sessions(DOCS[doc].read_text())[index], echo_url, runner)


def test_the_matcher_can_fail() -> None:
    step = Step("x", ('{"a":"…","b":1}',))
    assert_output(step, '{"a":"anything","b":1}\n')
    with pytest.raises(AssertionError):
        assert_output(step, '{"a":"anything","b":2}')
    with pytest.raises(AssertionError):
        assert_output(step, '{"a":"x","b":1}\nextra line')
