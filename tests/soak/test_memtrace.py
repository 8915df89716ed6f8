"""``soak.py --tracemalloc``: forked workers write tracemalloc snapshots, memdiff.py compares them.

A parent with the hook on PYTHONPATH forks a child that allocates and holds
1,000 buffers between its snapshots (it waits for the files, not for a time);
the snapshots must show them as the top growth.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.gunicorn import ROOT

HOOK = ROOT / "benchmarks" / "memtrace"
MEMDIFF = ROOT / "benchmarks" / "memdiff.py"

CHILD = """
import os, sys, time
folder = sys.argv[1]


def snapshots_after(count):
    # Wait (up to a minute) until the child has written more than ``count`` snapshots.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = [name for name in os.listdir(folder) if name.endswith(".snap")]
        if len(done) > count:
            return len(done)
        time.sleep(0.05)
    raise SystemExit("no snapshot")


pid = os.fork()
if pid == 0:
    seen = snapshots_after(0)                      # a snapshot before the growth
    held = [bytearray(1000) for _ in range(1000)]  # the growth: about 1 MB
    snapshots_after(seen + 1)                      # the second one after it surely sees it
    os._exit(0)
_, status = os.waitpid(pid, 0)
print(pid)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_forked_worker_snapshots_and_its_growth_is_named(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    snaps_dir = tmp_path / "snaps"
    snaps_dir.mkdir()
    env.update(PYTHONPATH=str(HOOK), A2A_SOAK_TRACEMALLOC=str(snaps_dir),
               A2A_SOAK_TRACEMALLOC_EVERY="0.5")
    script = tmp_path / "child.py"  # a file, so the traceback names its line
    script.write_text(CHILD)
    done = subprocess.run([sys.executable, str(script), str(snaps_dir)], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    child = done.stdout.strip()
    snaps = sorted(path.name for path in snaps_dir.glob("*.snap"))
    assert len(snaps) >= 2 and all(name.startswith(f"{child}-") for name in snaps), snaps
    report = subprocess.run([sys.executable, str(MEMDIFF), str(snaps_dir), "--skip", "0",
                             "--top", "1"], capture_output=True, text=True, timeout=60,
                            check=True).stdout
    assert f"worker {child}:" in report, report
    top = report.split("grown from snapshot 0", 1)[1]
    assert "bytearray(1000)" in top, report  # the allocating line is the top growth
    grown_kb = float(top.split("kB", 1)[0].split()[-1])
    assert grown_kb > 900, report
