"""Wire codecs: round trips, cross-version decoding, bad input, spec examples, errors.

The strategies below build arbitrary models. ``version`` restricts them where a
dialect is lossy, which is the documented loss, stated once here:

- 0.3 has no ``media_type`` on text/data parts, no ``tenant`` anywhere, no paging
  on a push-config list request (its result is a bare array, so no
  ``next_page_token`` either).
- 1.0 has no ``final`` on status updates, one authentication ``scheme`` (not a
  list), no ``metadata`` on GetTask/SubscribeToTask requests, and a
  push-config Get must name the config.
- 0.3 wraps non-object ``DataPart.data`` as ``{"value": x}`` flagged in
  metadata; unwrapping gives ``metadata=None`` where it was ``{}``.
- Both: ``data_part_compat`` is a reserved metadata key on data parts; empty
  optional strings read back as unset (proto3); timestamps keep milliseconds.
"""

from __future__ import annotations

import base64
import functools
import json
import string
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core import errors
from a2a_core.errors import InvalidAgentResponseError, InvalidParamsError, RPCError
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
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_core.optable import OPERATIONS, Operation
from a2a_core.wire import (
    decode,
    decode_error,
    decode_params,
    decode_result,
    decode_stream_event,
    encode,
    encode_error,
    encode_params,
    encode_result,
    encode_stream_event,
)
from a2a_core.wire._common import check_task_id

VERSIONS = ("0.3", "1.0")

# -- strategies --------------------------------------------------------------------------
# ``v`` is "0.3" or "1.0" (lossless in that dialect), "both" (lossless in both),
# or "any" (everything either dialect can say: for schema checks, not round trips).


def lossless_in(v: str, version: str) -> bool:
    return v in (version, "both")


# Ids a server could issue (decode_params refuses task ids starting with "." or holding "..").
ids = st.text(string.ascii_letters + string.digits + "-_.", min_size=1, max_size=10).filter(
    lambda s: not s.startswith(".") and ".." not in s
)
opt_ids = st.none() | ids
texts = st.text(max_size=6)
opt_texts = st.none() | st.text(min_size=1, max_size=12)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    json_scalars,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(texts, kids, max_size=3),
    max_leaves=4,
)
metadata = st.none() | st.dictionaries(
    texts.filter(lambda k: k != "data_part_compat"), json_values, max_size=3
)
media_types = st.none() | st.sampled_from(["text/plain", "application/json", "image/png"])
moments = st.datetimes(
    min_value=datetime(1970, 1, 1),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=5, minutes=30))]),
).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
id_lists = st.lists(ids, max_size=2)


