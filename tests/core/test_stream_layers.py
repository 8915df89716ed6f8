"""The stream's per-event layers: what each one still does once made lighter."""

from __future__ import annotations

from collections.abc import Iterator

from a2a_core.generations import GENERATIONS_EXTENSION_URI, hidden_items, without_generations
from a2a_core.models import Artifact, Message, Role, TaskArtifactUpdateEvent, TextPart
from a2a_core.observe import CallRecord
from a2a_core.operations import Stream
from a2a_core.service import HEARTBEAT, CallContext, OutboundEvent, StreamItem


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


def test_a_stream_nobody_reads_the_count_of_passes_unwrapped() -> None:
    items = iter(_items())
    record = CallRecord(counting=lambda: False)
    outcome = record.answered(None, Stream(items))  # type: ignore[arg-type]
    assert isinstance(outcome, Stream) and outcome.items is items and record.streamed
    counted = CallRecord().answered(None, Stream(iter(_items())))  # type: ignore[arg-type]
    assert isinstance(counted, Stream)
    list(counted.items)


def _released(items: Iterator[StreamItem]) -> tuple[Iterator[StreamItem], list[int]]:
    from a2a_core.streaming import closing

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
