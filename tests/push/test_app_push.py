"""Push end to end: A2AApp(push=...) served over real HTTP, a real webhook receiver on loopback."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
from push_receiver import Receiver, receiver_fixture  # noqa: F401
from support.a2a_http import Peer, user_message

from a2a_client import JWKSFetcher, ReplayCache, verify_push
from a2a_core import wire
from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, serve
from a2a_wsgi.push import JWKS_PATH, PushSettings, PushSigner, UrlPolicy

FAST = dict(policy=UrlPolicy.allowing_loopback(), poll_interval=0.05, backoff_base=0.05,
            backoff_cap=0.2, attempt_timeout=2.0)


def stepping(msg: Message, ctx: AgentContext) -> object:
    """WORKING with a message, an artifact, then COMPLETED: several updates per task."""
    ctx.emit_status(TaskState.WORKING, "step 1")
    ctx.emit_artifact("partial", name="out")
    return reply("done")


class Gate:
    def __init__(self) -> None:
        self.open = threading.Event()

    def agent(self, msg: Message, ctx: AgentContext) -> object:
        self.open.wait(10)
        return stepping(msg, ctx)


@pytest.fixture
def served() -> Iterator[Callable[..., tuple[A2AApp, str]]]:
    handles: list[Any] = []

    def start(fn: Callable[..., object] = stepping, **options: Any) -> tuple[A2AApp, str]:
        app = A2AApp(Agent.from_function(fn, name="Pusher"), **options)
        handle = serve(app)
        handles.append((handle, app))
        return app, handle.url

    yield start
    for handle, app in handles:
        handle.stop()
        app.close()


def push_events(app: A2AApp, task_id: str) -> list[dict[str, Any]]:
    """The task's event log in the 1.0 wire shape: what its webhook must receive, in order."""
    logged = app.runtime.store.events_after(task_id, 0)
    return [wire.encode_stream_event(event, "1.0") for _, event in logged]


def test_1_0_every_event_is_posted_in_order_with_authorization(
        served: Callable[..., tuple[A2AApp, str]], receiver: Receiver) -> None:
    app, url = served(push=PushSettings(**FAST))
    peer = Peer(url, "1.0")
    config = {"url": receiver.url + "/v1", "token": "tok",
              "authentication": {"scheme": "Bearer", "credentials": "s3cret"}}
    answer = peer.rpc("send", {"message": user_message("go", "1.0"),
                               "configuration": {"taskPushNotificationConfig": config}})
    task_id = answer["result"]["task"]["id"]
    expected = push_events(app, task_id)
    hits = receiver.wait_hits("/v1", len(expected))
    assert [json.loads(h.body) for h in hits] == expected
    kinds = [next(iter(e)) for e in expected]
    assert len(kinds) >= 4 and "artifactUpdate" in kinds and kinds[0] == "statusUpdate"
    assert expected[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    for hit in hits:
        assert hit.headers["Authorization"] == "Bearer s3cret"
        assert hit.headers["X-A2A-Notification-Token"] == "tok"
        assert hit.headers["Content-Type"] == "application/a2a+json"
    assert len({h.headers["Idempotency-Key"] for h in hits}) == len(hits)


def test_0_3_config_gets_the_task_after_each_update(
        served: Callable[..., tuple[A2AApp, str]], receiver: Receiver) -> None:
    gate = Gate()
    app, url = served(gate.agent, push=PushSettings(**FAST))
    peer = Peer(url, "0.3")
    sent = peer.rpc("send", {"message": user_message("go", "0.3"),
                             "configuration": {"blocking": False}})
    task_id = sent["result"]["id"]
    created = peer.rpc("push_set", {"taskId": task_id, "pushNotificationConfig": {
        "url": receiver.url + "/v03", "id": "mine"}})
    assert created["result"]["pushNotificationConfig"]["id"] == "mine"
    gate.open.set()
    hits = receiver.wait_hits("/v03", 1)
    receiver.wait_for(lambda: json.loads(receiver.hits("/v03")[-1].body)["status"]["state"]
                      == "completed")
    bodies = [json.loads(h.body) for h in receiver.hits("/v03")]
    assert all(b["kind"] == "task" and b["id"] == task_id for b in bodies)
    assert bodies[-1]["status"]["state"] == "completed"
    assert bodies[-1]["artifacts"][0]["parts"][0]["text"] == "partial"
    assert hits[0].headers["Content-Type"] == "application/json"


@pytest.mark.parametrize("version", ["0.3", "1.0"])
@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/",
                                 "http://[::ffff:127.0.0.1]/", "http://10.0.0.1/hook",
                                 "http://2130706433/", "file:///etc/passwd"])
