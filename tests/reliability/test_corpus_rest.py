"""The hostile-input corpus, HTTP+JSON column, over real HTTP.

The rows that mean something without a JSON-RPC envelope are sent to ``/rest/...`` of a
served A2AApp: unreadable bodies, wrong top-level values, hostile task ids (in the path
now), caps, depth, size, surrogates, duplicate keys, content types, and hostile query
parameters and paths. Every answer must be the right HTTP status with a
``google.rpc.Status`` body naming the A2A reason, with no internal text; nothing is
stored (ListTasks totalSize unchanged) and the server still answers within a second.

Rows that have no REST form: 11-20 (the envelope: batches, ``jsonrpc``, ``method``,
request ids, notifications, params shapes), 23 (unknown members are ignored alike).
The field-cap rows are the JSON-RPC table's 1.0 rows (test_corpus.CAP_ROWS and
PUSH_CAP_ROWS), each carried the way the spec's HTTP table puts that method on the wire
(corpus_helpers.rest_request); a GET cannot carry an object, so GetTask metadata is left
out. Row 25 (another caller's task) is tests/rest/test_rest_scoping.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
import requests
import test_corpus as rpc
from corpus_helpers import (
    RestRequest,
    assert_alive,
    assert_status_body,
    chunks,
    corpus_app,
    random_task_id,
    raw_target,
    rest_request,
    rest_send,
    total_tasks_rest,
)
from support.a2a_http import Peer, served, user_message

from a2a_core.wire._common import (
    MAX_HISTORY_LENGTH,
    MAX_IDENTIFIER_LENGTH,
    MAX_PAGE_TOKEN_LENGTH,
    MAX_TASK_ID_LENGTH,
)
from a2a_wsgi.settings import CardSettings

MIB = 1024 * 1024
SEND: RestRequest = ("POST", "/message:send", {}, None)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with served(corpus_app()) as handle:
        yield handle


def msg(text: str = "hi", **members: Any) -> dict[str, Any]:
    return {**user_message(text, "1.0"), **members}


def send_body(message: Any, **params: Any) -> bytes:
    return json.dumps({"message": message, **params}).encode()


@dataclass(frozen=True)
class RestRow:
    """One case: the request, the HTTP status and ErrorInfo reason we answer."""

    row: str
    request: RestRequest
    status: int
    reason: str
    raw: bytes | None = None
    #: The path the error must name (a cap row), in the message and the BadRequest.
    field: str | None = None


def body_row(row: str, raw: bytes, status: int, reason: str,
             request: RestRequest = SEND) -> RestRow:
    return RestRow(row, request, status, reason, raw=raw)


def get(path: str, **query: str) -> RestRequest:
    return "GET", path, dict(query), None


ROWS: list[RestRow] = [
    body_row("1 empty body", b"", 400, "INVALID_PARAMS"),  # the empty message lacks .message
    body_row("2 truncated", b'{"message":', 400, "PARSE_ERROR"),
    body_row("3 invalid utf-8", b"\xff\xfe{", 400, "PARSE_ERROR"),
    body_row("4 utf-8 BOM", b"\xef\xbb\xbf" + send_body(msg()), 400, "PARSE_ERROR"),
    body_row("5 NaN", send_body(msg(), configuration={"historyLength": 1}).replace(
        b"1}", b"NaN}"), 400, "PARSE_ERROR"),
    body_row("5 Infinity", send_body(msg(), configuration={"historyLength": 1}).replace(
        b"1}", b"-Infinity}"), 400, "PARSE_ERROR"),
    body_row("6 5000-digit integer", send_body(msg(), configuration={
        "historyLength": 1}).replace(b"1}", b"7" * 5000 + b"}"), 400, "PARSE_ERROR"),
    body_row("7 10 000-deep array", rpc.deep(10_000), 400, "PARSE_ERROR"),
    body_row("7 deep inside metadata", send_body(msg(metadata=json.loads(rpc.deep(70)))), 400,
             "PARSE_ERROR"),
    body_row("8 duplicate key", b'{"message":{},"message":{}}', 400, "PARSE_ERROR"),
    body_row("9 lone surrogate escaped", send_body(msg()).replace(
        b'"text": "hi"', b'"text": "\\ud800"'), 400, "PARSE_ERROR"),
    body_row("9 lone surrogate raw", send_body(msg()).replace(
        b'"text": "hi"', b'"text": "\xed\xa0\x80"'), 400, "PARSE_ERROR"),
    body_row("10 top-level string", b'"hi"', 400, "INVALID_REQUEST"),
    body_row("10 top-level number", b"1", 400, "INVALID_REQUEST"),
    body_row("10 top-level true", b"true", 400, "INVALID_REQUEST"),
    body_row("11 empty array", b"[]", 400, "INVALID_REQUEST"),
    body_row("12 array of two sends", b"[" + send_body(msg()) + b"," + send_body(msg()) + b"]",
             400, "INVALID_REQUEST"),
    body_row("10 cancel body a string", b'"t"', 400, "INVALID_REQUEST",
             ("POST", f"/tasks/{random_task_id()}:cancel", {}, None)),
    *[RestRow(f"22 task id {label} ({verb} {path})",
              (verb, path.format(bad), {}, {} if verb == "POST" else None), 400,
              "INVALID_PARAMS")
      for verb, path in [("GET", "/tasks/{}"), ("POST", "/tasks/{}:cancel"),
                         ("GET", "/tasks/{}:subscribe"), ("POST", "/tasks/{}:subscribe")]
      for label, bad in [("with ..", "a%2E%2Eb"), ("with NUL", "tsk%00x"),
                         ("with CR/LF", "tsk%0D%0AX-Evil:%201"), ("of 300 chars", "t" * 300),
                         ("with space", "tsk%20x"), ("non-ASCII", "tsk-%C3%A9"),
                         ("one over the cap", "t" * (MAX_TASK_ID_LENGTH + 1))]],
    RestRow("22 task id in message.taskId", SEND, 400, "INVALID_PARAMS",
            raw=send_body(msg(taskId="../etc/passwd"))),
    RestRow("24 random UUID GetTask", get(f"/tasks/{random_task_id()}"), 404, "TASK_NOT_FOUND"),
    RestRow("24 random UUID CancelTask", ("POST", f"/tasks/{random_task_id()}:cancel", {}, {}),
            404, "TASK_NOT_FOUND"),
    *[RestRow(f"30 historyLength {n}", get(f"/tasks/{random_task_id()}", historyLength=str(n)),
              400, "INVALID_PARAMS") for n in (-1, MAX_HISTORY_LENGTH + 1, 10**12)],
    RestRow("30 historyLength 10^12 on list", get("/tasks", historyLength=str(10**12)), 400,
            "INVALID_PARAMS"),
    RestRow("30 historyLength 10^12 on send", SEND, 400, "INVALID_PARAMS",
            raw=send_body(msg(), configuration={"historyLength": 10**12})),
    RestRow("31 unknown taskId", SEND, 404, "TASK_NOT_FOUND",
            raw=send_body(msg(taskId=random_task_id()))),
    RestRow("32 zero parts", SEND, 400, "INVALID_PARAMS", raw=send_body(msg(parts=[]))),
    RestRow("32 10 001 parts", SEND, 400, "INVALID_PARAMS",
            raw=send_body(msg(parts=[{"text": "p"}] * 10_001))),
    RestRow("37 push config with push off",
            ("POST", f"/tasks/{random_task_id()}/pushNotificationConfigs", {},
             {"url": "https://hooks.example/a2a"}), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
    # hostile query parameters
    RestRow("q status lower case", get("/tasks", status="working"), 400, "INVALID_PARAMS"),
    RestRow("q status with CR/LF", get("/tasks", status="TASK_STATE_WORKING\r\nX-Evil: 1"),
            400, "INVALID_PARAMS"),
    RestRow("q pageSize of 25 digits", get("/tasks", pageSize="9" * 25), 400,
            "INVALID_PARAMS"),
    RestRow("q pageSize 1e3", get("/tasks", pageSize="1e3"), 400, "INVALID_PARAMS"),
    RestRow("q pageSize 0", get("/tasks", pageSize="0"), 400, "INVALID_PARAMS"),
    RestRow("q historyLength NUL", get("/tasks", historyLength="\x00"), 400, "INVALID_PARAMS"),
    RestRow("q includeArtifacts true+NUL", get("/tasks", includeArtifacts="true\x00"), 400,
            "INVALID_PARAMS"),
    RestRow("q contextId over the cap", get("/tasks", contextId="c" * (MAX_IDENTIFIER_LENGTH + 1)),
            400, "INVALID_PARAMS", field="params.contextId"),
    RestRow("q pageToken over the cap", get("/tasks", pageToken="p" * (MAX_PAGE_TOKEN_LENGTH + 1)),
            400, "INVALID_PARAMS", field="params.pageToken"),
    RestRow("q pageToken never issued", get("/tasks", pageToken="forged"), 400,
            "INVALID_PARAMS"),
    RestRow("q statusTimestampAfter garbage", get("/tasks", statusTimestampAfter="yesterday"),
            400, "INVALID_PARAMS"),
    RestRow("tenant over the cap", get(f"/{'t' * (MAX_IDENTIFIER_LENGTH + 1)}/tasks"), 400,
            "INVALID_PARAMS", field="params.tenant"),
    RestRow("unknown path", get("/tasks/x/y/z"), 404, "METHOD_NOT_FOUND"),
]


# -- the JSON-RPC table's cap rows, carried over HTTP+JSON ---------------------------------


def _carried(row: Any) -> RestRow | None:
    """A 1.0 JSON-RPC cap row as the HTTP+JSON request of the same call."""
    if row.version != "1.0" or row.field is None:
        return None
    envelope = json.loads(row.body)
    request = rest_request(envelope["method"], envelope["params"])
    if request is None:
        return None
    return RestRow(f"{row.row} (HTTP+JSON)", request, 400, "INVALID_PARAMS", field=row.field)


CAP_ROWS = [r for r in map(_carried, rpc.CAP_ROWS) if r is not None]


def test_the_cap_rows_were_carried_over() -> None:
    """Every 1.0 cap row has a REST form except those that need an object in a query."""
    left_out = [r.row for r in rpc.CAP_ROWS if r.version == "1.0" and r.field and
                _carried(r) is None]
    assert left_out == ["cap GetTask metadata 1.0"]
    assert len(CAP_ROWS) >= 30


def _check(url: str, case: RestRow) -> None:
    before = total_tasks_rest(url)
    response = rest_send(url, case.request, raw=case.raw)
    error = assert_status_body(response.status_code, response.headers, response.content,
                               case.status, case.reason)
    if case.field is not None:
        assert error["message"].startswith(f"{case.field}: "), error
        violations = [v["field"] for d in error["details"]
                      if d["@type"].endswith("google.rpc.BadRequest")
                      for v in d["fieldViolations"]]
        assert violations == [case.field], error
        assert len(response.content) < 1024, "the over-cap value is not echoed back"
    assert total_tasks_rest(url) == before
    assert_alive(url)


@pytest.mark.parametrize("case", ROWS + CAP_ROWS, ids=[r.row for r in ROWS + CAP_ROWS])
def test_corpus_row_over_http_json(server: Any, case: RestRow) -> None:
    _check(server.url, case)


@pytest.fixture(scope="module")
def push_server() -> Iterator[Any]:
    """Push declared, with one WORKING task to attach configs to."""
    app = corpus_app(card=CardSettings(overrides={"capabilities": {"push_notifications": True}}))
    with served(app) as handle:
        task = Peer(handle.url, "1.0").send("wait", blocking=False)
        yield SimpleNamespace(url=handle.url, task_id=task["id"])
        Peer(handle.url, "1.0").rpc("cancel", {"id": task["id"]})


PUSH_ROWS = [row for row in rpc.PUSH_CAP_ROWS if row[1] == "1.0"]


@pytest.mark.parametrize(("label", "version", "method", "params", "field"), PUSH_ROWS,
                         ids=[f"cap push {row[0]} (HTTP+JSON)" for row in PUSH_ROWS])
def test_push_cap_rows_over_http_json(push_server: Any, label: str, version: str, method: str,
                                      params: Any, field: str) -> None:
    hooks = f"{push_server.url}/rest/tasks/{push_server.task_id}/pushNotificationConfigs"
    before = requests.get(hooks, timeout=5).json()
    request = rest_request(method, params(push_server.task_id))
    assert request is not None
    response = rest_send(push_server.url, request)
    error = assert_status_body(response.status_code, response.headers, response.content, 400,
                               "INVALID_PARAMS")
    assert error["message"].startswith(f"{field}: "), error
    assert len(response.content) < 1024
    assert requests.get(hooks, timeout=5).json() == before
    assert_alive(push_server.url)


# -- paths sent byte for byte ---------------------------------------------------------------


@pytest.mark.parametrize(("target", "status", "reason"), [
    ("/rest/tasks/..", 400, "INVALID_PARAMS"),         # the id "..", refused, never looked up
    ("/rest/tasks/%2e%2e", 400, "INVALID_PARAMS"),     # decoded: the id "..", refused
    ("/rest/tasks/./x", 404, "METHOD_NOT_FOUND"),
    ("/rest/../.well-known/agent-card.json", 404, "METHOD_NOT_FOUND"),
    ("/rest/tasks/a%2Fb", 404, "METHOD_NOT_FOUND"),    # %2F decodes to a separator
    ("/rest/tasks/%00", 400, "INVALID_PARAMS"),
    ("/rest/tasks/x%0d%0aSet-Cookie:%20a=b", 400, "INVALID_PARAMS"),
    ("/rest/tasks/" + "%41" * 200, 400, "INVALID_PARAMS"),
    ("/rest/tasks?status=TASK_STATE_WORKING&status=bogus", 400, "INVALID_PARAMS"),
    ("/rest/tasks?pageSize=%FF", 400, "INVALID_PARAMS"),
])
def test_hostile_paths_byte_for_byte(server: Any, target: str, status: int, reason: str) -> None:
    before = total_tasks_rest(server.url)
    code, headers, body = raw_target(server.url, target)
    assert_status_body(code, headers, body, status, reason)
    assert "Set-Cookie" not in headers
    assert total_tasks_rest(server.url) == before
    assert_alive(server.url)


def test_a_tenant_is_an_opaque_scope(server: Any) -> None:
    """Only a tenant's length is capped: a NUL or CR/LF tenant is a scope of its own, with
    its own (empty) task list; it reaches no header and no other tenant's tasks."""
    Peer(server.url, "1.0").send("in the default tenant")
    for target in ("/rest/%00/tasks", "/rest/a%0D%0AX-Evil:%201/tasks"):
        code, headers, body = raw_target(server.url, target)
        assert code == 200 and "X-Evil" not in headers
        assert json.loads(body)["tasks"] == []


