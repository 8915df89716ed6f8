"""Every 1.0 operation over HTTP+JSON against a served A2AApp: the success paths.

Bodies and answers are checked as wire JSON (hand-written shapes): a bare
``SendMessageResponse``/Task/config object per answer, a JSON media type,
``A2A-Version: 1.0`` echoed, never a JSON-RPC envelope.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from rest_support import Rest, RestAgent, assert_status, message_json
from support.a2a_http import served

from a2a_core.models import AgentCard
from a2a_wsgi import A2AApp
from a2a_wsgi.settings import CardSettings, ProtocolSettings

PUSH = {"capabilities": {"push_notifications": True}}


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """Push declared (configs are stored, never delivered: no push= worker)."""
    app = A2AApp(
        RestAgent(),
        card=CardSettings(
            overrides=PUSH,
            extended_card=lambda ctx: AgentCard(name="REST Agent (extended)"),
        ),
    )
    with served(app) as handle:
        yield handle.url


@pytest.fixture
def rest(base: str) -> Rest:
    return Rest(base + "/rest")


# -- the card ---------------------------------------------------------------------------


def test_the_card_lists_the_http_json_interface_after_json_rpc(base: str) -> None:
    card = requests.get(base + "/.well-known/agent-card.json", timeout=5).json()
    interfaces = [(i["protocolBinding"], i["protocolVersion"], i["url"])
                  for i in card["supportedInterfaces"]]
    assert interfaces[0] == ("JSONRPC", "1.0", base + "/")
    assert interfaces[-1] == ("HTTP+JSON", "1.0", base + "/rest")


def test_bindings_and_rest_path_options_shape_the_card() -> None:
    app = A2AApp(
        RestAgent(),
        protocol=ProtocolSettings(bindings=("HTTP+JSON", "JSONRPC"), rest_path="api/v1"),
    )
    with served(app) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
        first = card["supportedInterfaces"][0]
        assert (first["protocolBinding"], first["url"]) == ("HTTP+JSON", handle.url + "/api/v1")
        answer = Rest(handle.url + "/api/v1").send("moved")
        assert answer["status"]["state"] == "TASK_STATE_COMPLETED"
        assert requests.post(handle.url + "/rest/message:send", timeout=5).status_code == 404


def test_rest_path_none_serves_no_http_json(base: str) -> None:
    app = A2AApp(RestAgent(), protocol=ProtocolSettings(rest_path=None))
    with served(app) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
        assert {i["protocolBinding"] for i in card["supportedInterfaces"]} == {"JSONRPC"}
        response = requests.post(handle.url + "/rest/message:send", json={}, timeout=5)
        assert response.status_code == 404


# -- SendMessage ------------------------------------------------------------------------


def test_send_blocking_answers_the_completed_task(rest: Rest) -> None:
    answer = rest.ok("POST", "/message:send", body={"message": message_json("hello")})
    assert list(answer) == ["task"]
    task = answer["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "hello"}]
    assert task["history"][0]["role"] == "ROLE_USER"
    assert "jsonrpc" not in answer and "kind" not in task


def test_send_non_blocking_answers_at_once(rest: Rest) -> None:
    task = rest.send("wait", blocking=False)
    assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    canceled = rest.ok("POST", f"/tasks/{task['id']}:cancel")
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


def test_send_answers_a_bare_message(rest: Rest) -> None:
    answer = rest.ok("POST", "/message:send", body={"message": message_json("direct")})
    assert list(answer) == ["message"]
    assert answer["message"]["role"] == "ROLE_AGENT"
    assert answer["message"]["parts"] == [{"text": "direct: direct"}]


def test_send_continues_an_input_required_task(rest: Rest) -> None:
    asked = rest.send("ask")
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    again = rest.send("2 and 3", taskId=asked["id"], contextId=asked["contextId"])
    assert again["id"] == asked["id"] and again["status"]["state"] == "TASK_STATE_COMPLETED"


def test_application_json_and_no_content_type_are_read_too(rest: Rest) -> None:
    body = {"message": message_json("as json")}
    for content_type in ("application/json", "application/json; charset=utf-8", None):
        headers = {"A2A-Version": "1.0"}
        if content_type:
            headers["Content-Type"] = content_type
        response = requests.post(rest.base + "/message:send", json=body, headers=headers,
                                 timeout=5)
        assert response.status_code == 200, (content_type, response.text)


# -- GetTask ----------------------------------------------------------------------------


def test_get_task_honours_history_length(rest: Rest) -> None:
    task = rest.send("remember me")
    assert len(rest.ok("GET", f"/tasks/{task['id']}")["history"]) == 2
    assert len(rest.ok("GET", f"/tasks/{task['id']}?historyLength=1")["history"]) == 1
    assert "history" not in rest.ok("GET", f"/tasks/{task['id']}?historyLength=0")
    # "" is proto3's unset: the full history, as without the parameter.
    assert len(rest.ok("GET", f"/tasks/{task['id']}?historyLength=")["history"]) == 2


def test_get_task_with_a_percent_encoded_id(rest: Rest) -> None:
    """Ids are path segments: any character allowed in a task id survives the round trip."""
    response = rest.request("GET", "/tasks/a%3Ab%40c%2Bd")
    error = assert_status(response, 404, "TASK_NOT_FOUND", grpc="NOT_FOUND")
    assert "a:b@c+d" in error["message"]


# -- ListTasks --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def listed(base: str) -> dict[str, Any]:
    """One context holding a completed task and an input-required one."""
    rest = Rest(base + "/rest")
    context = f"ctx-{uuid.uuid4()}"
    done = rest.send("listed", contextId=context)
    asked = rest.send("ask", contextId=context)
    return {"context": context, "done": done, "asked": asked}


def _ids(answer: dict[str, Any]) -> list[str]:
    return [task["id"] for task in answer["tasks"]]


def test_list_by_context(rest: Rest, listed: dict[str, Any]) -> None:
    answer = rest.ok("GET", f"/tasks?contextId={listed['context']}")
    assert set(_ids(answer)) == {listed["done"]["id"], listed["asked"]["id"]}
    assert answer["totalSize"] == 2 and answer["nextPageToken"] == ""


@pytest.mark.parametrize(("state", "which"), [("TASK_STATE_COMPLETED", "done"),
                                               ("TASK_STATE_INPUT_REQUIRED", "asked")])
def test_list_by_state_name(rest: Rest, listed: dict[str, Any], state: str, which: str) -> None:
    answer = rest.ok("GET", f"/tasks?contextId={listed['context']}&status={state}")
    assert _ids(answer) == [listed[which]["id"]]
    empty = rest.ok("GET", f"/tasks?contextId={listed['context']}&status=TASK_STATE_WORKING")
    assert empty["tasks"] == []


def test_list_pages_with_page_size_and_token(rest: Rest, listed: dict[str, Any]) -> None:
    first = rest.ok("GET", f"/tasks?contextId={listed['context']}&pageSize=1")
    assert len(first["tasks"]) == 1 and first["nextPageToken"]
    second = rest.ok("GET", "/tasks", params={"contextId": listed["context"], "pageSize": 1,
                                              "pageToken": first["nextPageToken"]})
    assert len(second["tasks"]) == 1 and second["nextPageToken"] == ""
    assert set(_ids(first) + _ids(second)) == {listed["done"]["id"], listed["asked"]["id"]}


@pytest.mark.parametrize("flag", ["true", "false", "TRUE", None])
def test_list_include_artifacts(rest: Rest, listed: dict[str, Any], flag: str | None) -> None:
    query = f"/tasks?contextId={listed['context']}&status=TASK_STATE_COMPLETED"
    if flag is not None:
        query += f"&includeArtifacts={flag}"
    (task,) = rest.ok("GET", query)["tasks"]
    if flag is not None and flag.lower() == "true":
        assert task["artifacts"][0]["parts"] == [{"text": "listed"}]
    else:
        assert "artifacts" not in task


def test_list_history_length_and_unknown_parameters(rest: Rest, listed: dict[str, Any]) -> None:
    answer = rest.ok("GET", f"/tasks?contextId={listed['context']}&historyLength=0"
                            "&status=TASK_STATE_COMPLETED&sortBy=nothing&A2A-Version=1.0")
    (task,) = answer["tasks"]
    assert "history" not in task


# -- CancelTask -------------------------------------------------------------------------


def test_cancel_twice_and_cancel_of_a_finished_task(rest: Rest) -> None:
    task = rest.send("wait", blocking=False)
    rest.wait_state(task["id"], "TASK_STATE_WORKING")
    first = rest.ok("POST", f"/tasks/{task['id']}:cancel", body={"metadata": {"why": "test"}})
    assert first["id"] == task["id"] and first["status"]["state"] == "TASK_STATE_CANCELED"
    again = rest.request("POST", f"/tasks/{task['id']}:cancel")  # terminal: not cancelable
    assert_status(again, 400, "TASK_NOT_CANCELABLE", grpc="FAILED_PRECONDITION")
    assert rest.ok("GET", f"/tasks/{task['id']}")["status"]["state"] == "TASK_STATE_CANCELED"
    done = rest.send("finished")
    response = rest.request("POST", f"/tasks/{done['id']}:cancel")
    assert_status(response, 400, "TASK_NOT_CANCELABLE", grpc="FAILED_PRECONDITION")
    assert rest.ok("GET", f"/tasks/{done['id']}")["status"]["state"] == "TASK_STATE_COMPLETED"


# -- push notification configs -----------------------------------------------------------


def test_push_config_create_get_list_delete(rest: Rest) -> None:
    task = rest.send("with push")
    base = f"/tasks/{task['id']}/pushNotificationConfigs"
    created = rest.ok("POST", base, body={"id": "cfg-1", "url": "https://hooks.example/a2a",
                                          "token": "tok-1"})
    assert created == {"taskId": task["id"], "id": "cfg-1", "url": "https://hooks.example/a2a",
                       "token": "tok-1"}
    assert rest.ok("GET", f"{base}/cfg-1") == created
    assert rest.ok("GET", base) == {"configs": [created], "nextPageToken": ""}
    assert rest.ok("DELETE", f"{base}/cfg-1") == {}
    assert_status(rest.request("GET", f"{base}/cfg-1"), 404, "TASK_NOT_FOUND")
    assert rest.ok("GET", base)["configs"] == []
    assert rest.ok("DELETE", f"{base}/cfg-1") == {}  # idempotent


def test_push_config_list_reads_its_query(rest: Rest) -> None:
    """pageSize/pageToken are parsed (a bad one is 400); the runtime answers every config on
    one page whatever they say (it does not page push configs, over either binding)."""
    task = rest.send("many hooks")
    base = f"/tasks/{task['id']}/pushNotificationConfigs"
    for n in range(3):
        rest.ok("POST", base, body={"id": f"cfg-{n}", "url": f"https://hooks.example/{n}"})
    page = rest.ok("GET", f"{base}?pageSize=2")
    assert sorted(c["id"] for c in page["configs"]) == ["cfg-0", "cfg-1", "cfg-2"]
    assert page["nextPageToken"] == ""
    error = assert_status(rest.request("GET", f"{base}?pageSize=two"), 400, "INVALID_PARAMS")
    assert error["message"] == "query parameter pageSize: expected an integer, got 'two'"


def test_push_config_body_task_id_must_match_the_path(rest: Rest) -> None:
    task = rest.send("hook")
    base = f"/tasks/{task['id']}/pushNotificationConfigs"
    same = rest.ok("POST", base, body={"taskId": task["id"], "url": "https://hooks.example/x"})
    assert same["taskId"] == task["id"] and same["id"]
    response = rest.request("POST", base, body={"taskId": "tsk-other",
                                                 "url": "https://hooks.example/x"})
    error = assert_status(response, 400, "INVALID_PARAMS")
    assert "contradicts the path" in error["message"]
    assert len(rest.ok("GET", base)["configs"]) == 1


def test_push_operations_without_the_capability(base: str) -> None:
    app = A2AApp(RestAgent())
    with served(app) as handle:
        rest = Rest(handle.url + "/rest")
        task = rest.send("no push")
        for method, path, body in [
            ("POST", f"/tasks/{task['id']}/pushNotificationConfigs",
             {"url": "https://hooks.example/x"}),
            ("GET", f"/tasks/{task['id']}/pushNotificationConfigs", None),
            ("GET", f"/tasks/{task['id']}/pushNotificationConfigs/c", None),
            ("DELETE", f"/tasks/{task['id']}/pushNotificationConfigs/c", None),
        ]:
            response = rest.request(method, path, body=body)
            assert_status(response, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED",
                          grpc="FAILED_PRECONDITION")


# -- GetExtendedAgentCard ---------------------------------------------------------------


def test_extended_agent_card(rest: Rest) -> None:
    card = rest.ok("GET", "/extendedAgentCard")
    assert card["name"] == "REST Agent (extended)"
    assert "protocolVersion" not in card and "url" not in card  # strict 1.0


def test_extended_agent_card_not_declared(base: str) -> None:
    app = A2AApp(RestAgent())
    with served(app) as handle:
        response = Rest(handle.url + "/rest").request("GET", "/extendedAgentCard")
        assert_status(response, 400, "UNSUPPORTED_OPERATION", grpc="FAILED_PRECONDITION")