def none_unless(flag: bool, strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return strategy if flag else st.none()


@functools.cache
def text_parts(v: str) -> st.SearchStrategy[TextPart]:
    rich = not lossless_in(v, "0.3")  # 0.3 text parts have no media type
    return st.builds(
        TextPart, text=texts, media_type=none_unless(rich, media_types), metadata=metadata
    )


@functools.cache
def file_parts(v: str) -> st.SearchStrategy[FilePart]:
    return st.builds(
        FilePart,
        raw=st.binary(max_size=16),
        url=st.none(),
        filename=opt_texts,
        media_type=media_types,
        metadata=metadata,
    ) | st.builds(
        FilePart,
        url=st.just("https://example.com/").map(str) | ids.map(lambda s: f"https://x.test/{s}"),
        filename=opt_texts,
        media_type=media_types,
        metadata=metadata,
    )


@functools.cache
def data_parts(v: str) -> st.SearchStrategy[DataPart]:
    rich = not lossless_in(v, "0.3")  # 0.3 data parts have no media type
    # 0.3 wraps non-object data and flags it in metadata; unwrapping cannot tell {} from None.
    meta = metadata if rich else metadata.filter(lambda m: m != {})
    return st.builds(
        DataPart, data=json_values, media_type=none_unless(rich, media_types), metadata=meta
    )


@functools.cache
def parts(v: str) -> st.SearchStrategy[Any]:
    return text_parts(v) | file_parts(v) | data_parts(v)


@functools.cache
def messages(v: str) -> st.SearchStrategy[Message]:
    return st.builds(
        Message,
        message_id=ids,
        role=st.sampled_from(Role),
        parts=st.lists(parts(v), min_size=1, max_size=2),
        context_id=opt_ids,
        task_id=opt_ids,
        reference_task_ids=id_lists,
        extensions=id_lists,
        metadata=metadata,
    )


@functools.cache
def artifacts(v: str) -> st.SearchStrategy[Artifact]:
    return st.builds(
        Artifact,
        artifact_id=ids,
        parts=st.lists(parts(v), min_size=1, max_size=2),
        name=opt_texts,
        description=opt_texts,
        extensions=id_lists,
        metadata=metadata,
    )


@functools.cache
def statuses(v: str) -> st.SearchStrategy[TaskStatus]:
    return st.builds(
        TaskStatus,
        state=st.sampled_from(TaskState),
        message=st.none() | messages(v),
        timestamp=st.none() | moments,
    )


@functools.cache
def tasks(v: str) -> st.SearchStrategy[Task]:
    return st.builds(
        Task,
        id=ids,
        context_id=ids,
        status=statuses(v),
        artifacts=st.lists(artifacts(v), max_size=1),
        history=st.lists(messages(v), max_size=1),
        metadata=metadata,
    )


@functools.cache
def status_updates(v: str) -> st.SearchStrategy[TaskStatusUpdateEvent]:
    return st.builds(
        TaskStatusUpdateEvent,
        task_id=ids,
        context_id=ids,
        status=statuses(v),
        final=st.just(False) if lossless_in(v, "1.0") else st.booleans(),
        metadata=metadata,
    )


@functools.cache
def artifact_updates(v: str) -> st.SearchStrategy[TaskArtifactUpdateEvent]:
    return st.builds(
        TaskArtifactUpdateEvent,
        task_id=ids,
        context_id=ids,
        artifact=artifacts(v),
        append=st.booleans(),
        last_chunk=st.booleans(),
        metadata=metadata,
    )


@functools.cache
def stream_events(v: str) -> st.SearchStrategy[Any]:
    return tasks(v) | messages(v) | status_updates(v) | artifact_updates(v)


@functools.cache
def authentications(v: str) -> st.SearchStrategy[AuthenticationInfo]:
    one = lossless_in(v, "1.0")
    schemes = st.lists(ids, min_size=1, max_size=1) if one else st.lists(ids, max_size=3)
    return st.builds(AuthenticationInfo, schemes=schemes, credentials=opt_texts)


@functools.cache
def push_configs(v: str) -> st.SearchStrategy[PushNotificationConfig]:
    return st.builds(
        PushNotificationConfig,
        url=ids.map(lambda s: f"https://hooks.test/{s}"),
        id=opt_ids,
        token=opt_texts,
        authentication=st.none() | authentications(v),
    )


@functools.cache
def no_tenant(v: str) -> st.SearchStrategy[Any]:
    return none_unless(not lossless_in(v, "0.3"), opt_ids)


@functools.cache
def task_push_configs(v: str) -> st.SearchStrategy[TaskPushNotificationConfig]:
    return st.builds(
        TaskPushNotificationConfig,
        task_id=ids,
        push_notification_config=push_configs(v),
        tenant=no_tenant(v),
    )


@functools.cache
def send_configurations(v: str) -> st.SearchStrategy[SendMessageConfiguration]:
    return st.builds(
        SendMessageConfiguration,
        accepted_output_modes=st.lists(st.sampled_from(["text/plain", "application/json"])),
        history_length=st.none() | st.integers(0, 50),
        push_notification_config=st.none() | push_configs(v),
        blocking=st.booleans(),
    )


@functools.cache
def requests_for(v: str) -> dict[type, st.SearchStrategy[Any]]:
    """One strategy per request/response model."""
    meta_1_0 = none_unless(not lossless_in(v, "1.0"), metadata)
    paging = not lossless_in(v, "0.3")
    return {
        SendMessageRequest: st.builds(
            SendMessageRequest,
            message=messages(v),
            configuration=st.none() | send_configurations(v),
            metadata=metadata,
            tenant=no_tenant(v),
        ),
        GetTaskRequest: st.builds(
            GetTaskRequest,
            id=ids,
            history_length=st.none() | st.integers(0, 9),
            metadata=meta_1_0,
            tenant=no_tenant(v),
        ),
        CancelTaskRequest: st.builds(
            CancelTaskRequest, id=ids, metadata=metadata, tenant=no_tenant(v)
        ),
        SubscribeToTaskRequest: st.builds(
            SubscribeToTaskRequest, id=ids, metadata=meta_1_0, tenant=no_tenant(v)
        ),
        ListTasksRequest: st.builds(
            ListTasksRequest,
            context_id=opt_ids,
            status=st.none()
            | st.sampled_from([s for s in TaskState if s is not TaskState.UNKNOWN]),
            page_size=st.none() | st.integers(1, 100),
            page_token=opt_ids,
            history_length=st.none() | st.integers(0, 9),
            status_timestamp_after=st.none() | moments,
            include_artifacts=st.booleans(),
            tenant=no_tenant(v),
        ),
        ListTasksResponse: st.builds(
            ListTasksResponse,
            tasks=st.lists(tasks(v), max_size=1),
            next_page_token=st.just("") | ids,
            page_size=st.integers(0, 100),
            total_size=st.integers(0, 10_000),
        ),
        TaskPushNotificationConfig: task_push_configs(v),
        GetTaskPushNotificationConfigRequest: st.builds(
            GetTaskPushNotificationConfigRequest,
            task_id=ids,
            config_id=opt_ids if v == "0.3" else ids,  # 1.0 REQUIRES the config id
            tenant=no_tenant(v),
        ),
        DeleteTaskPushNotificationConfigRequest: st.builds(
            DeleteTaskPushNotificationConfigRequest,
            task_id=ids,
            config_id=ids,
            tenant=no_tenant(v),
        ),
        ListTaskPushNotificationConfigsRequest: st.builds(
            ListTaskPushNotificationConfigsRequest,
            task_id=ids,
            page_size=none_unless(paging, st.integers(1, 100)),
            page_token=none_unless(paging, opt_ids),
            tenant=no_tenant(v),
        ),
        ListTaskPushNotificationConfigsResponse: st.builds(
            ListTaskPushNotificationConfigsResponse,
            configs=st.lists(task_push_configs(v), max_size=3),
            next_page_token=st.just("") | (ids if paging else st.just("")),
        ),
        GetExtendedAgentCardRequest: st.builds(GetExtendedAgentCardRequest, tenant=no_tenant(v)),
    }


@functools.cache
def models_for(v: str) -> dict[type, st.SearchStrategy[Any]]:
    """Every model type the codecs encode (except the AgentCard), to its strategy."""
    return {
        TextPart: text_parts(v),
        FilePart: file_parts(v),
        DataPart: data_parts(v),
        Message: messages(v),
        Artifact: artifacts(v),
        TaskStatus: statuses(v),
        Task: tasks(v),
        TaskStatusUpdateEvent: status_updates(v),
        TaskArtifactUpdateEvent: artifact_updates(v),
        AuthenticationInfo: authentications(v),
        PushNotificationConfig: push_configs(v),
        SendMessageConfiguration: send_configurations(v),
        **requests_for(v),
    }


MODEL_TYPES = list(models_for("both"))


def wire_json(value: Any) -> Any:
    """What actually crosses the network: the output must be plain JSON."""
    return json.loads(json.dumps(value, allow_nan=False))


# -- (2) round trips ---------------------------------------------------------------------
# One example holds one object of EVERY type, so each run covers all of them
# (and pays Hypothesis' per-test overhead once, which keeps the suite fast).


@functools.cache
def one_of_each(v: str) -> st.SearchStrategy[dict[type, Any]]:
    return st.fixed_dictionaries(models_for(v))


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_round_trip(version: str, data: st.DataObject) -> None:
    for cls, obj in data.draw(one_of_each(version)).items():
        assert decode(cls, wire_json(encode(obj, version))) == obj, cls.__name__


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_stream_event_round_trip(version: str, data: st.DataObject) -> None:
    event = data.draw(stream_events(version))
    encoded = wire_json(encode_stream_event(event, version))
    assert decode_stream_event(encoded) == event
    for op in (Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK):
        assert decode_result(op, wire_json(encode_result(op, event, version)), version) == event


REQUEST_TYPES = {op: op.request for op in OPERATIONS}


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_params_round_trip(version: str, data: st.DataObject) -> None:
    requests = data.draw(st.fixed_dictionaries(requests_for(version)))
    for op, cls in REQUEST_TYPES.items():
        params = wire_json(encode_params(op, requests[cls], version))
        assert decode_params(op, params, version) == requests[cls], op.name


RESULTS: dict[Operation, Any] = {
    Operation.SEND_MESSAGE: lambda v: tasks(v) | messages(v),
    Operation.GET_TASK: tasks,
    Operation.CANCEL_TASK: tasks,
    Operation.LIST_TASKS: lambda v: requests_for(v)[ListTasksResponse],
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: task_push_configs,
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: task_push_configs,
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: lambda v: requests_for(v)[
        ListTaskPushNotificationConfigsResponse
    ],
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: lambda v: st.none(),
}


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_result_round_trip(version: str, data: st.DataObject) -> None:
    results = data.draw(st.fixed_dictionaries({op: f(version) for op, f in RESULTS.items()}))
    for op, result in results.items():
        encoded = wire_json(encode_result(op, result, version))
        assert decode_result(op, encoded, version) == result, op.name


# -- (3) cross-version -------------------------------------------------------------------


@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_cross_version(data: st.DataObject) -> None:
    """0.3 wire -> model -> 1.0 wire equals the direct 1.0 encoding (and back)."""
    for cls, obj in data.draw(one_of_each("both")).items():
        via_0_3 = decode(cls, wire_json(encode(obj, "0.3")))
        assert encode(via_0_3, "1.0") == encode(obj, "1.0"), cls.__name__
        via_1_0 = decode(cls, wire_json(encode(obj, "1.0")))
        assert encode(via_1_0, "0.3") == encode(obj, "0.3"), cls.__name__


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_cross_version_stream_events(data: st.DataObject) -> None:
    event = data.draw(stream_events("both"))
    via_0_3 = decode_stream_event(wire_json(encode_stream_event(event, "0.3")))
    assert encode_stream_event(via_0_3, "1.0") == encode_stream_event(event, "1.0")


def test_documented_losses() -> None:
    """What each dialect drops, pinned so a change is deliberate."""
    text = TextPart(text="x", media_type="text/markdown")
    assert decode(TextPart, encode(text, "0.3")) == TextPart(text="x")
    assert decode(TextPart, encode(text, "1.0")) == text
    event = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED), final=True
    )
    assert decode(TaskStatusUpdateEvent, encode(event, "1.0")) == replace(event, final=False)
    auth = AuthenticationInfo(schemes=["Bearer", "Basic"], credentials="s")
    assert encode(auth, "1.0") == {"scheme": "Bearer", "credentials": "s"}
    assert decode(AuthenticationInfo, encode(auth, "0.3")) == auth
    config = TaskPushNotificationConfig(
        task_id="t", push_notification_config=PushNotificationConfig(url="https://h/"), tenant="x"
    )
    assert "tenant" not in json.dumps(encode(config, "0.3"))
    assert encode(GetTaskRequest(id="t", metadata={"a": 1}), "1.0") == {"id": "t"}


