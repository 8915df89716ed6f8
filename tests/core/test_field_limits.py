"""Caps on every identifier, list and free-form member a client sends (docs/serving.md).

Each cap is exercised in both dialects through ``decode_params``: a value
exactly at the cap decodes, one over is -32602 naming the member's path (as
sent, 0.3 or 1.0 spelling) in the message and as the only field violation.
Stored tasks and agents' results are decoded by the same readers and must not
be held to the caps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from a2a_core.errors import InvalidParamsError
from a2a_core.models import DataPart, Task
from a2a_core.optable import Operation
from a2a_core.wire import decode, decode_params, decode_result, encode_error
from a2a_core.wire._common import (
    MAX_AUTH_SCHEMES,
    MAX_EXTENSION_URIS,
    MAX_FILENAME_LENGTH,
    MAX_IDENTIFIER_LENGTH,
    MAX_MEDIA_TYPE_LENGTH,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_OUTPUT_MODES,
    MAX_PAGE_TOKEN_LENGTH,
    MAX_PARTS,
    MAX_REFERENCE_TASK_IDS,
    MAX_SECRET_LENGTH,
    MAX_TASK_ID_LENGTH,
    MAX_URI_LENGTH,
)

VERSIONS = ("0.3", "1.0")
SEND = Operation.SEND_MESSAGE

# -- values of an exact size ---------------------------------------------------------------


def text(n: int) -> str:
    return "x" * n


def uri(n: int) -> str:
    prefix = "https://ext.example/"
    return prefix + "x" * (n - len(prefix))


def ids(n: int) -> list[str]:
    return [f"tsk-{i}" for i in range(n)]


def sized(n: int) -> dict[str, Any]:
    """A metadata object of exactly ``n`` bytes as compact JSON."""
    return {"k": "x" * (n - len('{"k":""}'))}


def nested(n: int) -> dict[str, Any]:
    """A metadata object ``n`` levels deep: {} is one level."""
    value: dict[str, Any] = {}
    for _ in range(n - 1):
        value = {"a": value}
    return value


def encoded_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


# -- request shapes, per dialect -----------------------------------------------------------


def message(version: str, **members: Any) -> dict[str, Any]:
    if version == "0.3":
        base = {"kind": "message", "messageId": "m-1", "role": "user",
                "parts": [{"kind": "text", "text": "hi"}]}
    else:
        base = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    return {**base, **members}


def send(version: str, **members: Any) -> dict[str, Any]:
    return {"message": message(version, **members)}


def with_part(version: str, part: dict[str, Any]) -> dict[str, Any]:
    return send(version, parts=[part])


def file_part(version: str, **file: Any) -> dict[str, Any]:
    """A file part by URL; ``file`` members in 1.0 spelling, moved for 0.3."""
    if version == "0.3":
        spelled = {{"filename": "name", "mediaType": "mimeType"}.get(k, k): v
                   for k, v in file.items()}
        return {"kind": "file", "file": {"uri": "https://files.example/f", **spelled}}
    return {"url": "https://files.example/f", **file}


def push(version: str, **members: Any) -> dict[str, Any]:
    """A webhook; ``schemes`` is 0.3's list, ``scheme`` 1.0's one name."""
    auth = members.pop("auth", None)
    config: dict[str, Any] = {"url": "https://hooks.example/a2a", **members}
    if auth is not None:
        config["authentication"] = auth
    return config


def send_with_push(version: str, **members: Any) -> dict[str, Any]:
    name = "pushNotificationConfig" if version == "0.3" else "taskPushNotificationConfig"
    return {**send(version), "configuration": {name: push(version, **members)}}


def push_path(version: str, member: str) -> str:
    name = "pushNotificationConfig" if version == "0.3" else "taskPushNotificationConfig"
    return f"params.configuration.{name}.{member}"


def create_push(version: str, **members: Any) -> dict[str, Any]:
    if version == "0.3":
        return {"taskId": "tsk-1", "pushNotificationConfig": push(version, **members)}
    return {"taskId": "tsk-1", **push(version, **members)}


def create_push_path(version: str, member: str) -> str:
    return f"params.pushNotificationConfig.{member}" if version == "0.3" else f"params.{member}"


def push_target(version: str, config_id: str) -> dict[str, Any]:
    if version == "0.3":
        return {"id": "tsk-1", "pushNotificationConfigId": config_id}
    return {"taskId": "tsk-1", "id": config_id}


def push_target_path(version: str) -> str:
    return "params.pushNotificationConfigId" if version == "0.3" else "params.id"


# -- the table -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Cap:
    """One cap: the params with the capped member at size ``n``, its path, its rule."""

    label: str
    op: Operation
    limit: int
    params: Callable[[str, int], Any]
    path: Callable[[str], str]
    rule: str

    def at(self, version: str, n: int) -> Any:
        return self.params(version, n)


def _at(path: str) -> Callable[[str], str]:
    return lambda version: path


def chars(limit: int) -> str:
    return f"at most {limit} characters"


def metadata_caps(label: str, op: Operation, build: Callable[[str, Any], Any],
                  path: Callable[[str], str]) -> list[Cap]:
    """Size and depth of one metadata object."""
    return [
        Cap(f"{label} metadata bytes", op, MAX_METADATA_BYTES,
            lambda v, n: build(v, sized(n)), path, f"at most {MAX_METADATA_BYTES} bytes as JSON"),
        Cap(f"{label} metadata depth", op, MAX_METADATA_DEPTH,
            lambda v, n: build(v, nested(n)), path,
            f"at most {MAX_METADATA_DEPTH} levels of nesting"),
    ]


#: Every operation, with params that decode, to send a tenant with.
TENANT_BASES: list[tuple[Operation, Callable[[str], dict[str, Any]]]] = [
    (SEND, send),
    (Operation.SEND_STREAMING_MESSAGE, send),
    (Operation.GET_TASK, lambda v: {"id": "tsk-1"}),
    (Operation.LIST_TASKS, lambda v: {}),
    (Operation.CANCEL_TASK, lambda v: {"id": "tsk-1"}),
    (Operation.SUBSCRIBE_TO_TASK, lambda v: {"id": "tsk-1"}),
    (Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, create_push),
    (Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, lambda v: push_target(v, "cfg")),
    (Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, lambda v: {"taskId": "tsk-1"}),
    (Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, lambda v: push_target(v, "cfg")),
    (Operation.GET_EXTENDED_AGENT_CARD, lambda v: {}),
]


def with_tenant(base: Callable[[str], dict[str, Any]]) -> Callable[[str, int], Any]:
    return lambda version, n: {**base(version), "tenant": text(n)}


CAPS: list[Cap] = [
    Cap("messageId", SEND, MAX_IDENTIFIER_LENGTH, lambda v, n: send(v, messageId=text(n)),
        _at("params.message.messageId"), chars(MAX_IDENTIFIER_LENGTH)),
    Cap("contextId", SEND, MAX_IDENTIFIER_LENGTH, lambda v, n: send(v, contextId=text(n)),
        _at("params.message.contextId"), chars(MAX_IDENTIFIER_LENGTH)),
    Cap("context_id (snake_case)", SEND, MAX_IDENTIFIER_LENGTH,
        lambda v, n: send(v, context_id=text(n)), _at("params.message.context_id"),
        chars(MAX_IDENTIFIER_LENGTH)),
    Cap("contextId streaming", Operation.SEND_STREAMING_MESSAGE, MAX_IDENTIFIER_LENGTH,
        lambda v, n: send(v, contextId=text(n)), _at("params.message.contextId"),
        chars(MAX_IDENTIFIER_LENGTH)),
    Cap("referenceTaskIds count", SEND, MAX_REFERENCE_TASK_IDS,
        lambda v, n: send(v, referenceTaskIds=ids(n)), _at("params.message.referenceTaskIds"),
        f"at most {MAX_REFERENCE_TASK_IDS} ids"),
    Cap("referenceTaskIds entry", SEND, MAX_TASK_ID_LENGTH,
        lambda v, n: send(v, referenceTaskIds=["tsk-0", text(n)]),
        _at("params.message.referenceTaskIds[1]"),
        f"a task id has at most {MAX_TASK_ID_LENGTH} characters"),
    Cap("extensions count", SEND, MAX_EXTENSION_URIS,
        lambda v, n: send(v, extensions=[uri(40)] * n), _at("params.message.extensions"),
        f"at most {MAX_EXTENSION_URIS} URIs"),
    Cap("extension URI", SEND, MAX_URI_LENGTH,
        lambda v, n: send(v, extensions=[uri(40), uri(n)]), _at("params.message.extensions[1]"),
        chars(MAX_URI_LENGTH)),
    *metadata_caps("message", SEND, lambda v, m: send(v, metadata=m),
                   _at("params.message.metadata")),
    *metadata_caps("part", SEND,
                   lambda v, m: with_part(v, {**message(v)["parts"][0], "metadata": m}),
                   _at("params.message.parts[0].metadata")),
    *metadata_caps("params", SEND, lambda v, m: {**send(v), "metadata": m},
                   _at("params.metadata")),
    *metadata_caps("GetTask", Operation.GET_TASK, lambda v, m: {"id": "tsk-1", "metadata": m},
                   _at("params.metadata")),
    *metadata_caps("CancelTask", Operation.CANCEL_TASK,
                   lambda v, m: {"id": "tsk-1", "metadata": m}, _at("params.metadata")),
    *metadata_caps("SubscribeToTask", Operation.SUBSCRIBE_TO_TASK,
                   lambda v, m: {"id": "tsk-1", "metadata": m}, _at("params.metadata")),
    Cap("parts count", SEND, MAX_PARTS,
        lambda v, n: send(v, parts=message(v)["parts"] * n), _at("params.message.parts"),
        f"at most {MAX_PARTS} parts"),
    Cap("file name", SEND, MAX_FILENAME_LENGTH,
        lambda v, n: with_part(v, file_part(v, filename=text(n))),
        lambda v: "params.message.parts[0]." + ("file.name" if v == "0.3" else "filename"),
        chars(MAX_FILENAME_LENGTH)),
    Cap("file media type", SEND, MAX_MEDIA_TYPE_LENGTH,
        lambda v, n: with_part(v, file_part(v, mediaType="a/" + text(n - 2))),
        lambda v: "params.message.parts[0]." + ("file.mimeType" if v == "0.3" else "mediaType"),
        chars(MAX_MEDIA_TYPE_LENGTH)),
    Cap("text part media type", SEND, MAX_MEDIA_TYPE_LENGTH,
        lambda v, n: with_part(v, {**message(v)["parts"][0], "mediaType": text(n)}),
        _at("params.message.parts[0].mediaType"), chars(MAX_MEDIA_TYPE_LENGTH)),
    Cap("data part mimeType", SEND, MAX_MEDIA_TYPE_LENGTH,
        lambda v, n: with_part(v, {"kind": "data", "data": {}, "mimeType": text(n)}),
        _at("params.message.parts[0].mimeType"), chars(MAX_MEDIA_TYPE_LENGTH)),
    Cap("acceptedOutputModes count", SEND, MAX_OUTPUT_MODES,
        lambda v, n: {**send(v), "configuration": {"acceptedOutputModes": ["text/plain"] * n}},
        _at("params.configuration.acceptedOutputModes"), f"at most {MAX_OUTPUT_MODES} media types"),
    Cap("acceptedOutputModes entry", SEND, MAX_MEDIA_TYPE_LENGTH,
        lambda v, n: {**send(v), "configuration": {"acceptedOutputModes": [text(n)]}},
        _at("params.configuration.acceptedOutputModes[0]"), chars(MAX_MEDIA_TYPE_LENGTH)),
    Cap("send push-config id", SEND, MAX_IDENTIFIER_LENGTH,
        lambda v, n: send_with_push(v, id=text(n)), lambda v: push_path(v, "id"),
        chars(MAX_IDENTIFIER_LENGTH)),
    Cap("send push-config url", SEND, MAX_URI_LENGTH,
        lambda v, n: send_with_push(v, url=uri(n)), lambda v: push_path(v, "url"),
        chars(MAX_URI_LENGTH)),
    Cap("send push-config token", SEND, MAX_SECRET_LENGTH,
        lambda v, n: send_with_push(v, token=text(n)), lambda v: push_path(v, "token"),
        chars(MAX_SECRET_LENGTH)),
    Cap("send push-config credentials", SEND, MAX_SECRET_LENGTH,
        lambda v, n: send_with_push(v, auth={"scheme": "Bearer", "credentials": text(n)}),
        lambda v: push_path(v, "authentication.credentials"), chars(MAX_SECRET_LENGTH)),
    Cap("push-config schemes count", SEND, MAX_AUTH_SCHEMES,
        lambda v, n: send_with_push(v, auth={"schemes": ["Bearer"] * n}),
        lambda v: push_path(v, "authentication.schemes"), f"at most {MAX_AUTH_SCHEMES} schemes"),
    Cap("push-config scheme name", SEND, MAX_IDENTIFIER_LENGTH,
        lambda v, n: send_with_push(v, auth={"scheme": text(n)}),
        lambda v: push_path(v, "authentication.scheme"), chars(MAX_IDENTIFIER_LENGTH)),
    Cap("create push-config id", Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        MAX_IDENTIFIER_LENGTH, lambda v, n: create_push(v, id=text(n)),
        lambda v: create_push_path(v, "id"), chars(MAX_IDENTIFIER_LENGTH)),
    Cap("create push-config url", Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        MAX_URI_LENGTH, lambda v, n: create_push(v, url=uri(n)),
        lambda v: create_push_path(v, "url"), chars(MAX_URI_LENGTH)),
    Cap("create push-config token", Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        MAX_SECRET_LENGTH, lambda v, n: create_push(v, token=text(n)),
        lambda v: create_push_path(v, "token"), chars(MAX_SECRET_LENGTH)),
    Cap("get push-config id", Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        MAX_IDENTIFIER_LENGTH, lambda v, n: push_target(v, text(n)), push_target_path,
        chars(MAX_IDENTIFIER_LENGTH)),
    Cap("delete push-config id", Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        MAX_IDENTIFIER_LENGTH, lambda v, n: push_target(v, text(n)), push_target_path,
        chars(MAX_IDENTIFIER_LENGTH)),
    Cap("ListTasks contextId", Operation.LIST_TASKS, MAX_IDENTIFIER_LENGTH,
        lambda v, n: {"contextId": text(n)}, _at("params.contextId"),
        chars(MAX_IDENTIFIER_LENGTH)),
    Cap("ListTasks pageToken", Operation.LIST_TASKS, MAX_PAGE_TOKEN_LENGTH,
        lambda v, n: {"pageToken": text(n)}, _at("params.pageToken"),
        chars(MAX_PAGE_TOKEN_LENGTH)),
    Cap("ListTaskPushNotificationConfigs pageToken",
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, MAX_PAGE_TOKEN_LENGTH,
        lambda v, n: {"taskId": "tsk-1", "pageToken": text(n)}, _at("params.pageToken"),
        chars(MAX_PAGE_TOKEN_LENGTH)),
    *[Cap(f"{op.name} tenant", op, MAX_IDENTIFIER_LENGTH, with_tenant(base),
          _at("params.tenant"), chars(MAX_IDENTIFIER_LENGTH))
      for op, base in TENANT_BASES],
]

CASES = [pytest.param(cap, version, id=f"{cap.label} {version}")
         for cap in CAPS for version in VERSIONS]


@pytest.mark.parametrize(("cap", "version"), CASES)
def test_a_value_at_the_cap_is_accepted(cap: Cap, version: str) -> None:
    decode_params(cap.op, cap.at(version, cap.limit), version)


@pytest.mark.parametrize(("cap", "version"), CASES)
def test_one_over_the_cap_is_refused_naming_the_field(cap: Cap, version: str) -> None:
    path = cap.path(version)
    with pytest.raises(InvalidParamsError) as caught:
        decode_params(cap.op, cap.at(version, cap.limit + 1), version)
    assert caught.value.code == -32602
    assert caught.value.message == f"{path}: {cap.rule}"
    assert caught.value.field_violations == {path: cap.rule}


def test_the_size_builders_are_exact() -> None:
    """The table's values really are at the cap (else 'at the cap' would prove nothing)."""
    assert encoded_size(sized(MAX_METADATA_BYTES)) == MAX_METADATA_BYTES
    assert len(uri(MAX_URI_LENGTH)) == MAX_URI_LENGTH
    depth, value = 1, nested(MAX_METADATA_DEPTH)  # {} is one level
    while value:
        depth, value = depth + 1, value["a"]
    assert depth == MAX_METADATA_DEPTH


