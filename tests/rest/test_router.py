"""The HTTP+JSON binding's sans-IO core: routes, query and body reading, errors, SSE framing."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core import wire
from a2a_core._http import HttpResponse
from a2a_core._jsonrpc import DEFAULT_MAX_DEPTH
from a2a_core._rest import (
    A2A_JSON,
    GRPC_STATUS,
    REST_VERSIONS,
    RestCall,
    RestError,
    decode_status,
    encode_status,
    error_response,
    json_response,
    request_target,
    route,
    sse_body,
    sse_response,
)
from a2a_core._service import HEARTBEAT, OutboundEvent, StreamItem
from a2a_core._sse import END, NEED_DATA, ServerSentEvent, SSEDecoder
from a2a_core._versioning import negotiate_version
from a2a_core.errors import (
    ERROR_CLASSES,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    RPCError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_core.models import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    PushNotificationConfig,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_core.optable import OPERATIONS, Operation

MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
SEND_BODY = json.dumps({"message": MESSAGE, "configuration": {"returnImmediately": True}})
CONFIG_BODY = json.dumps({"url": "https://hooks.example/a2a", "token": "tok"})
ALL_LIST_QUERY = {
    "contextId": "ctx-1",
    "status": "TASK_STATE_WORKING",
    "pageSize": "10",
    "pageToken": "cursor",
    "historyLength": "0",
    "statusTimestampAfter": "2024-05-01T00:00:00Z",
    "includeArtifacts": "true",
}

#: (method, path, query, body) -> (operation, params), for the un-prefixed paths.
CASES: list[tuple[str, str, dict[str, str], str, Operation, dict[str, Any]]] = [
    (
        "POST", "/message:send", {}, SEND_BODY, Operation.SEND_MESSAGE,
        {"message": MESSAGE, "configuration": {"returnImmediately": True}},
    ),
    (
        "POST", "/message:stream", {}, SEND_BODY, Operation.SEND_STREAMING_MESSAGE,
        {"message": MESSAGE, "configuration": {"returnImmediately": True}},
    ),
    ("GET", "/tasks/t-1", {}, "", Operation.GET_TASK, {"id": "t-1"}),
    (
        "GET", "/tasks/t-1", {"historyLength": "3"}, "", Operation.GET_TASK,
        {"id": "t-1", "historyLength": 3},
    ),
    ("GET", "/tasks", {}, "", Operation.LIST_TASKS, {}),
    (
        "GET", "/tasks", ALL_LIST_QUERY, "", Operation.LIST_TASKS,
        {
            "contextId": "ctx-1", "status": "TASK_STATE_WORKING", "pageSize": 10,
            "pageToken": "cursor", "historyLength": 0,
            "statusTimestampAfter": "2024-05-01T00:00:00Z", "includeArtifacts": True,
        },
    ),
    ("POST", "/tasks/t-1:cancel", {}, "", Operation.CANCEL_TASK, {"id": "t-1"}),
    (
        "POST", "/tasks/t-1:cancel", {}, '{"metadata":{"why":"done"}}', Operation.CANCEL_TASK,
        {"id": "t-1", "metadata": {"why": "done"}},
    ),
    ("GET", "/tasks/t-1:subscribe", {}, "", Operation.SUBSCRIBE_TO_TASK, {"id": "t-1"}),
    ("POST", "/tasks/t-1:subscribe", {}, "", Operation.SUBSCRIBE_TO_TASK, {"id": "t-1"}),
    (
        "POST", "/tasks/t-1/pushNotificationConfigs", {}, CONFIG_BODY,
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        {"taskId": "t-1", "url": "https://hooks.example/a2a", "token": "tok"},
    ),
    (
        "GET", "/tasks/t-1/pushNotificationConfigs", {"pageSize": "5", "pageToken": "p2"}, "",
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        {"taskId": "t-1", "pageSize": 5, "pageToken": "p2"},
    ),
    (
        "GET", "/tasks/t-1/pushNotificationConfigs/c-1", {}, "",
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, {"taskId": "t-1", "id": "c-1"},
    ),
    (
        "DELETE", "/tasks/t-1/pushNotificationConfigs/c-1", {}, "",
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, {"taskId": "t-1", "id": "c-1"},
    ),
    ("GET", "/extendedAgentCard", {}, "", Operation.GET_EXTENDED_AGENT_CARD, {}),
]  # fmt: skip


def _call(
    method: str, path: str, query: dict[str, str] | None = None, body: str = "", **options: Any
) -> RestCall:
    routed = route(method, path, query or {}, body.encode(), **options)
    assert isinstance(routed, RestCall), routed
    return routed


def _refused(
    method: str,
    path: str,
    query: dict[str, str] | None = None,
    body: str | bytes = "",
    **options: Any,
) -> RestError:
    raw = body.encode() if isinstance(body, str) else body
    routed = route(method, path, query or {}, raw, **options)
    assert isinstance(routed, RestError), routed
    return routed


# -- every route, with and without a tenant -----------------------------------------------


def test_the_cases_cover_every_route() -> None:
    covered = {(method, op) for method, _, _, _, op, _ in CASES}
    assert covered == {(r.method, op) for op in OPERATIONS for r in op.routes}
    assert all(op.routes for op in OPERATIONS)


@pytest.mark.parametrize(("method", "path", "query", "body", "operation", "params"), CASES)
def test_route(
    method: str,
    path: str,
    query: dict[str, str],
    body: str,
    operation: Operation,
    params: dict[str, Any],
) -> None:
    call = _call(method, path, query, body)
    assert (call.operation, call.params, call.tenant) == (operation, params, None)
    assert call.is_streaming == (
        operation in (Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK)
    )


@pytest.mark.parametrize(("method", "path", "query", "body", "operation", "params"), CASES)
def test_route_under_a_tenant(
    method: str,
    path: str,
    query: dict[str, str],
    body: str,
    operation: Operation,
    params: dict[str, Any],
) -> None:
    call = _call(method, "/acme" + path, query, body)
    assert (call.operation, call.params, call.tenant) == (
        operation,
        {**params, "tenant": "acme"},
        "acme",
    )


@pytest.mark.parametrize(("method", "path", "query", "body", "operation", "params"), CASES)
def test_routed_params_decode_as_1_0_params(
    method: str,
    path: str,
    query: dict[str, str],
    body: str,
    operation: Operation,
    params: dict[str, Any],
) -> None:
    call = _call(method, "/acme" + path, query, body)
    request = wire.decode_params(call.operation, call.params, "1.0")
    assert request.tenant == "acme"


def test_list_tasks_query_decodes_to_the_request() -> None:
    call = _call("GET", "/tasks", ALL_LIST_QUERY)
    assert wire.decode_params(Operation.LIST_TASKS, call.params, "1.0") == ListTasksRequest(
        context_id="ctx-1",
        status=TaskState.WORKING,
        page_size=10,
        page_token="cursor",
        history_length=0,
        status_timestamp_after=datetime(2024, 5, 1, tzinfo=timezone.utc),
        include_artifacts=True,
    )


def test_send_body_decodes_to_the_request() -> None:
    call = _call("POST", "/message:send", body=SEND_BODY)
    request = wire.decode_params(Operation.SEND_MESSAGE, call.params, "1.0")
    assert request.message.text == "hi" and request.configuration.blocking is False


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/tasks/tsk:1:2", {"id": "tsk:1:2"}),  # ids may hold colons; only the last is a verb
        ("/tasks/tasks", {"id": "tasks"}),  # un-prefixed paths win over a tenant "tasks"
        ("tasks/t-1/", {"id": "t-1"}),  # leading and trailing slashes do not matter
    ],
)
def test_path_matching_edges(path: str, params: dict[str, Any]) -> None:
    call = _call("GET", path)
    assert (call.operation, call.params) == (Operation.GET_TASK, params)


def test_a_custom_verb_keeps_the_colons_of_the_id() -> None:
    assert _call("POST", "/tasks/a:b:cancel").params == {"id": "a:b"}


def test_tenant_prefix_of_a_path_whose_first_segment_is_a_route_word() -> None:
    call = _call("GET", "/tasks/tasks/t-1")
    assert (call.operation, call.params) == (Operation.GET_TASK, {"id": "t-1", "tenant": "tasks"})


# -- query parameters ---------------------------------------------------------------------


def test_unknown_and_empty_query_parameters_are_ignored() -> None:
    query = {"A2A-Version": "1.0", "history_length": "x", "historyLength": "", "bogus": "1"}
    assert _call("GET", "/tasks/t-1", query).params == {"id": "t-1"}


def test_query_parameters_on_a_body_route_are_ignored() -> None:
    assert _call("POST", "/tasks/t-1:cancel", {"metadata": "x"}).params == {"id": "t-1"}


@pytest.mark.parametrize(
    ("query", "value"),
    [({"includeArtifacts": "false"}, False), ({"includeArtifacts": "TRUE"}, True)],
)
def test_booleans(query: dict[str, str], value: bool) -> None:
    assert _call("GET", "/tasks", query).params == {"includeArtifacts": value}


def test_negative_integers_reach_the_decoder_which_refuses_them() -> None:
    call = _call("GET", "/tasks/t-1", {"historyLength": "-1"})
    assert call.params["historyLength"] == -1
    with pytest.raises(InvalidParamsError, match="historyLength"):
        wire.decode_params(Operation.GET_TASK, call.params, "1.0")


@pytest.mark.parametrize(
    ("path", "query", "field", "text"),
    [
        ("/tasks/t-1", {"historyLength": "abc"}, "historyLength", "expected an integer"),
        ("/tasks/t-1", {"historyLength": "1.5"}, "historyLength", "expected an integer"),
        ("/tasks", {"pageSize": "9" * 40}, "pageSize", "expected an integer"),
        ("/tasks", {"includeArtifacts": "yes"}, "includeArtifacts", "expected true or false"),
        ("/tasks", {"includeArtifacts": "1"}, "includeArtifacts", "expected true or false"),
        ("/tasks", {"status": "TASK_STATE_BOGUS"}, "status", "TaskState name"),
        ("/tasks", {"status": "working"}, "status", "TaskState name"),
        ("/tasks/t/pushNotificationConfigs", {"pageSize": "ten"}, "pageSize", "an integer"),
    ],
)
def test_bad_query_parameter_is_400(
    path: str, query: dict[str, str], field: str, text: str
) -> None:
    refused = _refused("GET", path, query)
    assert refused.status == 400 and isinstance(refused.error, InvalidParamsError)
    assert refused.error.message.startswith(f"query parameter {field}: ")
    assert text in refused.error.message
    assert field in refused.error.field_violations


def test_a_long_bad_value_is_cut_short_in_the_message() -> None:
    refused = _refused("GET", "/tasks/t-1", {"historyLength": "x" * 10_000})
    assert len(refused.error.message) < 200


# -- 404, 405 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/", "", "/nope", "/message:sendx", "/message", "/v1/message:send/x", "/tasks/t-1/x",
        "/tasks/t-1/pushNotificationConfigs/c-1/x", "/a/b/tasks", "/tasks//x", "/tasks/:cancel",
        "/tasks/:subscribe", "/acme/tasks/x:cancelx:cancel/y",
        "/.well-known/agent-card.json",
    ],
)  # fmt: skip
def test_unknown_path_is_404(path: str) -> None:
    refused = _refused("GET", path)
    assert refused.status == 404 and isinstance(refused.error, MethodNotFoundError)
    assert refused.headers == ()


def test_404_message_does_not_echo_a_huge_path() -> None:
    assert len(_refused("GET", "/" + "x" * 100_000).error.message) < 200


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("GET", "/message:send", "POST"),
        ("PUT", "/message:stream", "POST"),
        ("POST", "/tasks/t-1", "GET"),
        ("DELETE", "/tasks", "GET"),
        ("GET", "/tasks/t-1:cancel", "POST"),
        ("DELETE", "/tasks/t-1:subscribe", "GET, POST"),
        ("PUT", "/tasks/t-1/pushNotificationConfigs", "GET, POST"),
        ("POST", "/tasks/t-1/pushNotificationConfigs/c-1", "DELETE, GET"),
        ("HEAD", "/acme/extendedAgentCard", "GET"),
        ("OPTIONS", "/acme/tasks/t-1", "GET"),
    ],
)
def test_wrong_method_is_405_with_allow(method: str, path: str, allow: str) -> None:
    refused = _refused(method, path)
    assert refused.status == 405 and refused.headers == (("Allow", allow),)
    assert allow in refused.error.message
    response = error_response(refused.error, status=refused.status, headers=refused.headers)
    assert response.status == 405 and ("Allow", allow) in response.headers


# -- bodies -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body", [b"{", b"nope", b'{"a":1,"a":2}', b"\xff", b'{"x":NaN}', b"\xef\xbb\xbf{}"]
)
def test_bad_json_is_400_parse_error(body: bytes) -> None:
    refused = _refused("POST", "/message:send", body=body)
    assert refused.status == 400 and type(refused.error) is ParseError
    assert refused.error.message.startswith("Invalid JSON payload: ")


@pytest.mark.parametrize("body", ["[]", '"text"', "1", "null"])
def test_a_body_that_is_not_an_object_is_400(body: str) -> None:
    refused = _refused("POST", "/tasks/t-1:cancel", body=body)
    assert refused.status == 400 and type(refused.error) is InvalidRequestError


def test_body_depth_limit_is_the_json_rpc_one() -> None:
    def nested(depth: int) -> str:
        return '{"metadata":' + '{"a":' * (depth - 1) + "1" + "}" * depth

    assert _call("POST", "/tasks/t-1:cancel", body=nested(DEFAULT_MAX_DEPTH)).params["id"] == "t-1"
    refused = _refused("POST", "/tasks/t-1:cancel", body=nested(DEFAULT_MAX_DEPTH + 1))
    assert type(refused.error) is ParseError and "nesting deeper than" in refused.error.message
    assert type(_refused("POST", "/tasks/t-1:cancel", body=nested(5), max_depth=4).error) is (
        ParseError
    )


def test_body_too_large_is_413() -> None:
    refused = _refused("POST", "/message:send", body=SEND_BODY, body_too_large=True)
    assert refused.status == 413 and type(refused.error) is InvalidRequestError


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "Text/Plain; charset=utf-8", "application/x-www-form-urlencoded",
     "multipart/form-data; boundary=x"],
)  # fmt: skip
def test_browser_form_content_types_are_415(content_type: str) -> None:
    refused = _refused("POST", "/tasks/t-1:cancel", content_type=content_type)
    assert refused.status == 415
    assert dict(refused.headers)["Accept-Post"] == "application/a2a+json, application/json"


@pytest.mark.parametrize(
    "content_type", [None, "application/json", "application/a2a+json; charset=utf-8"]
)
def test_json_content_types_are_read(content_type: str | None) -> None:
    call = _call("POST", "/message:send", body=SEND_BODY, content_type=content_type)
    assert call.operation is Operation.SEND_MESSAGE


def test_content_type_of_a_get_is_not_checked() -> None:
    assert _call("GET", "/tasks/t-1", content_type="text/plain").params == {"id": "t-1"}


@pytest.mark.parametrize(
    ("path", "body", "member"),
    [
        ("/tasks/t-1:cancel", '{"id":"t-2"}', "id"),
        ("/tasks/t-1/pushNotificationConfigs", '{"taskId":"t-2","url":"https://h/"}', "taskId"),
        ("/tasks/t-1/pushNotificationConfigs", '{"task_id":"t-2","url":"https://h/"}', "task_id"),
        ("/acme/message:send", json.dumps({"message": MESSAGE, "tenant": "other"}), "tenant"),
    ],
)
def test_a_body_contradicting_the_path_is_400(path: str, body: str, member: str) -> None:
    refused = _refused("POST", path, body=body)
    assert refused.status == 400 and isinstance(refused.error, InvalidParamsError)
    assert member in refused.error.field_violations


def test_a_body_repeating_the_path_is_accepted() -> None:
    body = '{"task_id":"t-1","url":"https://h/","tenant":"acme"}'
    call = _call("POST", "/acme/tasks/t-1/pushNotificationConfigs", body=body)
    assert call.params == {"taskId": "t-1", "url": "https://h/", "tenant": "acme"}


def test_a_tenant_in_the_body_of_an_unprefixed_path_is_kept() -> None:
    call = _call("POST", "/message:send", body=json.dumps({"message": MESSAGE, "tenant": "t"}))
    assert call.params["tenant"] == "t" and call.tenant is None


# -- the client's side of the table -------------------------------------------------------

NOW = datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)
MODEL_CASES: list[tuple[Operation, object]] = [
    (
        Operation.SEND_MESSAGE,
        SendMessageRequest(
            message=Message(message_id="m-1", role=Role.USER, parts=(TextPart(text="hi"),)),
            configuration=SendMessageConfiguration(history_length=2, blocking=False),
            metadata={"k": "v"},
        ),
    ),
    (
        Operation.SEND_STREAMING_MESSAGE,
        SendMessageRequest(
            message=Message(message_id="m-2", role=Role.USER, parts=(TextPart(text="yo"),))
        ),
    ),
    (Operation.GET_TASK, GetTaskRequest(id="t-1", history_length=0)),
    (
        Operation.LIST_TASKS,
        ListTasksRequest(
            context_id="c", status=TaskState.INPUT_REQUIRED, page_size=7, page_token="p",
            history_length=4, status_timestamp_after=NOW, include_artifacts=True,
        ),
    ),
    (Operation.LIST_TASKS, ListTasksRequest()),
    (Operation.CANCEL_TASK, CancelTaskRequest(id="t-1", metadata={"why": "late"})),
    (Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id="t-1")),
    (
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        TaskPushNotificationConfig(
            task_id="t-1",
            push_notification_config=PushNotificationConfig(url="https://h/x", id="c", token="k"),
        ),
    ),
    (
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        GetTaskPushNotificationConfigRequest(task_id="t-1", config_id="c:1@x"),
    ),
    (
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        ListTaskPushNotificationConfigsRequest(task_id="t-1", page_size=3, page_token="n"),
    ),
    (
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        DeleteTaskPushNotificationConfigRequest(task_id="t-1", config_id="c 1"),
    ),
    (Operation.GET_EXTENDED_AGENT_CARD, GetExtendedAgentCardRequest()),
]  # fmt: skip


def _round_trip(operation: Operation, request: object, method: str | None = None) -> object:
    """model -> 1.0 params -> HTTP request -> (decoded as WSGI would) route -> model."""
    params = wire.encode_params(operation, request, "1.0")
    target = request_target(operation, params, method=method)
    body = b"" if target.body is None else json.dumps(target.body).encode()
    call = _call(target.method, unquote(target.path), target.query, body.decode())
    assert call.operation is operation
    return wire.decode_params(operation, call.params, "1.0")


@pytest.mark.parametrize(("operation", "request_"), MODEL_CASES)
@pytest.mark.parametrize("tenant", [None, "acme", "a b:c"])
def test_client_requests_route_back_to_the_same_request(
    operation: Operation, request_: object, tenant: str | None
) -> None:
    if tenant is not None:
        request_ = dataclasses.replace(request_, tenant=tenant)  # type: ignore[type-var]
    assert _round_trip(operation, request_) == request_


def test_a_slash_in_a_tenant_cannot_survive_a_decoded_path() -> None:
    target = request_target(Operation.GET_TASK, {"id": "t", "tenant": "a/b"})
    assert target.path == "/a%2Fb/tasks/t"
    assert _refused("GET", unquote(target.path)).status == 404


def test_subscribe_round_trips_over_both_methods() -> None:
    request = SubscribeToTaskRequest(id="t-9", tenant="x")
    for method in ("POST", "GET"):
        assert _round_trip(Operation.SUBSCRIBE_TO_TASK, request, method) == request


@given(
    task_id=st.text(alphabet="abcXYZ019._~:@+=-", min_size=1, max_size=40).filter(
        lambda s: not s.startswith(".") and ".." not in s
        and not s.endswith((":cancel", ":subscribe"))
    ),
    # a tenant that is blank, "." or ".." is refused (test_rest_scoping); any other round-trips
    tenant=st.one_of(st.none(), st.text(alphabet="abc-_.~!$&'()*+,;=:@ %", min_size=1).filter(
        lambda t: t.strip() not in ("", ".", ".."))),
)  # fmt: skip
def test_any_task_id_and_tenant_round_trip(task_id: str, tenant: str | None) -> None:
    request = GetTaskRequest(id=task_id, history_length=1, tenant=tenant)
    assert _round_trip(Operation.GET_TASK, request) == request


def test_request_target_shapes() -> None:
    target = request_target(Operation.CANCEL_TASK, {"id": "t:1", "tenant": "acme"})
    assert (target.method, target.path, target.query, target.body) == (
        "POST",
        "/acme/tasks/t%3A1:cancel",
        {},
        {},
    )
    params = {"includeArtifacts": False, "pageSize": 5, "status": "TASK_STATE_FAILED"}
    target = request_target(Operation.LIST_TASKS, params)
    assert (target.method, target.path, target.body) == ("GET", "/tasks", None)
    assert target.query == {"includeArtifacts": "false", "pageSize": "5",
                            "status": "TASK_STATE_FAILED"}  # fmt: skip


@pytest.mark.parametrize(
    ("operation", "params", "text"),
    [
        (Operation.GET_TASK, {}, "needs id"),
        (Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, {"taskId": "t"}, "needs id"),
        (Operation.GET_TASK, {"id": "t", "metadata": {"a": 1}}, "cannot carry ['metadata']"),
        (Operation.LIST_TASKS, {"pageToken": ["a"]}, "cannot carry list"),
    ],
)
def test_request_target_refuses_what_rest_cannot_carry(
    operation: Operation, params: dict[str, Any], text: str
) -> None:
    with pytest.raises(ValueError, match=text.replace("[", r"\[").replace("]", r"\]")):
        request_target(operation, params)


def test_request_target_refuses_an_unknown_method() -> None:
    with pytest.raises(ValueError, match="no HTTP\\+JSON route"):
        request_target(Operation.GET_TASK, {"id": "t"}, method="POST")


def test_rest_speaks_only_1_0() -> None:
    assert negotiate_version("1.0", REST_VERSIONS) == "1.0"
    with pytest.raises(VersionNotSupportedError):
        negotiate_version(None, REST_VERSIONS)  # no header is 0.3, which has no REST here


# -- errors -------------------------------------------------------------------------------

#: code -> (HTTP status, google.rpc.Code, ErrorInfo reason): the 1.0.1 specification's error table.
SPEC_ERRORS: dict[int, tuple[int, str, str]] = {
    -32700: (400, "INVALID_ARGUMENT", "PARSE_ERROR"),
    -32600: (400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
    -32601: (404, "NOT_FOUND", "METHOD_NOT_FOUND"),
    -32602: (400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
    -32603: (500, "INTERNAL", "INTERNAL_ERROR"),
    -32001: (404, "NOT_FOUND", "TASK_NOT_FOUND"),
    -32002: (400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
    -32003: (400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"),
    -32004: (400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"),
    -32005: (400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"),
    -32006: (500, "INTERNAL", "INVALID_AGENT_RESPONSE"),
    -32007: (400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
    -32008: (400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"),
    -32009: (400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
    -32010: (409, "ABORTED", "TASK_GENERATION_MISMATCH"),  # dev-1.1 preview
}


def test_every_registered_error_has_a_spec_mapping() -> None:
    assert set(SPEC_ERRORS) == set(ERROR_CLASSES)
    assert set(GRPC_STATUS) == set(ERROR_CLASSES.values())


def _body_of(response: HttpResponse) -> Any:
    assert isinstance(response.body, bytes)
    return json.loads(response.body)


@pytest.mark.parametrize("code", sorted(SPEC_ERRORS))
def test_error_response_for_every_registered_error(code: int) -> None:
    http, status, reason = SPEC_ERRORS[code]
    err = ERROR_CLASSES[code]("Something went wrong")
    response = error_response(err)
    assert response.status == http
    assert response.headers == [("Content-Type", A2A_JSON)]
    assert _body_of(response) == {
        "error": {
            "code": http,
            "status": status,
            "message": "Something went wrong",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": reason,
                    "domain": "a2a-protocol.org",
                    "metadata": {},
                }
            ],
        }
    }


@pytest.mark.parametrize("code", sorted(SPEC_ERRORS))
def test_every_error_reads_back_as_its_class(code: int) -> None:
    cls = ERROR_CLASSES[code]
    err = cls("why", {"taskId": "t-1"}, metadata={"k": "v"}, field_violations={"a.b": "bad"})
    back = decode_status(_body_of(error_response(err)))
    assert type(back) is cls and back == err
    assert (back.metadata, back.field_violations) == ({"k": "v"}, {"a.b": "bad"})


def test_error_details_match_the_json_rpc_binding() -> None:
    err = InvalidParamsError("params.message: missing", field_violations={"params.message": "x"})
    details = encode_status(err)["error"]["details"]
    assert details == wire.encode_error(err, "1.0")["data"]
    assert details[1] == {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [{"field": "params.message", "description": "x"}],
    }


def test_an_unregistered_code_is_500_unknown() -> None:
    body = _body_of(error_response(RPCError("odd", code=-32050)))["error"]
    assert (body["code"], body["status"], body["details"][0]["reason"]) == (
        500,
        "UNKNOWN",
        "UNKNOWN_ERROR",
    )


def test_status_override_and_extra_headers() -> None:
    response = error_response(
        InvalidRequestError("too big"), status=413, headers=[("A2A-Version", "1.0")]
    )
    assert response.status == 413 and _body_of(response)["error"]["code"] == 413
    assert response.headers == [("Content-Type", A2A_JSON), ("A2A-Version", "1.0")]


def test_an_internal_error_says_nothing_of_the_cause() -> None:
    body = _body_of(error_response(InternalError()))
    assert body["error"]["message"] == "Internal error"
    assert "Traceback" not in json.dumps(body)


@pytest.mark.parametrize(
    "payload",
    [
        None, [], "text", {"error": "x"}, {"error": {"code": 404}},
        {"error": {"code": 404, "details": "x"}},
        {"error": {"code": 404, "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                             "reason": "SOMETHING_NEW",
                                             "domain": "a2a-protocol.org"}]}},
        {"error": {"code": 404, "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                             "reason": "TASK_NOT_FOUND",
                                             "domain": "googleapis.com"}]}},
        {"detail": "Not Found"},
    ],
)  # fmt: skip
def test_decode_status_of_what_is_no_a2a_status(payload: Any) -> None:
    assert decode_status(payload) is None


def test_decode_status_of_the_sdk_shape() -> None:
    """The official SDK: ErrorInfo metadata is its error's ``data`` dict; no BadRequest."""
    payload = {
        "error": {
            "code": 400, "status": "FAILED_PRECONDITION", "message": "Task is terminal",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                 "reason": "UNSUPPORTED_OPERATION", "domain": "a2a-protocol.org",
                 "metadata": {"taskId": "t-1"}},
                {"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "x"},
            ],
        }
    }  # fmt: skip
    err = decode_status(payload)
    assert type(err) is UnsupportedOperationError
    assert (err.message, err.metadata) == ("Task is terminal", {"taskId": "t-1"})


