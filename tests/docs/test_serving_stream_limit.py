"""docs/serving.md's default for ``LimitSettings.max_streams`` is what ``a2a serve`` admits.

The settings table of docs/serving.md gives each option's default. For ``max_streams`` under
gevent it must say what a real ``a2a serve`` worker does (and what docs/deployment.md says):
``--worker-connections`` less a hundredth, at least 16. With 100 connections that is 84
streams; "less a tenth" would be 90.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from support.gunicorn import ROOT, ServerProcess, free_port

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext
from a2a_wsgi.settings import StreamSettings

pytestmark = pytest.mark.slow

SERVING = ROOT / "docs" / "serving.md"
CONNECTIONS = 100


class Hold(Agent):
    """Keeps every task WORKING until it is canceled."""

    name = "Hold"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        while not context.is_cancelled():
            time.sleep(0.02)
        return None


#: The app ``a2a serve`` imports from this module.
app = A2AApp(Hold(), streams=StreamSettings(heartbeat_interval=0.5))


def _rpc(url: str, method: str, params: dict[str, Any], **options: Any) -> requests.Response:
    return requests.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method,
                                    "params": params},
                         headers={"A2A-Version": "1.0"}, timeout=10, **options)


def _admitted_streams(url: str, task_id: str, most: int) -> tuple[int, list[Any]]:
    """Open subscribe streams until one is refused (503); (how many were admitted, them).

    Each stream is kept with its line iterator: dropping the iterator closes the
    generator reading the response, which ends the connection and frees the place.
    """
    held: list[Any] = []
    for _ in range(most):
        response = _rpc(url, "SubscribeToTask", {"id": task_id}, stream=True)
        if response.status_code == 503:
            response.close()
            return len(held), held
        assert response.status_code == 200, response.text
        lines = response.iter_lines()
        next(lines)  # the first event is out: the stream holds its place
        held.append((response, lines))
    return len(held), held


def test_the_documented_gevent_stream_limit_is_the_one_a2a_serve_applies(tmp_path: Path) -> None:
    port = free_port()
    argv = [sys.executable, "-m", "a2a_wsgi._cli", "serve", "test_serving_stream_limit:app",
            "--bind", f"127.0.0.1:{port}", "--workers", "1",
            "--worker-connections", str(CONNECTIONS), "--graceful-timeout", "1"]
    env = {"HOME": str(tmp_path),  # gunicorn's control socket goes under $HOME
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(ROOT / "tests"),
                                          str(ROOT)])}
    with ServerProcess(argv, port=port, log_path=tmp_path / "serve.log", env=env) as server:
        server.wait_ready()
        task = _rpc(server.url, "SendMessage", {
            "message": {"messageId": "m-hold", "role": "ROLE_USER", "parts": [{"text": "hold"}]},
            "configuration": {"returnImmediately": True}}).json()["result"]["task"]
        try:
            admitted, held = _admitted_streams(server.url, task["id"], CONNECTIONS)
            for response, _lines in held:
                response.close()
        finally:
            _rpc(server.url, "CancelTask", {"id": task["id"]})
    assert admitted == CONNECTIONS - max(16, CONNECTIONS // 100) == 84

    row = next(line for line in SERVING.read_text().splitlines()
               if line.startswith("| `LimitSettings.max_streams`"))
    gevent_rule = re.search(r"connections less ([^(]+?) \(gevent\)", row)
    assert gevent_rule is not None, row
    assert gevent_rule.group(1) == "a hundredth, at least 16", row
