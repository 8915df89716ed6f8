"""Without opentelemetry nothing of it is imported, and the log lines and the caller's
trace context still work (a fresh interpreter in which ``opentelemetry`` cannot be imported);
with the API but no SDK, spans are no-ops that still carry the caller's context."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01"

SCRIPT = r'''
import importlib.abc, json, logging, sys, threading, time
BLOCKED = sys.argv[2]
from werkzeug.serving import make_server

class NoOtel(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == BLOCKED or name.startswith(BLOCKED + "."):
            raise ImportError(f"{name} is not installed here")
        return None

sys.meta_path.insert(0, NoOtel())

import requests
from a2a_client import A2AClient
from a2a_wsgi import A2AApp, Agent, reply, serve
from a2a_wsgi.push import PushSettings, UrlPolicy
from a2a_wsgi._telemetry import OTEL_ENABLED, current_traceparent

lines, hooks, seen = [], [], []
class Keep(logging.Handler):
    def emit(self, record):
        lines.append({k: getattr(record, k, None) for k in
                      ("name", "operation", "trace_id", "task_id", "to_state")})
logging.getLogger("a2a_wsgi").addHandler(Keep())
logging.getLogger("a2a_wsgi").setLevel(logging.INFO)

def hook(environ, start_response):
    hooks.append(environ.get("HTTP_TRACEPARENT"))
    start_response("200 OK", [("Content-Length", "0")])
    return [b""]
receiver = make_server("127.0.0.1", 0, hook, threaded=True)
threading.Thread(target=receiver.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

def agent(msg, ctx):
    found = current_traceparent()
    seen.append(found.header() if found else None)
    return reply("ok")

app = A2AApp(Agent.from_function(agent, name="Plain"), push=PushSettings(
    policy=UrlPolicy.allowing_loopback(), poll_interval=0.05))
app.start()
server = serve(app)
body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
    "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
    "configuration": {"returnImmediately": True, "taskPushNotificationConfig": {
        "url": f"http://127.0.0.1:{receiver.server_port}/hook"}}}}
requests.post(server.url + "/", json=body, timeout=10,
              headers={"A2A-Version": "1.0", "traceparent": sys.argv[1]})
deadline = time.monotonic() + 10
while len(hooks) < 3 and time.monotonic() < deadline:
    time.sleep(0.02)
with A2AClient(server.url + "/") as client:
    client.send_message("from the client")
server.stop(); app.close(); receiver.shutdown()
print(json.dumps({"enabled": OTEL_ENABLED, "hooks": hooks, "seen": seen, "lines": lines,
                  "imported": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
'''


@pytest.mark.parametrize("blocked", ["opentelemetry", "opentelemetry.sdk"])
def test_without_opentelemetry_the_lines_and_the_callers_trace_still_work(blocked: str) -> None:
    paths = [str(HERE), str(ROOT)]
    done = subprocess.run([sys.executable, "-c", SCRIPT, TRACEPARENT, blocked],
                          capture_output=True,
                          text=True, timeout=60, cwd=ROOT,
                          env={"PYTHONPATH": ":".join(paths), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if blocked == "opentelemetry":
        assert found["enabled"] is False and found["imported"] == []
    else:  # the API alone: no-op spans
        assert found["enabled"] is True and "opentelemetry.trace" in found["imported"]
        assert not any(m.startswith("opentelemetry.sdk") for m in found["imported"])
    # The agent, on the pool, works in the caller's trace; each webhook POST carries it.
    assert found["seen"] == [TRACEPARENT, None]
    assert len(found["hooks"]) >= 3 and set(found["hooks"]) == {TRACEPARENT}
    access = [line for line in found["lines"]
              if line["name"] == "a2a_wsgi.access" and line["operation"]]
    assert [(line["operation"], line["trace_id"]) for line in access] == [
        ("SendMessage", TRACE), ("SendMessage", None)]  # the client sends no traceparent
    traced, plain = (access[0]["task_id"], access[1]["task_id"])
    states = [line for line in found["lines"] if line["name"] == "a2a_wsgi.tasks"]
    assert {line["trace_id"] for line in states if line["task_id"] == traced} == {TRACE}
    assert {line["trace_id"] for line in states if line["task_id"] == plain} == {None}
