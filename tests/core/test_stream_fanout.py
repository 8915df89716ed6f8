"""One event, many subscribers: encoded once per version, the same bytes as before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from a2a_core import _streaming as streaming
from a2a_core import wire
from a2a_core._jsonrpc import response_dict
from a2a_core._rest import sse_body as rest_sse_body
from a2a_core._service import HEARTBEAT, OutboundEvent, StreamItem
from a2a_core._sse import encode_comment, encode_data_event, encode_event
from a2a_core.models import TaskState, TaskStatus, TaskStatusUpdateEvent


def _event(state: TaskState = TaskState.WORKING, text: str = "still working") -> Any:
    return TaskStatusUpdateEvent(task_id="t-1", context_id="c-1",
                                 status=TaskStatus(state=state), metadata={"note": text})


def _old_frame(request_id: Any, version: str, item: StreamItem) -> bytes:
    """What streaming._frames wrote for one item before events were encoded once."""
    if item is HEARTBEAT:
        return encode_comment("ping")
    event: Any = item
    event_id = None
    if isinstance(item, OutboundEvent):
        event, event_id = item.event, item.event_id
    state = event.status.state if isinstance(event, TaskStatusUpdateEvent) else None
    if version == "0.3" and state is not None and (state.is_terminal or state.is_interrupted):
        event = replace(event, final=True)
    result = wire.encode_stream_event(event, version)
    return encode_event(streaming.dumps(response_dict(request_id, result)), id=event_id)


def _body(request_id: Any, version: str, items: list[StreamItem]) -> list[bytes]:
    return list(streaming.sse_body(request_id, version, iter(items)))


@pytest.mark.parametrize("version", ["0.3", "1.0"])
@pytest.mark.parametrize("request_id", [1, "req-é\u2028", None, 2**40])
def test_the_bytes_are_those_of_encoding_each_event_alone(version: str, request_id: Any) -> None:
    items: list[StreamItem] = [OutboundEvent(_event(), "7"), HEARTBEAT,
                               OutboundEvent(_event(text="ünï\ncode\r\u2028"), ""),
                               OutboundEvent(_event(TaskState.COMPLETED), "9"), _event()]
    expected = [_old_frame(request_id, version, item) for item in items]
    assert _body(request_id, version, items) == expected
    assert _body(request_id, version, items) == expected  # from the memo now


def test_one_event_is_encoded_once_per_version_for_many_subscribers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = wire.encode_stream_event

    def counting(event: Any, version: str) -> Any:
        calls.append(version)
        return real(event, version)

    monkeypatch.setattr(wire, "encode_stream_event", counting)
    event = _event()
    for subscriber in range(100):
        for version in ("0.3", "1.0"):
            frames = _body(subscriber, version, [OutboundEvent(event, "3")])
            data = json.loads(frames[0].decode().split("data: ", 1)[1])
            assert data["id"] == subscriber
    assert sorted(calls) == ["0.3", "1.0"]


def test_an_equal_event_that_is_another_object_is_encoded_again() -> None:
    first, second = _event(text="a"), _event(text="b")
    assert _body(1, "1.0", [first]) != _body(1, "1.0", [second])


def test_the_memo_is_bounded_and_skips_large_events() -> None:
    for index in range(streaming._MEMO_SIZE * 3):
        _body(1, "1.0", [_event(text=str(index))])
    assert len(streaming._memo) <= streaming._MEMO_SIZE
    big = _event(text="x" * (streaming._MEMO_MAX_BYTES + 1))
    frames = _body(1, "1.0", [big])
    assert frames == [_old_frame(1, "1.0", big)]
    assert all(entry[0] is not big for entry in streaming._memo.values())


def test_a_bad_item_still_ends_the_stream_with_an_error_event() -> None:
    frames = _body(1, "1.0", [OutboundEvent(_event(), "1"), "not an event"])  # type: ignore[list-item]
    assert len(frames) == 2 and b'"error"' in frames[1]


def test_rest_frames_are_unchanged_and_shared() -> None:
    event = _event()

    def old(item: StreamItem) -> bytes:
        assert isinstance(item, OutboundEvent)
        return encode_event(streaming.dumps(wire.encode_stream_event(item.event, "1.0")),
                            id=item.event_id)

    items: list[StreamItem] = [OutboundEvent(event, "4"), OutboundEvent(event, "5")]
    stream: Iterator[bytes] = rest_sse_body(iter(items))
    assert list(stream) == [old(item) for item in items]


@pytest.mark.parametrize("data", [b'{"a":1}', b"", b"two\nlines", b"cr\rhere", "é".encode()])
@pytest.mark.parametrize("event_id", [None, "", "12"])
def test_encode_data_event_is_encode_event(data: bytes, event_id: str | None) -> None:
    assert encode_data_event(data, id=event_id) == encode_event(data.decode(), id=event_id)


def test_encode_data_event_refuses_a_forged_id() -> None:
    with pytest.raises(ValueError):
        encode_data_event(b"{}", id="1\ndata: x")
