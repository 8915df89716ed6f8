"""The codec's fast ProtoJSON path (a2a_core/_grpc/_fromjson.py) makes what ParseDict makes.

Each value is what our 1.0 codecs write for a result or stream event (every part kind,
metadata, timestamps, empty and repeated fields), plus hand-made JSON the fast path must
hand over (bytes, maps, nulls, 64-bit integers, strings for numbers, unknown keys, wrong
types). For each, the message the codec builds equals ``json_format.ParseDict``'s, or both
refuse it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from google.protobuf import json_format

from a2a_core._grpc import message_class
from a2a_core._grpc._fromjson import GiveUp, parse
from a2a_core._grpc.codec import _parsed
from a2a_core._grpc.proto import pool
from a2a_core._versioning import V1_0
from a2a_core.errors import InternalError
from a2a_core.models import (
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    DataPart,
    FilePart,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_core.optable import Operation
from a2a_core.wire import encode_result, encode_stream_event

AT = datetime(2026, 12, 5, 13, 51, 44, 632000, tzinfo=timezone.utc)


def _message(text: str, role: Role = Role.AGENT, **extra: Any) -> Message:
    return Message(role=role, parts=[TextPart(text=text)], message_id=f"m-{text}",
                   context_id="ctx-1", task_id="tsk-1", **extra)


def _task() -> Task:
    parts = [TextPart(text="t", metadata={"k": [1, "two", None, {"x": True}]}),
             DataPart(data={"a": 1, "b": [1.5, None], "c": {"d": "e"}}),
             FilePart(url="https://example.com/f.pdf", filename="f.pdf",
                      media_type="application/pdf")]
    return Task(id="tsk-1", context_id="ctx-1",
                status=TaskStatus(state=TaskState.COMPLETED, message=_message("done"),
                                  timestamp=AT),
                artifacts=[Artifact(artifact_id="art-1", parts=parts, name="n",
                                    metadata={"m": 1}),
                           Artifact(artifact_id="art-2", parts=[TextPart(text="")])],
                history=[_message("hi", Role.USER, metadata={"a": 1}), _message("done")],
                metadata={"trace": "x", "n": 3})


def _events() -> list[dict[str, Any]]:
    events = [
        _task(),
        TaskStatusUpdateEvent(task_id="tsk-1", context_id="ctx-1",
                              status=TaskStatus(state=TaskState.WORKING, timestamp=AT)),
        TaskArtifactUpdateEvent(task_id="tsk-1", context_id="ctx-1", append=True,
                                last_chunk=False,
                                artifact=Artifact(artifact_id="a", parts=[TextPart(text="c")])),
        _message("direct"),
    ]
    return [encode_stream_event(event, V1_0) for event in events]


def _same(cls: type[Any], value: Any) -> None:
    try:
        expected = json_format.ParseDict(value, cls(), descriptor_pool=pool())
    except json_format.ParseError:
        with pytest.raises(InternalError):
            _parsed(cls, value, InternalError)
        return
    assert _parsed(cls, value, InternalError) == expected


@pytest.mark.parametrize("index", range(4))
def test_stream_events_and_their_task(index: int) -> None:
    event = _events()[index]
    _same(message_class("lf.a2a.v1.StreamResponse"), event)
    (kind, inner), = event.items()
    name = {"task": "Task", "statusUpdate": "TaskStatusUpdateEvent",
            "artifactUpdate": "TaskArtifactUpdateEvent", "message": "Message"}[kind]
    _same(message_class(f"lf.a2a.v1.{name}"), inner)


def test_the_common_shapes_take_the_fast_path() -> None:
    for event in _events():
        cls = message_class("lf.a2a.v1.StreamResponse")
        assert parse(event, cls()) == json_format.ParseDict(event, cls(), descriptor_pool=pool())


TASK = "lf.a2a.v1.Task"
HANDED_OVER = [
    ("lf.a2a.v1.Part", {"raw": "aGVsbG8="}),                      # bytes: base64
    ("lf.a2a.v1.Part", {"text": "a", "url": "https://x/"}),       # two of a oneof: refused
    ("lf.a2a.v1.Part", {"data": None}),                           # a Value's null
    ("lf.a2a.v1.Part", {"data": [1, "x", None, {"k": []}]}),      # a Value, not an object
    ("lf.a2a.v1.Part", {"data": "s", "metadata": {}}),
    ("lf.a2a.v1.Part", {"text": None}),                           # null: unset
    (TASK, {"id": "t", "status": {"state": 3}}),                  # an enum by number
    (TASK, {"id": "t", "status": {"timestamp": "2026-12-05T14:51:44+01:00"}}),
    (TASK, {"id": "t", "status": {"timestamp": "2026-12-05T13:51:44.123456789Z"}}),
    (TASK, {"id": "t", "status": {"timestamp": "2026-12-05T13:51:44.1Z"}}),
    (TASK, {"id": "t", "status": {"timestamp": "2026-12-05T13:51:44+00:00"}}),
    (TASK, {"id": "t", "status": {"timestamp": "2026-12-05"}}),
    ("lf.a2a.v1.ListTasksRequest", {"pageSize": "5"}),            # a number as a string
    ("lf.a2a.v1.ListTasksRequest", {"pageSize": 5.0}),
    ("lf.a2a.v1.ListTasksRequest", {"page_size": 5}),             # the proto's spelling
    ("lf.a2a.v1.ListTasksRequest", {"pageSize": 2 ** 40}),        # out of range
    ("lf.a2a.v1.AgentCard", {"name": "n", "securitySchemes": {"k": {}}}),  # a map
    (TASK, {"id": "t", "unknown": 1}),                            # refused by both
    (TASK, {"id": 5}),                                            # refused by both
    (TASK, {"id": "t", "status": {"state": "NOT_A_STATE"}}),      # refused by both
    (TASK, {"id": "t", "history": {}}),                           # refused by both
    (TASK, {"id": "t", "metadata": {"k": float("nan")}}),
    (TASK, {"id": "t", "status": {}}),                            # an empty message, set
    (TASK, ["not", "an", "object"]),
]


@pytest.mark.parametrize(("name", "value"), HANDED_OVER)
def test_what_the_fast_path_hands_over(name: str, value: Any) -> None:
    _same(message_class(name), value)


def test_a_value_the_fast_path_cannot_make_gives_up() -> None:
    with pytest.raises(GiveUp):
        parse({"raw": "aGVsbG8="}, message_class("lf.a2a.v1.Part")())


def test_an_agent_card() -> None:
    card = AgentCard(name="n", description="d", version="1", supported_interfaces=[
        AgentInterface(url="127.0.0.1:9000", protocol_binding="GRPC", protocol_version="1.0")],
        skills=[AgentSkill(id="s", name="S", description="d", tags=["t"])])
    value = encode_result(Operation.GET_EXTENDED_AGENT_CARD, card, V1_0)
    _same(message_class("lf.a2a.v1.AgentCard"), value)
