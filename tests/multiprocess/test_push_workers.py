"""Push under real gunicorn, both worker models: a webhook hears every event of a task run by
one of two workers, in order, once each (the delivery worker of every process claims from
one outbox)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from multiprocess_support import APP_PATH, MultiprocessAgent, fresh_peer
from support.gunicorn import WORKER_CLASSES, start_gunicorn

from a2a_wsgi import A2AApp
from a2a_wsgi.push import PushSettings, UrlPolicy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "push"))
from push_receiver import Receiver, receiver_fixture  # noqa: E402, F401

app = (A2AApp(MultiprocessAgent(), store=f"sqlite:///{os.environ['A2A_TEST_DB']}",
              push=PushSettings(policy=UrlPolicy.allowing_loopback(), poll_interval=0.05,
                                backoff_base=0.05, backoff_cap=0.2, attempt_timeout=2.0))
       if os.environ.get("A2A_TEST_DB") else None)

pytestmark = pytest.mark.slow


@pytest.fixture(params=WORKER_CLASSES)
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with start_gunicorn("test_push_workers:app", log_path=tmp_path / "gunicorn.log",
                        env={"A2A_TEST_DB": str(tmp_path / "tasks.sqlite3")}, workers=2,
                        pythonpath=[*APP_PATH, Path(__file__).resolve().parents[1] / "push"],
                        worker_class=request.param) as gunicorn:
        gunicorn.wait_ready()
        yield gunicorn.url


def test_every_event_reaches_the_webhook_once_in_order(server: str, receiver: Any) -> None:
    peer = fresh_peer(server)
    config = {"url": receiver.url + "/hook", "token": "tok"}
    answer = peer.rpc("send", {"message": {"messageId": "m-push", "role": "ROLE_USER",
                                           "parts": [{"text": "chunks:5"}]},
                               "configuration": {"taskPushNotificationConfig": config,
                                                 "returnImmediately": True}})
    task_id = answer["result"]["task"]["id"]
    deadline = time.monotonic() + 15
    while fresh_peer(server).rpc("get", {"id": task_id})["result"]["status"]["state"] != (
            "TASK_STATE_COMPLETED"):
        assert time.monotonic() < deadline, "the task never completed"
        time.sleep(0.05)
    assert receiver.wait_for(lambda: any(
        json.loads(hit.body).get("statusUpdate", {}).get("status", {}).get("state")
        == "TASK_STATE_COMPLETED" for hit in receiver.hits("/hook")), timeout=15)
    bodies = [json.loads(hit.body) for hit in receiver.hits("/hook")]
    chunks = [b["artifactUpdate"]["artifact"]["parts"][0]["text"] for b in bodies
              if "artifactUpdate" in b]
    assert chunks == [f"chunk {n}" for n in range(5)]  # in order, none twice
    assert all(hit.headers.get("X-A2A-Notification-Token") == "tok"
               for hit in receiver.hits("/hook"))
