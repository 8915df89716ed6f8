"""``a2a inspect URL`` (the installed command) serves the page and proxies to the agent."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from support.a2a_http import served
from support.gunicorn import free_port
from support.processes import stop

from a2a_wsgi import A2AApp
from examples.echo import EchoAgent


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_a2a_command_runs_inspect_and_stops_on_a_signal(sig: signal.Signals) -> None:
    """Either signal stops it with exit 0, even when the suite runs with SIGINT ignored."""
    with served(A2AApp(EchoAgent())) as agent:
        port = free_port()
        command = [str(Path(sys.executable).parent / "a2a"), "inspect", agent.url + "/",
                   "--no-open", "--port", str(port)]
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        errors: str | None = None
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    page = requests.get(f"http://127.0.0.1:{port}/inspector/", timeout=5)
                    break
                except requests.ConnectionError:
                    assert proc.poll() is None, proc.communicate()[1]
                    assert time.monotonic() < deadline, "a2a inspect did not start"
                    time.sleep(0.1)
            assert page.status_code == 200 and "<html" in page.text.lower()
        finally:
            _, errors = stop(proc, sig)
        assert proc.returncode == 0, errors
