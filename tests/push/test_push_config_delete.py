"""Deleting a push notification config is idempotent (1.0 §7.1 MUST), over real HTTP.

Deleting a config that is gone, or never was, succeeds; the task itself must
still exist and be visible to the caller, else the answer is -32001.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.a2a_http import Peer, served
from support.schemas import check_response

from a2a_wsgi import A2AApp, Agent, input_required
from a2a_wsgi.settings import CardSettings, ProtocolSettings

VERSIONS = ["0.3", "1.0"]
HIDDEN = "secret"


class Asks(Agent):
    name = "Asks"
    description = "Every task waits for input"

    def handle_message(self, message: Any, context: Any) -> Any:
        return input_required("more?")


def deny_hidden(operation: Any, task: Any) -> bool:
    return not any(HIDDEN in m.text for m in task.history[:1])


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    # Declared push without delivery: configs are stored as given, nothing is sent.
    app = A2AApp(
        Asks(),
        card=CardSettings(overrides={"capabilities": {"push_notifications": True}}),
        protocol=ProtocolSettings(authorize_task=deny_hidden),
    )
    with served(app) as handle:
        yield handle.url


def create(p: Peer, task_id: str, config_id: str) -> dict[str, Any]:
    hook = f"https://hooks.example/{config_id}"
    if p.version == "0.3":
        params: dict[str, Any] = {"taskId": task_id,
                                  "pushNotificationConfig": {"id": config_id, "url": hook}}
    else:
        params = {"taskId": task_id, "id": config_id, "url": hook}
    answer = p.rpc("push_set", params)
    assert "result" in answer, answer
    return answer


def delete(p: Peer, task_id: str, config_id: str) -> dict[str, Any]:
    if p.version == "0.3":
        return p.rpc("push_delete", {"id": task_id, "pushNotificationConfigId": config_id})
    return p.rpc("push_delete", {"taskId": task_id, "id": config_id})


def listed_ids(p: Peer, task_id: str) -> list[str]:
    key = "id" if p.version == "0.3" else "taskId"
    result = p.rpc("push_list", {key: task_id})["result"]
    configs = result if p.version == "0.3" else result.get("configs", [])
    if p.version == "0.3":
        return [c["pushNotificationConfig"]["id"] for c in configs]
    return [c["id"] for c in configs]


@pytest.mark.parametrize("version", VERSIONS)
def test_deleting_twice_succeeds_both_times(url: str, version: str) -> None:
    p = Peer(url, version)
    task = p.send("start")
    create(p, task["id"], "keep")
    create(p, task["id"], "drop")
    first, second = delete(p, task["id"], "drop"), delete(p, task["id"], "drop")
    for answer in (first, second):
        assert answer == {"jsonrpc": "2.0", "id": "req-1", "result": None}, answer
    assert listed_ids(p, task["id"]) == ["keep"]
    gone = p.rpc("push_get", {"id": task["id"], "pushNotificationConfigId": "drop"}
                 if version == "0.3" else {"taskId": task["id"], "id": "drop"})
    assert gone["error"]["code"] == -32001


@pytest.mark.parametrize("version", VERSIONS)
def test_deleting_a_config_that_never_existed_succeeds(url: str, version: str) -> None:
    p = Peer(url, version)
    task = p.send("start")
    assert delete(p, task["id"], "never-made")["result"] is None
    assert listed_ids(p, task["id"]) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_deleting_on_an_unknown_task_is_task_not_found(url: str, version: str) -> None:
    p = Peer(url, version)
    answer = delete(p, "tsk-nope", "any")
    assert answer["error"]["code"] == -32001, answer
    check_response("error", answer, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_deleting_on_a_denied_task_is_task_not_found(url: str, version: str) -> None:
    p = Peer(url, version)
    hidden = p.send(f"start {HIDDEN}")
    denied, missing = delete(p, hidden["id"], "any"), delete(p, "tsk-nope", "any")
    assert denied["error"]["code"] == missing["error"]["code"] == -32001
    assert denied["error"]["message"].replace(hidden["id"], "<id>") == (
        missing["error"]["message"].replace("tsk-nope", "<id>"))
