"""The suite fails, and ends, when a test leaves a thread that would hold the interpreter's exit.

``tests/conftest.py`` checks after the session; here a small suite with that conftest and one
test that leaves a pool thread blocked runs in its own pytest process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_BLOCKING = '''
import threading
from concurrent.futures import ThreadPoolExecutor

busy, idle = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
release = threading.Event()

def test_leaves_a_blocked_thread():
    busy.submit(release.wait)
    idle.submit(lambda: None).result()  # an idle worker the exit hook ends: not reported
'''


def _run(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_it.py").write_text(source)
    env = {**os.environ, "A2A_TEST_STRAY_GRACE": "0.5"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)


def test_a_blocked_thread_fails_the_run_with_its_stack(tmp_path: Path) -> None:
    run = _run(tmp_path, _BLOCKING)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    assert "1 non-daemon thread(s) still running" in run.stderr
    assert "release.wait" in run.stderr or "in wait" in run.stderr


def test_a_clean_run_exits_as_pytest_says(tmp_path: Path) -> None:
    run = _run(tmp_path, "def test_fine():\n    pass\n")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "non-daemon" not in run.stderr