def test_hostile_webhook_is_refused_at_config_time(
        served: Callable[..., tuple[A2AApp, str]], version: str, url: str) -> None:
    app, base = served(push=PushSettings())  # default policy: public webhooks only
    peer = Peer(base, version)
    task = peer.rpc("send", {"message": user_message("x", version)})["result"]
    task_id = task["id"] if version == "0.3" else task["task"]["id"]
    params = ({"taskId": task_id, "pushNotificationConfig": {"url": url}} if version == "0.3"
              else {"taskId": task_id, "url": url})
    error = peer.rpc("push_set", params)["error"]
    assert error["code"] == -32602 and "refused" in error["message"]
    assert app.runtime.store.list_push_configs(task_id) == []
    # Inline on send: refused before any task exists.
    before = len(app.runtime.store.list()[0])
    key = "pushNotificationConfig" if version == "0.3" else "taskPushNotificationConfig"
    inline = peer.rpc("send", {"message": user_message("y", version),
                               "configuration": {key: {"url": url}}})
    assert inline["error"]["code"] == -32602
    assert len(app.runtime.store.list()[0]) == before


def test_credentials_are_write_only(served: Callable[..., tuple[A2AApp, str]],
                                    receiver: Receiver) -> None:
    app, url = served(push=PushSettings(**FAST))
    peer = Peer(url, "1.0")
    task_id = peer.rpc("send", {"message": user_message("x", "1.0")})["result"]["task"]["id"]
    created = peer.rpc("push_set", {"taskId": task_id, "id": "c1", "url": receiver.url + "/w",
                                    "authentication": {"scheme": "Bearer",
                                                       "credentials": "top-secret"}})
    listed = peer.rpc("push_list", {"taskId": task_id})
    got = peer.rpc("push_get", {"taskId": task_id, "id": "c1"})
    for answer in (created, listed, got):
        assert "top-secret" not in json.dumps(answer) and "********" in json.dumps(answer)


def test_card_declares_push_only_when_delivery_is_on(
        served: Callable[..., tuple[A2AApp, str]]) -> None:
    on, _ = served(push=True)
    off, _ = served()
    assert on.card.capabilities.push_notifications is True
    assert off.card.capabilities.push_notifications is False


def test_signed_deliveries_verify_against_the_served_jwks(
        served: Callable[..., tuple[A2AApp, str]], receiver: Receiver) -> None:
    signer = PushSigner(issuer="https://agent.example/")
    app, url = served(push=PushSettings(signer=signer, **FAST))
    jwks = requests.get(url + JWKS_PATH, timeout=5)
    assert jwks.status_code == 200 and jwks.json() == signer.jwks()
    peer = Peer(url, "1.0")
    hook = receiver.url + "/signed"
    answer = peer.rpc("send", {"message": user_message("go", "1.0"),
                               "configuration": {"taskPushNotificationConfig": {"url": hook}}})
    expected = len(push_events(app, answer["result"]["task"]["id"]))
    hits = receiver.wait_hits("/signed", expected)
    fetcher, cache = JWKSFetcher(url + JWKS_PATH), ReplayCache()
    for hit in hits:
        claims = verify_push(hit.headers, hit.body, jwks=fetcher, audience=hook,
                             replay_cache=cache)
        assert claims["taskId"] == answer["result"]["task"]["id"]
    with pytest.raises(Exception, match="replayed"):
        verify_push(hits[0].headers, hits[0].body, jwks=fetcher, replay_cache=cache)


def test_a_hanging_webhook_delays_neither_the_agent_nor_other_tasks(
        served: Callable[..., tuple[A2AApp, str]], receiver: Receiver) -> None:
    receiver.script["/hang"] = ["hang"]
    app, url = served(push=PushSettings(**{**FAST, "attempt_timeout": 5.0}))
    peer = Peer(url, "1.0")
    started = time.monotonic()
    slow = peer.rpc("send", {"message": user_message("a", "1.0"), "configuration": {
        "taskPushNotificationConfig": {"url": receiver.url + "/hang"}}})
    fast = peer.rpc("send", {"message": user_message("b", "1.0"), "configuration": {
        "taskPushNotificationConfig": {"url": receiver.url + "/fast"}}})
    assert time.monotonic() - started < 2.0  # both sends answered, push or no push
    assert slow["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    expected = len(push_events(app, fast["result"]["task"]["id"]))
    hits = receiver.wait_hits("/fast", expected, timeout=4.0)
    assert len(hits) == expected
    assert hits[-1].at - started < 4.0  # well before the hung attempt's 5 s budget ends
