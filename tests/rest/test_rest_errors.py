"""HTTP+JSON error answers: each a ``google.rpc.Status`` with the spec's HTTP status and an
ErrorInfo (reason, domain a2a-protocol.org, string metadata), a message a person can act
on, and never a traceback. Nothing is stored by a refused request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from rest_support import Rest, RestAgent, assert_no_internal_text, assert_status, message_json
from support.a2a_http import served

from a2a_wsgi import A2AApp
from a2a_wsgi.settings import CardSettings, ProtocolSettings

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with served(A2AApp(
        RestAgent(),
        card=CardSettings(overrides={
            "capabilities": {"push_notifications": True}}),
    )) as handle:
        yield handle.url


@pytest.fixture
def rest(base: str) -> Rest:
    return Rest(base + "/rest")


def _total(rest: Rest) -> int:
    return int(rest.ok("GET", "/tasks?pageSize=1")["totalSize"])


# -- routing ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", [
    "/", "/nope", "/message:explode", "/tasks/a/b", "/tasks/t-1/pushNotificationConfigs/c/d",
    "/v1/card", "/t1/t2/tasks/x", "/tasks//x", "/tasks/a%2Fb",
])
def test_unknown_path_is_404_naming_it(rest: Rest, path: str) -> None:
    for method in ("GET", "POST"):
        response = rest.request(method, path, body={} if method == "POST" else None)
        error = assert_status(response, 404, "METHOD_NOT_FOUND")
        assert error["message"].startswith("No A2A operation at")


def test_a_0_3_rest_request_is_refused_and_stores_nothing(rest: Rest) -> None:
    """0.3's REST (``/v1/...``, the 0.3 proto's transcoding) is not served: ``v1`` is read
    as a tenant, and the 0.3 body (``content`` for parts) fails 1.0 validation."""
    before = _total(rest)
    response = rest.request("POST", "/v1/message:send", body={"message": {
        "messageId": "m-0.3", "role": "ROLE_USER", "content": [{"text": "hi"}]}})
    error = assert_status(response, 400, "INVALID_PARAMS")
    assert error["message"] == "params.message.parts: required field is missing"
    assert _total(rest) == before
    assert_status(rest.request("GET", "/v1/card"), 404, "METHOD_NOT_FOUND")


def test_a_long_unknown_path_is_not_echoed_whole(rest: Rest) -> None:
    response = rest.request("GET", "/" + "x" * 5000)
    assert_status(response, 404, "METHOD_NOT_FOUND")
    assert len(response.content) < 1024


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("GET", "/message:send", "POST"),
    ("PUT", "/message:stream", "POST"),
    ("POST", "/tasks", "GET"),
    ("DELETE", "/tasks/t-1", "GET"),
    ("GET", "/tasks/t-1:cancel", "POST"),
    ("PUT", "/tasks/t-1:subscribe", "GET, POST"),
    ("PATCH", "/tasks/t-1/pushNotificationConfigs", "GET, POST"),
    ("POST", "/tasks/t-1/pushNotificationConfigs/c", "DELETE, GET"),
    ("POST", "/extendedAgentCard", "GET"),
])
def test_wrong_method_is_405_with_allow(rest: Rest, method: str, path: str, allowed: str) -> None:
    response = rest.request(method, path)
    error = assert_status_405(response)
    assert response.headers["Allow"] == allowed
    assert error["message"] == f"Method {method} is not allowed here; use {allowed}"


def assert_status_405(response: requests.Response) -> dict[str, Any]:
    assert response.status_code == 405, response.text
    assert_no_internal_text(response.text)
    error = response.json()["error"]
    assert error["code"] == 405 and error["details"][0]["reason"] == "METHOD_NOT_FOUND"
    return dict(error)


# -- bodies -----------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "reason", "words"), [
    (b'{"message":', "PARSE_ERROR", "Invalid JSON payload"),
    (b"\xff\xfe{", "PARSE_ERROR", "invalid UTF-8"),
    (b'{"a":1,"a":2}', "PARSE_ERROR", "duplicate"),
    (b"[" * 100 + b"]" * 100, "PARSE_ERROR", "deep"),
    (b"[]", "INVALID_REQUEST", "must be a JSON object"),
    (b'"text"', "INVALID_REQUEST", "must be a JSON object"),
    (b'{"message": "hi"}', "INVALID_PARAMS", "params.message"),
    (b'{"message": {"role": "ROLE_USER", "parts": []}}', "INVALID_PARAMS", "params.message"),
    (b'{"message": {"role": "ROLE_AGENT", "messageId": "m-agent", "parts": [{"text": "hi"}]}}',
     "INVALID_PARAMS", "params.message.role"),
])
def test_unreadable_or_wrong_bodies_are_400(rest: Rest, body: bytes, reason: str,
                                           words: str) -> None:
    before = _total(rest)
    response = rest.request("POST", "/message:send", raw=body)
    error = assert_status(response, 400, reason)
    assert words.lower() in error["message"].lower(), error["message"]
    assert _total(rest) == before


def test_an_empty_body_is_an_empty_request(rest: Rest) -> None:
    """An empty body is the empty message (proto3): SendMessage then lacks its message."""
    error = assert_status(rest.request("POST", "/message:send", raw=b""), 400, "INVALID_PARAMS")
    assert "params.message" in error["message"]
    # CancelTask needs nothing but the path: an empty body is fine there.
    task = rest.send("wait", blocking=False)
    assert rest.ok("POST", f"/tasks/{task['id']}:cancel", raw=b"")["id"] == task["id"]


def test_field_violations_name_the_field(rest: Rest) -> None:
    response = rest.request("POST", "/message:send",
                            body={"message": message_json(contextId="c" * 300)})
    error = assert_status(response, 400, "INVALID_PARAMS")
    violations = [v["field"] for d in error["details"] if d["@type"].endswith("BadRequest")
                  for v in d["fieldViolations"]]
    assert violations == ["params.message.contextId"]
    assert "c" * 300 not in response.text


def test_body_member_contradicting_the_path_is_400(rest: Rest) -> None:
    task = rest.send("wait", blocking=False)
    response = rest.request("POST", f"/tasks/{task['id']}:cancel", body={"id": "tsk-other"})
    error = assert_status(response, 400, "INVALID_PARAMS")
    assert error["message"] == (f"body member 'id' contradicts the path's id {task['id']!r}")
    assert rest.ok("GET", f"/tasks/{task['id']}")["status"]["state"] != "TASK_STATE_CANCELED"
    assert rest.ok("POST", f"/tasks/{task['id']}:cancel", body={"id": task["id"]})


@pytest.mark.parametrize(("query", "name", "expected"), [
    ("status=working", "status", "a TaskState name such as TASK_STATE_WORKING"),
    ("status=TASK_STATE_NOPE", "status", "a TaskState name such as TASK_STATE_WORKING"),
    ("pageSize=ten", "pageSize", "an integer"),
    ("pageSize=1.5", "pageSize", "an integer"),
    ("historyLength=-", "historyLength", "an integer"),
    ("includeArtifacts=yes", "includeArtifacts", "true or false"),
    ("includeArtifacts=1", "includeArtifacts", "true or false"),
])
def test_bad_query_parameter_is_400_naming_it(rest: Rest, query: str, name: str,
                                             expected: str) -> None:
    response = rest.request("GET", f"/tasks?{query}")
    error = assert_status(response, 400, "INVALID_PARAMS")
    assert error["message"].startswith(f"query parameter {name}: expected {expected}, got ")
    violations = [v for d in error["details"] if d["@type"].endswith("BadRequest")
                  for v in d["fieldViolations"]]
    assert [v["field"] for v in violations] == [name]


def test_query_values_out_of_range_are_400(rest: Rest) -> None:
    for query in ("pageSize=0", "pageSize=101", "historyLength=-1", "historyLength=3000000000"):
        response = rest.request("GET", f"/tasks?{query}")
        assert_status(response, 400, "INVALID_PARAMS")


def test_unknown_task_is_404_task_not_found(rest: Rest) -> None:
    for method, path in [("GET", "/tasks/tsk-missing"), ("POST", "/tasks/tsk-missing:cancel"),
                         ("GET", "/tasks/tsk-missing:subscribe"),
                         ("POST", "/tasks/tsk-missing:subscribe"),
                         ("GET", "/tasks/tsk-missing/pushNotificationConfigs")]:
        response = rest.request(method, path)
        error = assert_status(response, 404, "TASK_NOT_FOUND")
        assert error["message"] == "Task tsk-missing not found"


def test_send_to_an_unknown_task_is_404_and_stores_nothing(rest: Rest) -> None:
    before = _total(rest)
    response = rest.request("POST", "/message:send",
                            body={"message": message_json(taskId="tsk-missing")})
    assert_status(response, 404, "TASK_NOT_FOUND")
    assert _total(rest) == before


def test_hostile_task_id_in_the_path_is_400(rest: Rest) -> None:
    """The path is percent-decoded before routing: an id a server never issues is refused
    by the id check, never looked up."""
    for encoded in ("a..b", ".hidden", "a%0D%0Ab", "a%00b", "t" * 300, "%C3%A9"):
        response = rest.request("GET", f"/tasks/{encoded}")
        assert_status(response, 400, "INVALID_PARAMS")


# -- content type and size ---------------------------------------------------------------


@pytest.mark.parametrize("content_type", [
    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    "Text/Plain; charset=UTF-8",
])
def test_browser_form_content_types_are_415(rest: Rest, content_type: str) -> None:
    before = _total(rest)
    response = rest.request("POST", "/message:send", body={"message": message_json()},
                            headers={"Content-Type": content_type})
    assert response.status_code == 415
    assert response.headers["Accept-Post"] == "application/a2a+json, application/json"
    error = response.json()["error"]
    assert error["code"] == 415 and "Unsupported Media Type" in error["message"]
    assert _total(rest) == before


def test_a_get_is_never_refused_for_its_content_type(rest: Rest) -> None:
    response = rest.request("GET", "/tasks?pageSize=1", headers={"Content-Type": "text/plain"})
    assert response.status_code == 200


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_body_over_the_limit_is_413(rest: Rest, chunked: bool) -> None:
    before = _total(rest)
    body = json.dumps({"message": message_json("x" * (2 * MIB))}).encode()
    data: Any = iter([body[i:i + 65536] for i in range(0, len(body), 65536)]) if chunked \
        else body
    response = requests.post(rest.base + "/message:send", data=data, timeout=10,
                             headers={"Content-Type": "application/a2a+json"})
    assert response.status_code == 413, response.text
    error = response.json()["error"]
    assert error["code"] == 413 and error["message"] == "Request body too large"
    assert _total(rest) == before


# -- versions ---------------------------------------------------------------------------


def test_no_version_is_read_as_1_0(rest: Rest) -> None:
    response = requests.post(rest.base + "/message:send", json={"message": message_json()},
                             timeout=5)
    assert response.status_code == 200 and response.headers["A2A-Version"] == "1.0"
    assert "task" in response.json()


@pytest.mark.parametrize("version", ["1.0", "1.0.3", "1"])
def test_1_0_in_any_spelling_is_served(rest: Rest, version: str) -> None:
    response = rest.request("GET", "/tasks?pageSize=1", headers={"A2A-Version": version})
    assert response.status_code == 200 and response.headers["A2A-Version"] == "1.0"


@pytest.mark.parametrize(("where", "version"), [
    ("header", "0.3"), ("header", "2.0"), ("header", "1.1"), ("query", "0.3"),
])
def test_another_version_is_refused(rest: Rest, where: str, version: str) -> None:
    before = _total(rest)
    body = {"message": message_json()}
    if where == "header":
        response = rest.request("POST", "/message:send", body=body,
                                headers={"A2A-Version": version})
    else:
        response = requests.post(rest.base + f"/message:send?A2A-Version={version}", json=body,
                                 timeout=5)
    error = assert_status(response, 400, "VERSION_NOT_SUPPORTED", grpc="FAILED_PRECONDITION")
    assert version in error["message"] and "1.0" in error["message"]
    info = error["details"][0]["metadata"]
    assert info["version"] == version and info["supported"] == "1.0"
    assert _total(rest) == before


def test_an_app_without_1_0_serves_no_http_json() -> None:
    with served(A2AApp(RestAgent(), protocol=ProtocolSettings(versions=("0.3",)))) as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=5).json()
        assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == ["JSONRPC"]
        response = requests.get(handle.url + "/rest/tasks", timeout=5)
        assert response.status_code == 404