def test_a_url_over_the_server_limit_is_refused_by_the_server(server: Any) -> None:
    """A 100 000-character query never reaches the app: the HTTP server answers 414."""
    response = requests.get(server.url + "/rest/tasks?contextId=" + "c" * 100_000, timeout=10)
    assert response.status_code == 414
    assert_alive(server.url)


# -- content types and sizes --------------------------------------------------------------


@pytest.mark.parametrize("content_type", [
    "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
    "Multipart/Form-Data; boundary=x",
])
def test_row_39_browser_simple_content_types_get_415(server: Any, content_type: str) -> None:
    before = total_tasks_rest(server.url)
    response = rest_send(server.url, SEND, raw=send_body(msg()), content_type=content_type)
    assert response.status_code == 415
    assert response.headers["Accept-Post"] == "application/a2a+json, application/json"
    error = assert_status_body(415, response.headers, response.content, 415, "INVALID_REQUEST")
    assert "Unsupported Media Type" in error["message"]
    assert total_tasks_rest(server.url) == before
    assert_alive(server.url)


@pytest.mark.parametrize("content_type", [
    None, "application/json", "application/a2a+json; charset=utf-8", "application/octet-stream",
])
def test_row_39_other_content_types_are_read_as_json(server: Any,
                                                     content_type: str | None) -> None:
    response = rest_send(server.url, SEND, raw=send_body(msg()), content_type=content_type)
    assert response.status_code == 200, response.text
    assert response.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_row_40_two_mib_body_is_413(server: Any, chunked: bool) -> None:
    """Over HTTP+JSON the corpus's 413 is the answer (JSON-RPC keeps HTTP 200)."""
    before = total_tasks_rest(server.url)
    body = send_body(msg("x" * (2 * MIB)))
    response = requests.post(server.url + "/rest/message:send", timeout=10,
                             data=chunks(body) if chunked else body,
                             headers={"Content-Type": "application/a2a+json"})
    error = assert_status_body(response.status_code, response.headers, response.content, 413,
                               "INVALID_REQUEST")
    assert error["message"] == "Request body too large"
    assert total_tasks_rest(server.url) == before
    assert_alive(server.url)


def test_row_7_depth_bomb_over_http_json_is_fast(server: Any) -> None:
    bomb = rpc.deep(10_000)
    started = time.perf_counter()
    response = rest_send(server.url, SEND, raw=bomb)
    assert time.perf_counter() - started < 0.5
    assert_status_body(response.status_code, response.headers, response.content, 400,
                       "PARSE_ERROR")


def test_row_32_a_900_kib_part_under_the_body_limit_is_accepted(server: Any) -> None:
    before = total_tasks_rest(server.url)
    text = "x" * (900 * 1024)
    response = rest_send(server.url, SEND, raw=send_body(msg(text)))
    assert response.json()["task"]["artifacts"][0]["parts"][0]["text"] == text
    assert total_tasks_rest(server.url) == before + 1