# -- encoding rules ----------------------------------------------------------------------


def test_empty_sequences_are_omitted_but_required_ones_kept() -> None:
    task = Task(id="t", context_id="", status=TaskStatus(state=TaskState.WORKING))
    for version in VERSIONS:
        encoded = encode(task, version)
        assert "artifacts" not in encoded and "history" not in encoded
        assert encoded["contextId"] == ""
    response = ListTasksResponse(tasks=[task])
    assert encode(response, "1.0") == {
        "tasks": [encode(task, "1.0")],
        "nextPageToken": "",
        "pageSize": 0,
        "totalSize": 0,
    }
    assert encode(AuthenticationInfo(schemes=[]), "0.3") == {"schemes": []}


def test_timestamps_are_utc_z_milliseconds() -> None:
    moment = datetime(2025, 4, 2, 18, 59, 25, 331844, tzinfo=timezone(timedelta(hours=2)))
    status = TaskStatus(state=TaskState.WORKING, timestamp=moment)
    for version in VERSIONS:
        assert encode(status, version)["timestamp"] == "2025-04-02T16:59:25.331Z"
    naive = TaskStatus(state=TaskState.WORKING, timestamp=datetime(2025, 1, 1))
    assert encode(naive, "1.0")["timestamp"] == "2025-01-01T00:00:00.000Z"


def test_bytes_are_standard_base64_with_padding() -> None:
    part = FilePart(raw=b"\xfb\xff\xfe")
    assert encode(part, "1.0") == {"raw": "+//+"}
    assert encode(FilePart(raw=b"a"), "0.3")["file"] == {"bytes": "YQ=="}


