"""Importing an example (or any module that builds an app) starts nothing and touches no file.

Each example is imported in a fresh interpreter whose working directory is an
empty folder; afterwards only the main thread runs and the folder is still empty.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py") if p.stem != "__init__")
#: Examples that build no app at import (a config; a tool whose main() serves): they
#: must still import cleanly.
NOT_APPS = {"gunicorn_logging", "push_receiver"}

_PROBE = """
import importlib, json, os, sys, threading
module = importlib.import_module(sys.argv[1])
print(json.dumps({
    "threads": sorted(t.name for t in threading.enumerate()),
    "files": sorted(os.listdir(".")),
    "apps": [name for name, value in vars(module).items() if callable(value)
             and type(value).__name__ in ("A2AApp", "DispatcherMiddleware", "WSGIHandler")],
}))
"""


@pytest.mark.parametrize("name", EXAMPLES)
def test_importing_an_example_starts_no_thread_and_creates_no_file(
        name: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("A2A_STORE", None)
    done = subprocess.run([sys.executable, "-c", _PROBE, f"examples.{name}"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["apps"] or name in NOT_APPS, f"examples.{name} builds no app"
    assert seen["threads"] == ["MainThread"], seen
    assert seen["files"] == [], seen


def test_the_examples_are_all_found() -> None:
    assert {"echo", "calc", "flask_mount", "django_mount", "tck_agent"} <= set(EXAMPLES)