def test_decode_status_without_a_message_uses_the_default() -> None:
    payload = encode_status(TaskNotFoundError())
    del payload["error"]["message"]
    err = decode_status(payload)
    assert type(err) is TaskNotFoundError and err.message == TaskNotFoundError.default_message


# -- success answers ----------------------------------------------------------------------


def test_json_response() -> None:
    response = json_response({"id": "t"}, [("A2A-Version", "1.0")])
    assert response.status == 200
    assert response.headers == [("Content-Type", A2A_JSON), ("A2A-Version", "1.0")]
    assert _body_of(response) == {"id": "t"}


def test_delete_answers_the_empty_message() -> None:
    assert _body_of(json_response(None)) == {}


# -- SSE ----------------------------------------------------------------------------------

TASK = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.SUBMITTED))
UPDATE = TaskStatusUpdateEvent(
    task_id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.COMPLETED)
)


def _events(chunks: Iterator[bytes]) -> tuple[list[ServerSentEvent], int]:
    """Every event of the stream, and how many chunks were comments only."""
    decoder, comments, events = SSEDecoder(), 0, []
    for chunk in chunks:
        comments += chunk.startswith(b":")
        decoder.receive_data(chunk)
    decoder.receive_data(b"")
    while (event := decoder.next_event()) not in (NEED_DATA, END):
        assert isinstance(event, ServerSentEvent)
        events.append(event)
    return events, comments