def test_enum_spellings() -> None:
    status = TaskStatus(state=TaskState.INPUT_REQUIRED)
    assert encode(status, "0.3") == {"state": "input-required"}
    assert encode(status, "1.0") == {"state": "TASK_STATE_INPUT_REQUIRED"}
    assert encode(TaskStatus(state=TaskState.UNKNOWN), "1.0") == {"state": "TASK_STATE_UNSPECIFIED"}
    msg = Message(message_id="m", role=Role.AGENT, parts=[TextPart(text="a")])
    assert encode(msg, "0.3")["role"] == "agent" and encode(msg, "0.3")["kind"] == "message"
    assert encode(msg, "1.0")["role"] == "ROLE_AGENT" and "kind" not in encode(msg, "1.0")


def test_data_part_compat_wrapping() -> None:
    part = DataPart(data=[1, 2], metadata={"k": "v"})
    encoded = encode(part, "0.3")
    assert encoded == {
        "kind": "data",
        "data": {"value": [1, 2]},
        "metadata": {"k": "v", "data_part_compat": True},
    }
    assert decode(DataPart, encoded) == part
    assert encode(DataPart(data={"a": 1}), "0.3") == {"kind": "data", "data": {"a": 1}}


def test_send_configuration_blocking_flag() -> None:
    config = SendMessageConfiguration(blocking=False)
    assert encode(config, "0.3") == {"blocking": False}
    assert encode(config, "1.0") == {"returnImmediately": True}
    assert encode(SendMessageConfiguration(), "1.0") == {}
    assert decode(SendMessageConfiguration, {}).blocking is True
    assert decode(SendMessageConfiguration, {"returnImmediately": True}).blocking is False
    assert decode(SendMessageConfiguration, {"return_immediately": False}).blocking is True


def test_versions_are_checked() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    for call in (
        lambda: encode(task, "0.2"),
        lambda: encode_stream_event(task, "2.0"),
        lambda: encode_error(errors.InternalError(), "1"),
        lambda: decode_params(Operation.GET_TASK, {"id": "t"}, "1.0.1"),
    ):
        with pytest.raises(ValueError):
            call()


def test_misuse_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        encode(object(), "1.0")
    with pytest.raises(TypeError):
        decode(dict, {})
    with pytest.raises(TypeError):
        encode_params(Operation.GET_TASK, CancelTaskRequest(id="t"), "1.0")
    with pytest.raises(TypeError):
        encode_result(
            Operation.GET_TASK,
            Message(message_id="m", role=Role.USER, parts=[TextPart(text="a")]),
            "1.0",
        )


# -- tolerant decoding -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "state"),
    [
        ("completed", TaskState.COMPLETED),
        ("TASK_STATE_COMPLETED", TaskState.COMPLETED),
        (3, TaskState.COMPLETED),
        ("input-required", TaskState.INPUT_REQUIRED),
        ("input_required", TaskState.INPUT_REQUIRED),
        ("TASK_STATE_AUTH_REQUIRED", TaskState.AUTH_REQUIRED),
        ("TASK_STATE_CANCELLED", TaskState.CANCELED),
        ("canceled", TaskState.CANCELED),
        ("unknown", TaskState.UNKNOWN),
        ("TASK_STATE_UNSPECIFIED", TaskState.UNKNOWN),
        ("TASK_STATE_PAUSED", TaskState.UNKNOWN),
        (42, TaskState.UNKNOWN),
    ],
)
def test_state_spellings(spelling: Any, state: TaskState) -> None:
    assert decode(TaskStatus, {"state": spelling}).state is state


@pytest.mark.parametrize(
    ("spelling", "role"),
    [
        ("user", Role.USER),
        ("ROLE_USER", Role.USER),
        (1, Role.USER),
        ("agent", Role.AGENT),
        (2, Role.AGENT),
    ],
)
def test_role_spellings(spelling: Any, role: Role) -> None:
    message = decode(Message, {"messageId": "m", "role": spelling, "parts": [{"text": "a"}]})
    assert message.role is role


def test_snake_case_member_names() -> None:
    data = {
        "message_id": "m",
        "role": "ROLE_USER",
        "context_id": "c",
        "reference_task_ids": ["t0"],
        "parts": [{"raw": "YQ", "media_type": "text/plain"}],
    }
    message = decode(Message, data)
    assert message.context_id == "c" and message.reference_task_ids == ("t0",)
    assert message.parts == (FilePart(raw=b"a", media_type="text/plain"),)


def test_unknown_fields_are_ignored() -> None:
    task = decode(
        Task,
        {"id": "t", "contextId": "c", "status": {"state": "working", "x": 1}, "createdAt": "?"},
    )
    assert task == Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))