def test_metadata_size_counts_utf8_bytes_not_characters() -> None:
    """'é' is one character and two bytes: half the cap in characters is over it in bytes."""
    metadata = {"k": "é" * (MAX_METADATA_BYTES // 2)}
    with pytest.raises(InvalidParamsError) as caught:
        decode_params(SEND, send("1.0", metadata=metadata), "1.0")
    assert list(caught.value.field_violations) == ["params.message.metadata"]


def test_metadata_depth_counts_arrays_too() -> None:
    deep: Any = {}
    for _ in range(MAX_METADATA_DEPTH):
        deep = [deep]
    with pytest.raises(InvalidParamsError) as caught:
        decode_params(SEND, send("1.0", metadata={"a": deep}), "1.0")
    assert list(caught.value.field_violations) == ["params.message.metadata"]


def test_the_part_cap_follows_max_parts() -> None:
    """The Dispatcher's ``max_parts`` option is the cap when it passes one."""
    params = send("1.0", parts=[{"text": "p"}] * 3)
    decode_params(SEND, params, "1.0", max_parts=3)
    with pytest.raises(InvalidParamsError) as caught:
        decode_params(SEND, params, "1.0", max_parts=2)
    assert caught.value.field_violations == {"params.message.parts": "at most 2 parts"}


def test_ten_thousand_parts_are_refused() -> None:
    with pytest.raises(InvalidParamsError) as caught:
        decode_params(SEND, send("0.3", parts=[{"kind": "text", "text": "p"}] * 10_001), "0.3")
    assert list(caught.value.field_violations) == ["params.message.parts"]


def test_a_violation_is_a_bad_request_field_in_1_0() -> None:
    with pytest.raises(InvalidParamsError) as caught:
        decode_params(SEND, send("1.0", contextId=text(100_000)), "1.0")
    error = encode_error(caught.value, "1.0")
    assert error["code"] == -32602
    assert error["message"] == "params.message.contextId: at most 256 characters"
    (bad_request,) = [d for d in error["data"] if d["@type"].endswith("BadRequest")]
    assert bad_request["fieldViolations"] == [
        {"field": "params.message.contextId", "description": "at most 256 characters"}
    ]
    assert "x" * 65 not in json.dumps(error)  # the value is never echoed


# -- 0.3 DataPart.data is an object; 1.0's is any JSON value -------------------------------


@pytest.mark.parametrize("data", [[1, 2], "text", 3, True, None], ids=repr)
def test_0_3_data_part_must_hold_an_object(data: Any) -> None:
    for part in ({"kind": "data", "data": data}, {"data": data}):
        with pytest.raises(InvalidParamsError) as caught:
            decode_params(SEND, with_part("0.3", part), "0.3")
        path = "params.message.parts[0].data"
        assert caught.value.message.startswith(f"{path}: a 0.3 data part holds an object")
        assert list(caught.value.field_violations) == [path]


@pytest.mark.parametrize("data", [[1, 2], "text", 3, True, None, {"k": [1]}], ids=repr)
def test_1_0_data_part_holds_any_json_value(data: Any) -> None:
    request = decode_params(SEND, with_part("1.0", {"data": data}), "1.0")
    assert request.message.parts == (DataPart(data=data),)


def test_0_3_objects_and_the_compat_wrapping_are_accepted() -> None:
    plain = decode_params(SEND, with_part("0.3", {"kind": "data", "data": {"k": 1}}), "0.3")
    assert plain.message.parts == (DataPart(data={"k": 1}),)
    wrapped = {"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": True}}
    compat = decode_params(SEND, with_part("0.3", wrapped), "0.3")
    assert compat.message.parts == (DataPart(data=[1, 2]),)


# -- what is not held to the caps ------------------------------------------------------------

BIG_TASK = {
    "id": "projects/p/tasks/1",
    "contextId": text(1000),
    "status": {"state": "TASK_STATE_COMPLETED"},
    "metadata": sized(MAX_METADATA_BYTES * 2),
    "artifacts": [{"artifactId": text(1000), "name": text(5000),
                   "parts": [{"text": "t", "metadata": nested(40)}] * (MAX_PARTS + 1),
                   "extensions": [uri(MAX_URI_LENGTH + 1)] * (MAX_EXTENSION_URIS + 1)}],
    "history": [{**message("1.0", messageId=text(1000), referenceTaskIds=ids(100),
                           metadata=nested(40)), "role": "ROLE_AGENT"}],
}


def test_results_and_stored_tasks_are_not_held_to_the_caps() -> None:
    """Agents write what they write; a client must read it and a store must load it."""
    assert decode_result(Operation.GET_TASK, BIG_TASK, "1.0").context_id == text(1000)
    stored = decode(Task, BIG_TASK)
    assert len(stored.artifacts[0].parts) == MAX_PARTS + 1
    assert len(stored.history[0].reference_task_ids) == 100
