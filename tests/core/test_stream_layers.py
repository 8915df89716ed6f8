"""The stream's per-event layers: what each one still does once made lighter."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial

import pytest

from a2a_core._generations import GENERATIONS_EXTENSION_URI, hidden_items, without_generations
from a2a_core._observe import CallRecord
from a2a_core._operations import Events
from a2a_core._service import HEARTBEAT, IDLE, CallContext, OutboundEvent, StreamItem
from a2a_core._sse import HOLD_BYTES
from a2a_core.errors import TaskNotFoundError
from a2a_core.models import Artifact, Message, Role, TaskArtifactUpdateEvent, TextPart


def _update(generation: int | None) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(task_id="t", context_id="c", generation=generation,
                                   artifact=Artifact(artifact_id="a", parts=[TextPart(text="x")]))


def _items() -> list[StreamItem]:
    message = Message(message_id="m", role=Role.AGENT, parts=[TextPart(text="hi")])
    return [_update(3), OutboundEvent(_update(4), "e1"), _update(None),
            OutboundEvent(_update(None), "e2"), message, HEARTBEAT]


def test_items_are_stripped_as_without_generations_strips_them() -> None:
    items = _items()
    got = list(hidden_items(iter(items), CallContext(version="1.0")))
    assert got == [without_generations(item) for item in items]
    assert got[1] == OutboundEvent(_update(None), "e1")
    assert got[2] is items[2] and got[3] is items[3] and got[4] is items[4]


def test_a_negotiated_stream_is_not_wrapped() -> None:
    items = iter(_items())
    ctx = CallContext(version="1.0", extensions={GENERATIONS_EXTENSION_URI: True})
    assert hidden_items(items, ctx) is items


def test_stripping_closes_the_producer_even_unstarted() -> None:
    closed = []

    def produce() -> Iterator[StreamItem]:
        try:
            yield _update(1)
        finally:
            closed.append(True)

    producer = produce()
    next(producer)
    stripped = hidden_items(producer, CallContext(version="1.0"))
    stripped.close()  # type: ignore[attr-defined]
    assert closed == [True]


def test_a_started_stream_is_stripped_in_one_layer() -> None:
    from a2a_core._closing import ClosingIterator
    from a2a_core._streaming import started

    closed = []

    def produce() -> Iterator[StreamItem]:
        try:
            yield from _items()
        finally:
            closed.append(True)

    producer = produce()
    stripped = hidden_items(started(producer), CallContext(version="1.0"))
    assert stripped._items is producer  # type: ignore[attr-defined]  # started()'s is gone
    assert list(stripped) == [without_generations(item) for item in _items()]
    assert closed == [True]
    again = produce()
    held = hidden_items(started(again), CallContext(version="1.0"))
    held.close()  # type: ignore[attr-defined]  # the first item taken, the rest unread
    assert closed == [True, True]
    kept = ClosingIterator(iter(_items()), on_close=lambda: None)
    assert hidden_items(kept, CallContext(version="1.0"))._items is kept  # type: ignore[attr-defined]


def test_a_stream_nobody_reads_the_count_of_passes_unwrapped() -> None:
    items = iter(_items())
    record = CallRecord(counting=lambda: False)
    outcome = record.answered(None, Events(items))  # type: ignore[arg-type]
    assert isinstance(outcome, Events) and outcome.items is items and record.streamed
    counted = CallRecord().answered(None, Events(iter(_items())))  # type: ignore[arg-type]
    assert isinstance(counted, Events)
    list(counted.items)


def _released(items: Iterator[StreamItem]) -> tuple[Iterator[StreamItem], list[int]]:
    from a2a_core._streaming import closing

    released: list[int] = []
    return closing(items, on_close=lambda: released.append(1)), released


def test_the_stream_place_rides_on_the_stripper_and_is_released_once() -> None:
    stripped = hidden_items(iter(_items()), CallContext(version="1.0"))
    wrapped, released = _released(stripped)
    assert wrapped is stripped  # one layer, not two
    assert len(list(wrapped)) == len(_items()) and released == [1]
    wrapped.close()  # type: ignore[attr-defined]
    assert released == [1]


def test_closing_an_unstarted_stripper_releases_the_place() -> None:
    wrapped, released = _released(hidden_items(iter(_items()), CallContext(version="1.0")))
    wrapped.close()  # type: ignore[attr-defined]
    assert released == [1]


def test_a_raising_producer_releases_the_place() -> None:
    def produce() -> Iterator[StreamItem]:
        yield _update(1)
        raise RuntimeError("agent failed")

    wrapped, released = _released(hidden_items(produce(), CallContext(version="1.0")))
    next(wrapped)
    try:
        next(wrapped)
    except RuntimeError:
        pass
    assert released == [1]


def test_an_ended_iterator_is_wrapped_not_adopted() -> None:
    stripped = hidden_items(iter(()), CallContext(version="1.0"))
    assert list(stripped) == []
    wrapped, released = _released(stripped)
    assert wrapped is not stripped
    wrapped.close()  # type: ignore[attr-defined]
    assert released == [1]


def _chunk(index: int, size: int) -> OutboundEvent:
    update = TaskArtifactUpdateEvent(
        task_id="t", context_id="c",
        artifact=Artifact(artifact_id="a", parts=[TextPart(text=str(index % 10) * size)]))
    return OutboundEvent(update, str(index), more=True)


def _framers() -> list[Callable[[Iterator[StreamItem]], Iterator[bytes]]]:
    from a2a_core._rest._responses import frame_stream
    from a2a_core._streaming import sse_body
    from a2a_core.wire import encode_error, encode_stream_event

    def rest(items: Iterator[StreamItem]) -> Iterator[bytes]:
        return frame_stream(items, lambda event: str(encode_stream_event(event, "1.0")),
                            lambda err: str(encode_error(err, "1.0")).encode())

    return [partial(sse_body, 1, "1.0"), rest]


@pytest.mark.parametrize("framer", _framers(), ids=["jsonrpc", "rest"])
def test_a_batch_is_written_together_up_to_the_hold_limit_with_the_same_bytes(
        framer: Callable[[Iterator[StreamItem]], Iterator[bytes]]) -> None:
    # 40 events of ~5 KB marked "more" (the last one too: the stream ends inside the batch)
    batch = [_chunk(index, 5000) for index in range(40)]
    alone = [replace(item, more=False) for item in batch]
    one_each = list(framer(iter(alone)))
    together = list(framer(iter(batch)))
    assert len(one_each) == 40
    assert b"".join(together) == b"".join(one_each)
    assert 2 <= len(together) < 10  # held back, but never more than HOLD_BYTES and a frame
    assert all(len(chunk) <= HOLD_BYTES + 6000 for chunk in together)


@pytest.mark.parametrize("framer", _framers(), ids=["jsonrpc", "rest"])
def test_a_heartbeat_or_an_error_takes_what_is_held_along(
        framer: Callable[[Iterator[StreamItem]], Iterator[bytes]]) -> None:
    def failing() -> Iterator[StreamItem]:
        yield _chunk(1, 10)
        yield HEARTBEAT
        yield _chunk(2, 10)
        raise TaskNotFoundError("gone")

    chunks = list(framer(failing()))
    assert len(chunks) == 2
    assert chunks[0].endswith(b": ping\n\n") and b"11111111" in chunks[0]
    assert b"2222222222" in chunks[1] and b"gone" in chunks[1]


@pytest.mark.parametrize("framer", _framers(), ids=["jsonrpc", "rest"])
def test_an_idle_stream_is_an_empty_write_after_what_is_held(
        framer: Callable[[Iterator[StreamItem]], Iterator[bytes]]) -> None:
    """IDLE (the producer sleeps; its server resumes it) is written as nothing, and what
    a batch held back goes out before it: a parked stream never sleeps on unsent events."""
    def sleepy() -> Iterator[StreamItem]:
        yield _chunk(1, 10)  # marked "more": held back
        yield IDLE
        yield _chunk(2, 10)
        yield IDLE

    chunks = list(framer(sleepy()))
    assert [bool(chunk) for chunk in chunks] == [True, False, True, False]
    assert b"1111111111" in chunks[0] and b"2222222222" in chunks[2]
    assert b"".join(chunks) == b"".join(framer(iter([replace(_chunk(1, 10), more=False),
                                                     replace(_chunk(2, 10), more=False)])))


def test_an_idle_item_is_not_counted_as_an_event() -> None:
    record = CallRecord()
    record.passed(IDLE)
    record.passed(HEARTBEAT)
    assert record.events == 0