def test_base64_input_is_lenient() -> None:
    raw = b"\xfb\xff\xfe\xfa"  # standard "+//++g==", URL-safe "-__--g"
    standard = base64.b64encode(raw).decode()
    assert "+" in standard and "/" in standard and standard.endswith("==")
    for text in (
        standard,
        standard.rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    ):
        assert decode(FilePart, {"raw": text}).raw == raw
        assert decode(FilePart, {"kind": "file", "file": {"bytes": text}}).raw == raw


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-04-02T16:59:25.331844", datetime(2025, 4, 2, 16, 59, 25, 331844, timezone.utc)),
        ("2023-10-27T10:00:00Z", datetime(2023, 10, 27, 10, tzinfo=timezone.utc)),
        ("2023-10-27T10:00:00.123456789Z", datetime(2023, 10, 27, 10, 0, 0, 123456, timezone.utc)),
        ("2023-10-27T12:30:00+02:30", datetime(2023, 10, 27, 10, tzinfo=timezone.utc)),
        ("2023-10-27T10:00:00.5z", datetime(2023, 10, 27, 10, 0, 0, 500000, timezone.utc)),
        # offsets without the colon, or without minutes, and a decimal comma: read on
        # every Python (3.10's fromisoformat alone refuses them)
        ("2023-10-27T12:30:00+0230", datetime(2023, 10, 27, 10, tzinfo=timezone.utc)),
        ("2023-10-27T05:00:00-05", datetime(2023, 10, 27, 10, tzinfo=timezone.utc)),
        ("2023-10-27T10:00:00,25Z", datetime(2023, 10, 27, 10, 0, 0, 250000, timezone.utc)),
        ("2023-10-27T10Z", datetime(2023, 10, 27, 10, tzinfo=timezone.utc)),
        ("2023-10-27", datetime(2023, 10, 27, tzinfo=timezone.utc)),
    ],
)
def test_timestamps_are_read_leniently(text: str, expected: datetime) -> None:
    timestamp = decode(TaskStatus, {"state": "working", "timestamp": text}).timestamp
    assert timestamp == expected and timestamp.tzinfo is timezone.utc


@pytest.mark.parametrize("text", [
    "20231027T100000Z",  # ISO 8601's basic format and week dates: 3.11's fromisoformat
    "2023-W43-5T10:00:00Z",  # reads them, 3.10's does not; refused on every Python
    "2023-13-27T10:00:00Z", "2023-10-27T25:00:00Z", "2023-10-27T10:00:00+2", "yesterday", "",
])
def test_timestamps_outside_iso_8601_extended_are_refused(text: str) -> None:
    with pytest.raises(InvalidParamsError, match="not an ISO 8601 timestamp"):
        decode(TaskStatus, {"state": "working", "timestamp": text})


def test_stream_event_shapes() -> None:
    status = {"state": "TASK_STATE_WORKING"}
    update = {"taskId": "t", "contextId": "c", "status": status}
    expected = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING)
    )
    assert decode_stream_event({"statusUpdate": update}) == expected
    assert decode_stream_event({"status_update": update}) == expected
    assert decode_stream_event({**update, "kind": "status-update"}) == expected
    assert decode_stream_event(update) == expected  # no kind: inferred
    task = decode_stream_event({"id": "t", "status": status})
    assert isinstance(task, Task) and task.context_id == ""


def test_send_result_bare_or_wrapped() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED))
    for version in VERSIONS:
        for shape in (encode(task, "0.3"), encode(task, "1.0"), {"task": encode(task, "1.0")}):
            assert decode_result(Operation.SEND_MESSAGE, shape, version) == task
    for empty in (None, {}):
        assert decode_result(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, empty, "1.0") is None
    assert encode_result(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, None, "0.3") is None
    assert encode_result(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, None, "1.0") is None


def test_push_config_params_in_either_shape() -> None:
    op = Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG
    nested = {
        "taskId": "t",
        "pushNotificationConfig": {
            "id": "p",
            "url": "https://h/",
            "authentication": {"schemes": ["Bearer"], "credentials": "s"},
        },
    }
    flat = {
        "taskId": "t",
        "id": "p",
        "url": "https://h/",
        "authentication": {"scheme": "Bearer", "credentials": "s"},
    }
    for version in VERSIONS:
        assert decode_params(op, nested, version) == decode_params(op, flat, version)
    assert decode_params(op, flat, "0.3").push_notification_config.authentication == (
        AuthenticationInfo(schemes=["Bearer"], credentials="s")
    )


@pytest.mark.parametrize(
    ("params", "version", "task_id", "config_id"),
    [
        ({"id": "T", "pushNotificationConfigId": "C"}, "0.3", "T", "C"),
        ({"id": "T", "pushNotificationConfigId": "C"}, "1.0", "T", "C"),  # 0.3 shape under 1.0
        ({"taskId": "T", "id": "C"}, "1.0", "T", "C"),
        ({"taskId": "T", "id": "C"}, "0.3", "T", "C"),  # 1.0 shape under 0.3
        ({"id": "T"}, "0.3", "T", None),  # 0.3: a lone id is the TASK
    ],
)
def test_get_push_config_id_meaning(
    params: dict[str, Any], version: str, task_id: str, config_id: str | None
) -> None:
    request = decode_params(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, params, version)
    assert (request.task_id, request.config_id) == (task_id, config_id)


def test_list_push_configs_result_shapes() -> None:
    config = TaskPushNotificationConfig(
        task_id="t", push_notification_config=PushNotificationConfig(url="https://h/", id="p")
    )
    response = ListTaskPushNotificationConfigsResponse(configs=[config])
    op = Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS
    bare = encode_result(op, response, "0.3")
    assert bare == [{"taskId": "t", "pushNotificationConfig": {"url": "https://h/", "id": "p"}}]
    wrapped = encode_result(op, response, "1.0")
    assert wrapped == {
        "configs": [{"taskId": "t", "id": "p", "url": "https://h/"}],
        "nextPageToken": "",
    }
    assert decode_result(op, bare, "1.0") == decode_result(op, wrapped, "0.3") == response


def test_extended_card_params_may_be_absent() -> None:
    op = Operation.GET_EXTENDED_AGENT_CARD
    assert decode_params(op, None, "0.3") == GetExtendedAgentCardRequest()
    assert decode_params(op, {"tenant": "x"}, "1.0") == GetExtendedAgentCardRequest(tenant="x")
    assert encode_params(op, GetExtendedAgentCardRequest(tenant="x"), "0.3") == {}


