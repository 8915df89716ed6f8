"""The Django and Flask adapters in process: the host's hooks first, then the app as under WSGI.

Flask runs in this process through its test client (real werkzeug requests);
Django, whose settings are process-wide, runs ``django_adapter_probe.py`` in
a fresh interpreter with Django's test client and prints what it saw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import flask
import pytest
from app_auth_support import WhoAgent

from a2a_wsgi import A2AApp
from a2a_wsgi.auth import AuthPolicy, BearerAuthenticator
from a2a_wsgi.frameworks.flask import mount
from a2a_wsgi.settings import CardSettings

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _send(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "r-1", "method": "SendMessage", "params": {"message": {
        "messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}]}}}


@pytest.fixture
def flask_site() -> Iterator[flask.Flask]:
    a2a = A2AApp(
        WhoAgent(),
        auth=AuthPolicy([BearerAuthenticator({"tok-agent": "agent-7"}.get)]),
        card=CardSettings(trusted_hosts=("localhost",)),
    )
    site = flask.Flask(__name__)
    v1 = flask.Blueprint("v1", __name__, url_prefix="/v1")

    @site.before_request
    def who() -> None:  # the site's own login, as a stand-in: a trusted header
        flask.g.user = flask.request.headers.get("X-Site-User")

    mount(v1, "/a2a", a2a, identity=lambda: flask.g.user and f"user:{flask.g.user}")
    site.register_blueprint(v1)
    yield site
    a2a.close()


def test_flask_the_sites_user_is_the_caller_under_a_blueprint(flask_site: flask.Flask) -> None:
    client = flask_site.test_client()
    card = client.get("/v1/a2a/.well-known/agent-card.json")
    assert card.status_code == 200
    assert "http://localhost/v1/a2a/" in [f["url"] for f in card.json["supportedInterfaces"]]
    head = client.head("/v1/a2a/.well-known/agent-card.json")
    assert head.status_code == 200 and head.data == b""
    answer = client.post("/v1/a2a/", json=_send("hi"), headers={"A2A-Version": "1.0",
                                                                 "X-Site-User": "dora"})
    assert answer.status_code == 200, answer.data
    parts = answer.json["result"]["task"]["artifacts"][0]["parts"]
    assert parts == [{"text": "caller=user:dora"}]
    agent = client.post("/v1/a2a/", json=_send("hi"), headers={
        "A2A-Version": "1.0", "Authorization": "Bearer tok-agent"})
    assert agent.json["result"]["task"]["artifacts"][0]["parts"] == [{"text": "caller=agent-7"}]
    anonymous = client.post("/v1/a2a/", json=_send("hi"), headers={"A2A-Version": "1.0"})
    assert anonymous.status_code == 401
    assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")


def test_flask_streams_go_out_as_they_are_made(flask_site: flask.Flask) -> None:
    client = flask_site.test_client()
    answer = client.post("/v1/a2a/rest/message:stream", buffered=False,
                         json=_send("s")["params"], headers={"X-Site-User": "dora",
                                                             "Accept": "text/event-stream"})
    assert answer.status_code == 200 and answer.is_streamed
    assert answer.headers["Content-Type"].startswith("text/event-stream")
    events = [json.loads(line[5:]) for line in b"".join(answer.response).decode().splitlines()
              if line.startswith("data:")]
    answer.close()
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    missing = client.get("/v1/a2a/rest/tasks/t-1", headers={"X-Site-User": "dora"})
    assert missing.status_code == 404 and "Task t-1 not found" in missing.get_data(as_text=True)
    # A non-ASCII id reaches the app's own id check intact (as under plain WSGI: 400).
    odd = client.get("/v1/a2a/rest/tasks/t-\u00e9", headers={"X-Site-User": "dora"})
    assert odd.status_code == 400 and "params.id" in odd.get_data(as_text=True)


def test_django_after_the_middleware_with_the_body_read_first(tmp_path: Path) -> None:
    pytest.importorskip("django")
    # Django's test client says wsgi.multiprocess: name the store, in this test's folder.
    env = {**os.environ, "PYTHONPATH": f"{HERE}:{ROOT}",
           "A2A_STORE": f"sqlite:///{tmp_path / 'tasks.sqlite3'}"}
    done = subprocess.run([sys.executable, str(HERE / "django_adapter_probe.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["card_urls"][0] == "http://testserver/site/agents/"
    assert seen["body_read_by_middleware"] is True
    assert seen["csrf_enforced_elsewhere"] == 403
    assert (seen["send_status"], seen["send_text"]) == (200, "caller=user:dora")
    assert seen["anonymous_status"] == 401
    # Two challenges, one header value: Django keeps one value per header name.
    assert seen["challenges"] == 'Bearer realm="a2a", Basic realm="a2a", charset="UTF-8"'
    assert seen["stream_class"] == "StreamingHttpResponse"
    assert seen["stream_last_state"] == "TASK_STATE_COMPLETED"
    assert seen["no_identity_hook_status"] == 401