def test_sse_events_are_bare_stream_responses() -> None:
    items: list[StreamItem] = [TASK, HEARTBEAT, OutboundEvent(UPDATE, "ev-2")]
    response = sse_response(iter(items), [("A2A-Version", "1.0")])
    assert response.status == 200 and response.is_stream
    assert ("Content-Type", "text/event-stream") in response.headers
    assert ("A2A-Version", "1.0") in response.headers
    assert not isinstance(response.body, bytes)
    events, comments = _events(response.body)
    assert comments == 1
    assert [json.loads(e.data) for e in events] == [
        wire.encode_stream_event(TASK, "1.0"),
        wire.encode_stream_event(UPDATE, "1.0"),
    ]
    assert "task" in json.loads(events[0].data) and "jsonrpc" not in events[0].data
    assert [e.id for e in events] == [None, "ev-2"] and {e.event for e in events} == {None}


def _failing(err: Exception) -> Iterator[StreamItem]:
    yield TASK
    raise err


def test_an_error_mid_stream_is_an_error_event_holding_a_status() -> None:
    events, _ = _events(sse_body(_failing(TaskNotFoundError("gone"))))
    assert [e.event for e in events] == [None, "error"]
    err = decode_status(json.loads(events[1].data))
    assert type(err) is TaskNotFoundError and err.message == "gone"


def test_an_unexpected_error_mid_stream_is_internal_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events, _ = _events(sse_body(_failing(KeyError("secret detail"))))
    assert type(decode_status(json.loads(events[1].data))) is InternalError
    assert "secret detail" not in events[1].data
    assert "unhandled error while streaming" in caplog.text


def test_something_that_is_no_event_ends_the_stream_with_internal_error() -> None:
    events, _ = _events(sse_body(iter([TASK, "not an event"])))  # type: ignore[list-item]
    assert type(decode_status(json.loads(events[-1].data))) is InternalError


def test_closing_the_body_closes_the_producer_even_before_the_first_chunk() -> None:
    closed: list[bool] = []

    def producer() -> Iterator[StreamItem]:
        try:
            yield TASK
        finally:
            closed.append(True)

    items = producer()
    next(items)  # the producer is running
    body = sse_body(items)
    body.close()  # type: ignore[attr-defined]
    assert closed == [True]