def test_list_tasks_params() -> None:
    params = {
        "status": "input-required",
        "pageSize": "20",
        "statusTimestampAfter": "2025-01-01T00:00:00",
        "includeArtifacts": True,
    }
    request = decode_params(Operation.LIST_TASKS, params, "1.0")
    assert request == ListTasksRequest(
        status=TaskState.INPUT_REQUIRED,
        page_size=20,
        status_timestamp_after=datetime(2025, 1, 1, tzinfo=timezone.utc),
        include_artifacts=True,
    )
    assert (
        decode_params(Operation.LIST_TASKS, {"status": "TASK_STATE_UNSPECIFIED"}, "1.0").status
        is None
    )


# -- (4) bad inputs ----------------------------------------------------------------------

MSG = {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}

BAD_PARAMS: list[tuple[Operation, Any, str, str]] = [
    # (operation, params, version, path named in the error)
    (Operation.SEND_MESSAGE, {}, "1.0", "params.message"),
    (Operation.SEND_MESSAGE, {"message": "hi"}, "0.3", "params.message"),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "messageId": None}},
        "0.3",
        "params.message.messageId",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "messageId": ""}},
        "1.0",
        "params.message.messageId",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "messageId": 7}},
        "1.0",
        "params.message.messageId",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {k: v for k, v in MSG.items() if k != "role"}},
        "0.3",
        "params.message.role",
    ),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "role": "robot"}}, "1.0", "params.message.role"),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "role": "ROLE_UNSPECIFIED"}},
        "1.0",
        "params.message.role",
    ),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "parts": []}}, "0.3", "params.message.parts"),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "parts": {"text": "a"}}},
        "1.0",
        "params.message.parts",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "parts": ["hi"]}},
        "1.0",
        "params.message.parts[0]",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "parts": [{"kind": "video"}]}},
        "0.3",
        "params.message.parts[0].kind",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "parts": [{"metadata": {}}]}},
        "1.0",
        "params.message.parts[0]",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "parts": [{"text": "a", "url": "u"}]}},
        "1.0",
        "params.message.parts[0]",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "parts": [{"text": 1}]}},
        "1.0",
        "params.message.parts[0].text",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "parts": [{"kind": "file", "file": {}}]}},
        "0.3",
        "params.message.parts[0].file",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "parts": [{"raw": "***"}]}},
        "1.0",
        "params.message.parts[0].raw",
    ),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "kind": "task"}}, "0.3", "params.message.kind"),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "metadata": []}},
        "0.3",
        "params.message.metadata",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {**MSG, "extensions": [1]}},
        "0.3",
        "params.message.extensions[0]",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": MSG, "configuration": {"historyLength": -1}},
        "0.3",
        "params.configuration.historyLength",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": MSG, "configuration": {"historyLength": True}},
        "1.0",
        "params.configuration.historyLength",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": MSG, "configuration": {"historyLength": 1.5}},
        "1.0",
        "params.configuration.historyLength",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": MSG, "configuration": {"blocking": "yes"}},
        "0.3",
        "params.configuration.blocking",
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": MSG, "configuration": {"pushNotificationConfig": {}}},
        "0.3",
        "params.configuration.pushNotificationConfig.url",
    ),
    (Operation.SEND_MESSAGE, [MSG], "1.0", "params"),
    (Operation.GET_TASK, {}, "1.0", "params.id"),
    (Operation.GET_TASK, {"id": 5}, "0.3", "params.id"),
    (Operation.GET_TASK, {"id": "t", "historyLength": -3}, "1.0", "params.historyLength"),
    (Operation.GET_TASK, {"id": "t", "history_length": False}, "1.0", "params.history_length"),
    (Operation.GET_TASK, None, "1.0", "params"),
    (Operation.CANCEL_TASK, {"id": ""}, "0.3", "params.id"),
    (Operation.SUBSCRIBE_TO_TASK, {"taskId": "t"}, "1.0", "params.id"),
    (Operation.LIST_TASKS, {"pageSize": 0}, "1.0", "params.pageSize"),
    (Operation.LIST_TASKS, {"pageSize": 101}, "1.0", "params.pageSize"),
    (Operation.LIST_TASKS, {"pageSize": "ten"}, "1.0", "params.pageSize"),
    (Operation.LIST_TASKS, {"status": "TASK_STATE_DONE"}, "1.0", "params.status"),
    (Operation.LIST_TASKS, {"status": 99}, "1.0", "params.status"),
    (
        Operation.LIST_TASKS,
        {"statusTimestampAfter": "yesterday"},
        "1.0",
        "params.statusTimestampAfter",
    ),
    (Operation.LIST_TASKS, {"historyLength": -1}, "1.0", "params.historyLength"),
    (Operation.LIST_TASKS, {"includeArtifacts": "true"}, "1.0", "params.includeArtifacts"),
    (Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, {"url": "https://h/"}, "1.0", "params.taskId"),
    (
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        {"taskId": "t", "pushNotificationConfig": {}},
        "0.3",
        "params.pushNotificationConfig.url",
    ),
    (
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        {"taskId": "t", "url": "u", "authentication": {}},
        "1.0",
        "params.authentication.scheme",
    ),
    (
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        {"taskId": "t", "url": "u", "authentication": {"schemes": "Bearer"}},
        "0.3",
        "params.authentication.schemes",
    ),
    (Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, {"id": "C"}, "1.0", "params.taskId"),
    (Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, {}, "0.3", "params.id"),
    (
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        {"id": "T"},
        "0.3",
        "params.pushNotificationConfigId",
    ),
    (Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, {"taskId": "T"}, "1.0", "params.id"),
    (Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, {}, "1.0", "params.id"),
    (Operation.GET_EXTENDED_AGENT_CARD, "x", "1.0", "params"),
    # Task ids a server never issues (hostile-input corpus row 22) and the historyLength cap.
    (Operation.GET_TASK, {"id": "a/b"}, "1.0", "params.id"),
    (Operation.CANCEL_TASK, {"id": ".."}, "1.0", "params.id"),
    (Operation.SUBSCRIBE_TO_TASK, {"id": "t" * 129}, "1.0", "params.id"),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "taskId": "t\x00"}}, "1.0",
     "params.message.taskId"),
    (Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, {"taskId": "a b", "url": "https://h/"},
     "1.0", "params.taskId"),
    (Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, {"id": "a\nb"}, "0.3", "params.id"),
    (Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, {"task_id": "a\\b", "id": "c"}, "1.0",
     "params.task_id"),
    (Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, {"taskId": ".x", "id": "c"}, "1.0",
     "params.taskId"),
    (Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, {"id": "é"}, "0.3", "params.id"),
    (Operation.GET_TASK, {"id": "t", "historyLength": 2**31}, "1.0", "params.historyLength"),
    (Operation.LIST_TASKS, {"historyLength": 10**12}, "1.0", "params.historyLength"),
    (Operation.SEND_MESSAGE,
     {"message": MSG, "configuration": {"historyLength": "2147483648"}}, "1.0",
     "params.configuration.historyLength"),
]


