"""Every encoder output validates against the official schema of its version.

0.3: the draft-07 schema, by definition name. 1.0: the TCK bundle plus the
proto's REQUIRED fields and oneof exclusivity (see ``schema_oracle``). Objects
come from the "any" strategies of ``test_wire``: everything either dialect can
say, so the lossy corners are exercised too. JSON-RPC envelopes are checked
where the 0.3 schema defines them (requests, success responses, errors); the
1.0 bundle has no envelope or error definitions, so 1.0 errors are checked
against a small local schema of ``google.rpc.ErrorInfo`` / ``BadRequest``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, ValidationError
from schema_oracle import validate
from test_wire import (
    ERRORS,
    MODEL_TYPES,
    RESULTS,
    models_for,
    requests_for,
    stream_events,
    wire_json,
)

from a2a_core import errors
from a2a_core.models import (
    Artifact,
    AuthenticationInfo,
    CancelTaskRequest,
    DataPart,
    DeleteTaskPushNotificationConfigRequest,
    FilePart,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    PushNotificationConfig,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_core.optable import OPERATIONS, Operation
from a2a_core.wire import encode, encode_error, encode_params, encode_result

#: model -> (0.3 definition, 1.0 definition); None where that version has none.
DEFINITIONS: dict[type, tuple[str | None, str]] = {
    TextPart: ("TextPart", "Part"),
    FilePart: ("FilePart", "Part"),
    DataPart: ("DataPart", "Part"),
    Message: ("Message", "Message"),
    Artifact: ("Artifact", "Artifact"),
    TaskStatus: ("TaskStatus", "Task Status"),
    Task: ("Task", "Task"),
    TaskStatusUpdateEvent: ("TaskStatusUpdateEvent", "Task Status Update Event"),
    TaskArtifactUpdateEvent: ("TaskArtifactUpdateEvent", "Task Artifact Update Event"),
    AuthenticationInfo: ("PushNotificationAuthenticationInfo", "Authentication Info"),
    # 1.0 has no separate webhook type: it is the flat config without taskId.
    PushNotificationConfig: ("PushNotificationConfig", "Task Push Notification Config"),
    TaskPushNotificationConfig: ("TaskPushNotificationConfig", "Task Push Notification Config"),
    SendMessageConfiguration: ("MessageSendConfiguration", "Send Message Configuration"),
    SendMessageRequest: ("MessageSendParams", "Send Message Request"),
    GetTaskRequest: ("TaskQueryParams", "Get Task Request"),
    CancelTaskRequest: ("TaskIdParams", "Cancel Task Request"),
    SubscribeToTaskRequest: ("TaskIdParams", "Subscribe To Task Request"),
    ListTasksRequest: (None, "List Tasks Request"),  # not a 0.3 JSON-RPC method
    ListTasksResponse: (None, "List Tasks Response"),
    GetTaskPushNotificationConfigRequest: (
        "GetTaskPushNotificationConfigParams",
        "Get Task Push Notification Config Request",
    ),
    DeleteTaskPushNotificationConfigRequest: (
        "DeleteTaskPushNotificationConfigParams",
        "Delete Task Push Notification Config Request",
    ),
    ListTaskPushNotificationConfigsRequest: (
        "ListTaskPushNotificationConfigParams",
        "List Task Push Notification Configs Request",
    ),
    # 0.3 answers a bare array: checked through its success response below.
    ListTaskPushNotificationConfigsResponse: (None, "List Task Push Notification Configs Response"),
    GetExtendedAgentCardRequest: (None, "Get Extended Agent Card Request"),
}

REQUESTS_0_3 = {
    Operation.SEND_MESSAGE: "SendMessageRequest",
    Operation.SEND_STREAMING_MESSAGE: "SendStreamingMessageRequest",
    Operation.GET_TASK: "GetTaskRequest",
    Operation.CANCEL_TASK: "CancelTaskRequest",
    Operation.SUBSCRIBE_TO_TASK: "TaskResubscriptionRequest",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "SetTaskPushNotificationConfigRequest",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "GetTaskPushNotificationConfigRequest",
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "ListTaskPushNotificationConfigRequest",
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: "DeleteTaskPushNotificationConfigRequest",
    Operation.GET_EXTENDED_AGENT_CARD: "GetAuthenticatedExtendedCardRequest",
}
_OP = Operation
RESULTS_0_3 = {
    Operation.SEND_MESSAGE: "SendMessageSuccessResponse",
    Operation.GET_TASK: "GetTaskSuccessResponse",
    Operation.CANCEL_TASK: "CancelTaskSuccessResponse",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "SetTaskPushNotificationConfigSuccessResponse",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "GetTaskPushNotificationConfigSuccessResponse",
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "ListTaskPushNotificationConfigSuccessResponse",
    _OP.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: "DeleteTaskPushNotificationConfigSuccessResponse",
}
RESULTS_1_0 = {
    Operation.SEND_MESSAGE: "Send Message Response",
    Operation.GET_TASK: "Task",
    Operation.CANCEL_TASK: "Task",
    Operation.LIST_TASKS: "List Tasks Response",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "Task Push Notification Config",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "Task Push Notification Config",
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "List Task Push Notification Configs Response",
}


def test_every_model_has_a_definition() -> None:
    assert set(DEFINITIONS) == set(MODEL_TYPES)


@pytest.mark.parametrize("version", ["0.3", "1.0"])
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_models_validate(version: str, data: st.DataObject) -> None:
    objects = data.draw(st.fixed_dictionaries(models_for("any")))
    for cls, obj in objects.items():
        name = DEFINITIONS[cls][0 if version == "0.3" else 1]
        if name is not None:
            validate(name, wire_json(encode(obj, version)), version)


@settings(max_examples=20, deadline=None)
@given(event=stream_events("any"))
def test_stream_events_validate(event: Any) -> None:
    for op in (Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK):
        envelope = {"jsonrpc": "2.0", "id": 1, "result": encode_result(op, event, "0.3")}
        validate("SendStreamingMessageSuccessResponse", wire_json(envelope), "0.3")
        validate("Stream Response", wire_json(encode_result(op, event, "1.0")), "1.0")


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_params_validate(data: st.DataObject) -> None:
    requests = data.draw(st.fixed_dictionaries(requests_for("any")))
    for op, cls in ((op, op.request) for op in OPERATIONS):
        request = requests[cls]
        if op in REQUESTS_0_3:
            params = encode_params(op, request, "0.3")
            envelope = {"jsonrpc": "2.0", "id": "r1", "method": op.method_0_3, "params": params}
            validate(REQUESTS_0_3[op], wire_json(envelope), "0.3")
        name_1_0 = "Task Push Notification Config" if cls is TaskPushNotificationConfig else None
        validate(
            name_1_0 or DEFINITIONS[cls][1], wire_json(encode_params(op, request, "1.0")), "1.0"
        )


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_results_validate(data: st.DataObject) -> None:
    results = data.draw(st.fixed_dictionaries({op: f("any") for op, f in RESULTS.items()}))
    for op, result in results.items():
        if op in RESULTS_0_3:
            envelope = {"jsonrpc": "2.0", "id": 7, "result": encode_result(op, result, "0.3")}
            validate(RESULTS_0_3[op], wire_json(envelope), "0.3")
        encoded = wire_json(encode_result(op, result, "1.0"))
        if op in RESULTS_1_0:
            validate(RESULTS_1_0[op], encoded, "1.0")
        else:
            assert encoded is None  # Empty on the proto; null like the SDK and the kit expect


_ERROR_0_3 = {
    -32700: "JSONParseError",
    -32007: "AuthenticatedExtendedCardNotConfiguredError",
}

#: google.rpc.ErrorInfo / BadRequest as ProtoJSON Any (local: the 1.0 bundle has none).
_ERROR_1_0 = {
    "type": "object",
    "required": ["code", "message", "data"],
    "properties": {
        "code": {"type": "integer"},
        "message": {"type": "string"},
        "data": {
            "type": "array",
            "minItems": 1,
            "prefixItems": [{"$ref": "#/$defs/ErrorInfo"}],
            "items": {"anyOf": [{"$ref": "#/$defs/ErrorInfo"}, {"$ref": "#/$defs/BadRequest"}]},
        },
    },
    "$defs": {
        "ErrorInfo": {
            "type": "object",
            "required": ["@type", "reason", "domain", "metadata"],
            "properties": {
                "@type": {"const": "type.googleapis.com/google.rpc.ErrorInfo"},
                "reason": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]+[A-Z0-9]$"},
                "domain": {"const": "a2a-protocol.org"},
                "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "BadRequest": {
            "type": "object",
            "required": ["@type", "fieldViolations"],
            "properties": {
                "@type": {"const": "type.googleapis.com/google.rpc.BadRequest"},
                "fieldViolations": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["field", "description"],
                        "properties": {
                            "field": {"type": "string"},
                            "description": {"type": "string"},
                        },
                    },
                },
            },
        },
    },
}


@pytest.mark.parametrize("error", ERRORS, ids=repr)
def test_errors_validate(error: errors.RPCError) -> None:
    envelope = {"jsonrpc": "2.0", "id": None, "error": encode_error(error, "0.3")}
    validate("JSONRPCErrorResponse", wire_json(envelope), "0.3")
    specific = _ERROR_0_3.get(error.code, type(error).__name__)
    if specific in ("RPCError", "ExtensionSupportRequiredError", "VersionNotSupportedError",
                    "TaskGenerationMismatchError"):  # the last: a dev-1.1 preview code
        specific = "JSONRPCError"  # no 0.3 definition for these codes
    validate(specific, wire_json(envelope["error"]), "0.3")
    Draft202012Validator(_ERROR_1_0).validate(wire_json(encode_error(error, "1.0")))


# -- the oracle itself must be able to fail ----------------------------------------------

BAD = [
    ("Task", {"id": "t", "contextId": "c", "status": {"state": "working"}}, "0.3"),  # no kind
    ("Message", {"kind": "message", "messageId": "m", "role": "ROLE_USER", "parts": []}, "0.3"),
    ("DataPart", {"kind": "data", "data": [1]}, "0.3"),
    ("Task", {"id": "t"}, "1.0"),  # REQUIRED status
    ("Task", {"id": "t", "status": {"state": "working"}}, "1.0"),  # 0.3 spelling
    ("Part", {"text": "a", "url": "u"}, "1.0"),  # oneof
    ("Part", {"filename": "x"}, "1.0"),  # oneof: none
    ("Part", {"raw": "-_8"}, "1.0"),  # URL-safe base64 is not what 1.0 emits
    ("Task Status", {"state": "TASK_STATE_WORKING", "timestamp": "2025-01-01T00:00:00"}, "1.0"),
    ("Stream Response", {"task": {"id": "t", "status": {"state": 1}}, "message": {}}, "1.0"),
    ("Message", {"messageId": "m", "role": "ROLE_USER", "parts": [], "kind": "message"}, "1.0"),
]


@pytest.mark.parametrize(("name", "value", "version"), BAD)
def test_oracle_rejects(name: str, value: Any, version: str) -> None:
    with pytest.raises(ValidationError):
        validate(name, value, version)


def test_oracle_accepts_spaced_and_unspaced_names() -> None:
    value = {"state": "TASK_STATE_WORKING", "timestamp": "2025-01-01T00:00:00.000Z"}
    validate("Task Status", value, "1.0")
    validate("TaskStatus", value, "1.0")
    with pytest.raises(KeyError):
        validate("Nope", value, "1.0")
