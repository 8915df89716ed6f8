"""Running a page's Python fragment in its complete form: a program in its own interpreter.

A program is what the fragment needs (written by the test), the fragment exactly as the page
shows it, then what the test does with the result. It runs from an empty folder with the
checkout on ``PYTHONPATH`` (for ``examples``), in a fresh interpreter (Django's settings and
logging configuration are process-wide).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from doc_pages import ROOT

#: An HTTP client and a server for the programs' own checks.
CLIENT = """
import requests
from a2a_client import A2AClient
from a2a_wsgi import serve

def reply_text(task):
    return task.artifacts[0].parts[0].text
"""


def program(*parts: str) -> str:
    """The parts (each dedented) as one program."""
    return "\n".join(textwrap.dedent(part) for part in parts)


def run_program(text: str, folder: Path, *, stderr: bool = False) -> list[str]:
    """Run ``text`` in ``folder``; its stdout lines (or stderr's), after it exits 0."""
    script = folder / "program.py"
    script.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return (done.stderr if stderr else done.stdout).splitlines()
