"""A short soak: ``a2a serve examples.echo:app --workers 2`` (default store, default worker
class) under about a minute of mixed requests, with no error and no growth."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.gunicorn import ROOT

pytestmark = pytest.mark.slow

SOAK = ROOT / "benchmarks" / "soak.py"


def test_a_minute_of_mixed_requests_leaks_nothing(tmp_path: Path) -> None:
    report = tmp_path / "soak.json"
    # benchmarks/soak.py stops its server on SIGTERM, so a timeout here leaves nothing behind
    proc = subprocess.Popen([sys.executable, str(SOAK), "--seconds", "55", "--clients", "6",
                             "--every", "2", "--json", str(report)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=150)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
        pytest.fail(f"the soak did not finish:\n{out.decode(errors='replace')[-3000:]}")
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-3000:]
    result = json.loads(report.read_text())
    assert result["errors"] == 0 and not result["failures"], result["failures"]
    assert result["requests"] >= 2000, text[-3000:]  # it really ran, with both workers busy
    assert len(result["growth"]) == 2, result["growth"]
    for grown in result["growth"].values():
        assert grown["descriptors"] <= 20 and grown["rss_ratio"] <= 0.25, result["growth"]
