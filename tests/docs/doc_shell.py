"""Running the shell lines of README.md and docs/*.md as written, for the tests of tests/docs.

Each command runs in bash exactly as the page writes it, with only these substitutions:

* ``.venv/bin/`` is the folder of the venv running the tests (``sys.executable``'s);
* ``127.0.0.1:8000`` and ``127.0.0.1:9000`` become free loopback ports, and ``0.0.0.0:8000``
  the same loopback address as ``127.0.0.1:8000`` (nothing listens beyond the machine);
* the working directory is a temporary folder holding a copy of the checkout's
  ``examples`` (so files a command or an example writes, such as ``card-key.pem``, a
  SQLite file or the Django site's database, land there), ``HOME`` is a temporary folder
  and ``PATH`` is the venv's folder then the system's (``os.defpath``), whatever the
  caller's were;
* ``.venv/bin/pip install -e '.[EXTRA]' [PACKAGE ...]`` is checked, not run (the suite
  must not reinstall its own venv): ``EXTRA`` must be an extra of pyproject.toml whose
  requirements are all installed here, and so must each ``PACKAGE``;
* ``#`` lines are the page's notes, not commands.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest
import requests
from doc_pages import page_text
from packaging.requirements import Requirement
from support.gunicorn import free_port, stop_group

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
BASH = "/bin/bash"
_PIP_LINE = re.compile(r"^\.venv/bin/pip install -e '\.\[(\w+)\]'((?: [\w-]+)*)$")


def commands(page: str, containing: str) -> list[str]:
    """The lines of the one ```sh block of ``page`` (README.md or a docs/ page) that mentions
    ``containing``, with backslash continuations joined and ``#`` notes left out."""
    text = page_text(page)
    blocks = [b for b in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M) if containing in b]
    assert len(blocks) == 1, f"{page}: {len(blocks)} sh blocks mention {containing!r}"
    lines = [line.strip() for line in blocks[0].replace("\\\n", " ").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


class Shell:
    """Runs doc lines in bash with the substitutions above; stops what it started."""

    def __init__(self, folder: Path) -> None:
        self.cwd = folder / "work"
        self.cwd.mkdir()
        shutil.copytree(ROOT / "examples", self.cwd / "examples",
                        ignore=shutil.ignore_patterns("__pycache__", "*.sqlite3*", "*.pem"))
        home = folder / "home"
        home.mkdir()
        self.env = {"PATH": os.pathsep.join([str(VENV_BIN), os.defpath]), "HOME": str(home),
                    "LANG": "C.UTF-8"}
        self.ports = {"127.0.0.1:8000": f"127.0.0.1:{free_port()}",
                      "127.0.0.1:9000": f"127.0.0.1:{free_port()}"}
        self.ports["0.0.0.0:8000"] = self.ports["127.0.0.1:8000"]
        self.servers: list[tuple[subprocess.Popen[bytes], Path]] = []

    def substitute(self, line: str) -> str:
        line = line.replace(".venv/bin/", f"{VENV_BIN}/")
        for written, free in self.ports.items():
            line = line.replace(written, free)
        return line

    def url(self, written: str) -> str:
        """A URL as the page writes it, on the port the test uses instead."""
        for port, free in self.ports.items():
            written = written.replace(port, free)
        return written

    def run(self, line: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([BASH, "-c", self.substitute(line)], cwd=self.cwd, env=self.env,
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def script(self, lines: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Several lines in one bash, so a variable one sets is there for the next."""
        return self.run("\n".join(lines), timeout)

    def start(self, line: str, ready_url: str) -> Path:
        """Start a serving line; return its log once ``ready_url`` answers."""
        log = self.cwd.parent / f"server-{len(self.servers)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([BASH, "-c", self.substitute(line)], cwd=self.cwd,
                                    env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self.servers.append((proc, log))
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"{line}\nexited:\n{log.read_text(errors='replace')}"
            assert time.monotonic() < deadline, f"{line}\nnot ready:\n{log.read_text()}"
            try:
                requests.get(self.url(ready_url), timeout=10)
                return log
            except requests.RequestException:  # not listening yet, or workers still booting
                time.sleep(0.1)

    def stop(self) -> None:
        for proc, _ in self.servers:
            stop_group(proc)


def check_pip_line(line: str) -> None:
    """The install line names a real extra, and everything it brings is installed here."""
    match = _PIP_LINE.fullmatch(line)
    assert match, f"not the documented install form: {line}"
    toml = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    extras = toml.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert match[1] in extras, f"no extra {match[1]!r} in pyproject.toml"
    for spec in [*extras[match[1]], *match[2].split()]:
        requirement = Requirement(spec)
        installed = metadata.version(requirement.name)
        assert requirement.specifier.contains(installed, prereleases=True), (spec, installed)