@pytest.mark.parametrize(("op", "params", "version", "path"), BAD_PARAMS)
def test_bad_params_name_the_path(op: Operation, params: Any, version: str, path: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        decode_params(op, params, version)
    assert caught.value.code == -32602
    assert list(caught.value.field_violations) == [path]
    assert caught.value.message.startswith(f"{path}: ")


def test_bad_result_is_the_agents_fault() -> None:
    with pytest.raises(InvalidAgentResponseError) as caught:
        decode_result(Operation.GET_TASK, {"id": "t", "status": {}}, "1.0")
    assert list(caught.value.field_violations) == ["result.status.state"]
    with pytest.raises(InvalidAgentResponseError):
        decode_result(
            Operation.SEND_MESSAGE,
            {"taskId": "t", "contextId": "c", "status": {"state": "working"}},
            "0.3",
        )
    with pytest.raises(InvalidAgentResponseError):
        decode_result(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, {"ok": True}, "1.0")
    with pytest.raises(InvalidParamsError):
        decode_stream_event({"task": {"id": "t"}, "message": MSG})


@pytest.mark.parametrize(
    "task_id",
    ["tsk-0123456789abcdef0123456789abcdef", "0b1e6f3c-6a8e-4b5c-9d2e-1f3a5b7c9d0e",
     "01ARZ3NDEKTSV4RRFFQ69G5FAV", "urn:uuid:0b1e6f3c", "a.b_c~d:e@f+g=h-1", "t" * 128, "x"],
)
def test_task_ids_servers_issue_pass(task_id: str) -> None:
    assert check_task_id(task_id, "params.id") == task_id
    request = decode_params(Operation.GET_TASK, {"id": task_id, "historyLength": 1000}, "1.0")
    assert request == GetTaskRequest(id=task_id, history_length=1000)


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=1, max_size=140))
def test_task_id_check_is_exactly_its_rule(text: str) -> None:
    """Accepted ids are short, path-, header- and log-safe; the rest is -32602 naming the path."""
    safe = (
        len(text) <= 128
        and set(text) <= set(string.ascii_letters + string.digits + "._~:@+=-")
        and not text.startswith(".")
        and ".." not in text
    )
    try:
        check_task_id(text, "params.id")
    except InvalidParamsError as exc:
        assert not safe
        assert list(exc.field_violations) == ["params.id"]
        assert len(exc.message) < 120  # the bad id is not echoed back
    else:
        assert safe


def test_results_from_peers_are_not_held_to_the_task_id_format() -> None:
    """Other servers may issue ids we would not; the client must still read them."""
    task = {"id": "projects/p/tasks/t 1", "contextId": "c", "status": {"state": "working"}}
    assert decode_result(Operation.GET_TASK, task, "0.3").id == "projects/p/tasks/t 1"


def test_echoed_values_are_bounded_and_never_python_reprs() -> None:
    for role, shown in [("x" * 10_000, "'" + "x" * 64 + "'…"), ({"a": [1]}, "object"),
                        ([], "array")]:
        with pytest.raises(InvalidParamsError) as caught:
            decode_params(Operation.SEND_MESSAGE, {"message": {**MSG, "role": role}}, "1.0")
        assert caught.value.message.endswith(f"got {shown}")


@settings(max_examples=60, deadline=None)
@given(value=json_values)
def test_decoding_any_json_only_succeeds_or_raises_invalid_params(value: Any) -> None:
    """The h11 fuzz rule: garbage in gives InvalidParamsError, never another exception."""
    for op in OPERATIONS:
        try:
            decode_params(op, value, "1.0")
        except InvalidParamsError:
            pass
    try:
        decode_stream_event(value)
    except InvalidParamsError:
        pass


# -- (5) examples from the specifications ------------------------------------------------


def test_reference_0_3_request_message_without_kind() -> None:
    """The 0.3 specification's request examples omit ``kind`` on Message (and parts may too)."""
    params = {
        "message": {
            "role": "user",
            "parts": [{"kind": "text", "text": "tell me a joke"}, {"text": "no kind here"}],
            "messageId": "9229e770-767c-417b-a0b0-f0741243c589",
        },
        "metadata": {},
    }
    request = decode_params(Operation.SEND_MESSAGE, params, "0.3")
    assert request.message.text == "tell me a joke\nno kind here"
    assert request.metadata == {}


def test_reference_0_3_timestamp_without_z() -> None:
    """A 0.3 example's timestamp without offset, ``2025-04-02T16:59:25.331844``, is UTC;
    it is re-emitted with Z."""
    task = decode(
        Task,
        {
            "kind": "task",
            "id": "t",
            "contextId": "c",
            "status": {"state": "completed", "timestamp": "2025-04-02T16:59:25.331844"},
        },
    )
    assert encode(task, "1.0")["status"]["timestamp"] == "2025-04-02T16:59:25.331Z"


def test_reference_part_table() -> None:
    """The same three parts in both dialects."""
    zero_three = [
        {"kind": "text", "text": "hi"},
        {
            "kind": "file",
            "file": {"uri": "https://x/f.pdf", "name": "f.pdf", "mimeType": "application/pdf"},
        },
        {"kind": "data", "data": {"a": 1}},
    ]
    one_zero = [
        {"text": "hi"},
        {"url": "https://x/f.pdf", "filename": "f.pdf", "mediaType": "application/pdf"},
        {"data": {"a": 1}},
    ]
    decoded = [decode_stream_event({"messageId": "m", "role": "user", "parts": zero_three})]
    assert decoded[0] == decode(Message, {"messageId": "m", "role": "ROLE_USER", "parts": one_zero})
    assert [encode(p, "0.3") for p in decoded[0].parts] == zero_three
    assert [encode(p, "1.0") for p in decoded[0].parts] == one_zero


def test_reference_send_configuration_0_3_and_1_0() -> None:
    """0.3 blocking / 1.0 returnImmediately; nested / flat push config."""
    zero_three = {
        "blocking": False,
        "pushNotificationConfig": {"url": "https://h/", "token": "tok"},
    }
    one_zero = {
        "returnImmediately": True,
        "taskPushNotificationConfig": {"url": "https://h/", "token": "tok"},
    }
    assert decode(SendMessageConfiguration, zero_three) == decode(
        SendMessageConfiguration, one_zero
    )
    config = decode(SendMessageConfiguration, zero_three)
    assert encode(config, "0.3") == zero_three
    assert encode(config, "1.0") == one_zero


# -- errors ------------------------------------------------------------------------------

ERRORS: list[RPCError] = [
    *(cls() for cls in errors.ERROR_CLASSES.values()),
    errors.TaskNotFoundError(data={"taskId": "123"}),
    errors.InternalError("boom", data="traceback hidden"),
    errors.InvalidParamsError(
        "params.message.parts: must hold at least one element",
        field_violations={"params.message.parts": "must hold at least one element"},
    ),
    errors.VersionNotSupportedError(metadata={"version": "9.9"}),
    RPCError("custom", code=-32042, data=[1, 2]),
]


@pytest.mark.parametrize("error", ERRORS, ids=repr)
def test_error_round_trip(error: RPCError) -> None:
    for version in VERSIONS:
        decoded = decode_error(wire_json(encode_error(error, version)))
        assert decoded == error and type(decoded) is type(error)
    decoded = decode_error(wire_json(encode_error(error, "1.0")))
    assert decoded.metadata == error.metadata
    assert decoded.field_violations == error.field_violations


def test_error_shapes() -> None:
    error = errors.TaskNotFoundError(data={"taskId": "123"})
    assert encode_error(error, "0.3") == {
        "code": -32001,
        "message": "Task not found",
        "data": {"taskId": "123"},
    }
    assert encode_error(errors.TaskNotFoundError(), "0.3") == {
        "code": -32001,
        "message": "Task not found",
    }
    (info,) = encode_error(error, "1.0")["data"]
    assert info == {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "TASK_NOT_FOUND",
        "domain": "a2a-protocol.org",
        "metadata": {"data": '{"taskId": "123"}'},
    }
    assert encode_error(errors.ParseError(), "1.0")["data"][0]["reason"] == "PARSE_ERROR"
    bad = errors.InvalidParamsError("x", field_violations={"params.id": "required"})
    assert encode_error(bad, "1.0")["data"][1] == {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [{"field": "params.id", "description": "required"}],
    }


def test_decode_error_from_peers() -> None:
    """Other implementations: SDK plain-string data, foreign details, malformed objects."""
    plain = decode_error({"code": -32602, "message": "Invalid params", "data": "missing id"})
    assert isinstance(plain, errors.InvalidParamsError) and plain.data == "missing id"
    foreign = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": "t1"},
        },
        {"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "x"},
    ]
    decoded = decode_error({"code": -32001, "message": "gone", "data": foreign})
    assert isinstance(decoded, errors.TaskNotFoundError)
    assert decoded.metadata == {"taskId": "t1"} and decoded.data == [foreign[1]]
    unknown = decode_error({"code": -32050, "message": "new"})
    assert type(unknown) is RPCError and unknown.code == -32050
    for malformed in ("x", {"message": "no code"}, {"code": True}, None):
        assert isinstance(decode_error(malformed), InvalidAgentResponseError)
    bad_request = "type.googleapis.com/google.rpc.BadRequest"
    for violations in (5, "x", {"field": "f"}, None):
        odd = decode_error({"code": -32602, "message": "bad",
                            "data": [{"@type": bad_request, "fieldViolations": violations}]})
        assert isinstance(odd, errors.InvalidParamsError) and odd.field_violations == {}


# -- the Agent Card is delegated ---------------------------------------------------------


def test_agent_card_is_delegated_to_the_card_codec() -> None:
    card_codec = pytest.importorskip("a2a_core.wire._card")
    from a2a_core.models import AgentCard, AgentInterface

    card = AgentCard(
        name="Echo",
        description="echoes",
        supported_interfaces=[AgentInterface(url="https://h/a2a", protocol_version="0.3")],
    )
    op = Operation.GET_EXTENDED_AGENT_CARD
    for version in VERSIONS:
        encoded = encode(card, version)
        assert encoded == card_codec.encode_card(card, version)
        assert encode_result(op, card, version) == encoded
        assert decode(AgentCard, wire_json(encoded)) == card_codec.decode_card(encoded)
        assert decode_result(op, wire_json(encoded), version) == decode(AgentCard, encoded)
