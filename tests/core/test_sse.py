"""Server-Sent Events: encoder output, WHATWG parsing rules, chunking independence."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core._sse import (
    END,
    NEED_DATA,
    ServerSentEvent,
    SSEDecoder,
    encode_comment,
    encode_event,
    encode_retry,
    iter_events,
)
from a2a_core.errors import RemoteProtocolError


def decode(stream: bytes, chunk_size: int | None = None) -> list[ServerSentEvent]:
    """Feed ``stream`` whole or in fixed-size chunks, collecting events as they come."""
    size = chunk_size or max(len(stream), 1)
    decoder = SSEDecoder()
    events: list[ServerSentEvent] = []
    for start in range(0, len(stream), size):
        decoder.receive_data(stream[start : start + size])
        while isinstance(event := decoder.next_event(), ServerSentEvent):
            events.append(event)
        assert event is NEED_DATA
    decoder.receive_data(b"")
    while isinstance(event := decoder.next_event(), ServerSentEvent):
        events.append(event)
    assert event is END
    return events


def ev(data: str, event: str | None = None, id: str | None = None) -> ServerSentEvent:
    return ServerSentEvent(data=data, event=event, id=id)


# -- encoder ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"data": '{"a":1}'}, b'data: {"a":1}\n\n'),
        ({"data": ""}, b"data\n\n"),
        ({"data": "a\nb"}, b"data: a\ndata: b\n\n"),
        ({"data": "a\r\nb\rc\n"}, b"data: a\ndata: b\ndata: c\ndata\n\n"),
        ({"data": " lead"}, b"data:  lead\n\n"),
        ({"data": "x", "event": "error"}, b"event: error\ndata: x\n\n"),
        ({"data": "x", "id": "7", "retry": 1500}, b"id: 7\nretry: 1500\ndata: x\n\n"),
        ({"data": "x", "id": ""}, b"id\ndata: x\n\n"),
        ({"data": "é😀"}, "data: é😀\n\n".encode()),
    ],
)
def test_encode_event(kwargs: dict[str, object], expected: bytes) -> None:
    assert encode_event(**kwargs) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"event": "a\nb"},
        {"event": "a\rb"},
        {"id": "1\n"},
        {"id": "\r"},
        {"id": "a\0b"},
        {"retry": -1},
    ],
)
def test_encode_event_refuses_field_injection(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        encode_event("x", **kwargs)  # type: ignore[arg-type]


def test_encode_retry_and_comment() -> None:
    assert encode_retry(3000) == b"retry: 3000\n\n"
    with pytest.raises(TypeError):
        encode_retry(True)
    assert encode_comment() == b":\n\n"
    assert encode_comment("ping") == b": ping\n\n"
    assert encode_comment("a\nb") == b": a\n: b\n\n"


def test_comments_and_retry_blocks_dispatch_nothing() -> None:
    decoder = SSEDecoder()
    decoder.receive_data(encode_comment("ping") + encode_retry(2500) + encode_comment())
    assert decoder.next_event() is NEED_DATA
    assert decoder.retry == 2500


# -- WHATWG parsing rules -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        # The spec's examples.
        (b"data: YHOO\ndata: +2\ndata: 10\n\n", [ev("YHOO\n+2\n10")]),
        (
            b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
            b"data:  third event\n\n",
            [ev("first event", id="1"), ev("second event"), ev(" third event")],
        ),
        (b"data\n\ndata\ndata\n\ndata:", [ev(""), ev("\n")]),
        (b"data:test\n\ndata: test\n\n", [ev("test"), ev("test")]),
        # Field rules.
        (b"event: add\ndata: 1\n\ndata: 2\n\n", [ev("1", event="add"), ev("2")]),
        (b"foo: bar\ndata: x\nbaz\n\n", [ev("x")]),
        (b"Data: x\n\ndata: y\n\n", [ev("y")]),
        (b"data:x:y: z\n\n", [ev("x:y: z")]),
        (b"data:   x  \n\n", [ev("  x  ")]),
        (b"id: 1\n\ndata: a\n\n", [ev("a", id="1")]),
        (
            b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
            [ev("a", id="1"), ev("b", id="1"), ev("c")],
        ),
        (b"id: 1\ndata: a\n\nid: 2\0\ndata: b\n\n", [ev("a", id="1"), ev("b", id="1")]),
        (b"event: only\n\ndata: x\n\n", [ev("x")]),
        (b"data: x\n:comment\n: another\ndata: y\n\n", [ev("x\ny")]),
        # Stream edges.
        (b"\xef\xbb\xbfdata: bom\n\n", [ev("bom")]),
        (b"\xef\xbb\xbf\xef\xbb\xbfdata: two\n\ndata: ok\n\n", [ev("ok")]),
        (b"data: \xff\xfe\n\n", [ev("\ufffd\ufffd")]),
        (b"data: incomplete\n", []),
        (b"data: complete\n\ndata: incomplete", [ev("complete")]),
        (b"\n\n\n", []),
        (b"", []),
    ],
)
def test_parsing_rules(stream: bytes, expected: list[ServerSentEvent]) -> None:
    assert decode(stream) == expected
    assert decode(stream, 1) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"1000", 1000),
        (b"0", 0),
        (b"12a", None),
        (b"", None),
        (b" 5", 5),
        (b"-5", None),
        ("\u0665".encode(), None),
        (b"1.5", None),
    ],
)
def test_retry_only_ascii_digits(value: bytes, expected: int | None) -> None:
    decoder = SSEDecoder()
    decoder.receive_data(b"retry:" + value + b"\ndata: x\n\n")
    event = decoder.next_event()
    assert isinstance(event, ServerSentEvent)
    assert event.retry == expected
    assert decoder.retry == expected


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_line_endings(newline: bytes) -> None:
    stream = b"event: e\nid: 9\ndata: a\ndata: b\n\n: c\n\ndata: z\n\n".replace(b"\n", newline)
    expected = [ev("a\nb", event="e", id="9"), ev("z", id="9")]
    assert decode(stream) == expected
    assert decode(stream, 1) == expected
    assert decode(stream, 3) == expected


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    decoder = SSEDecoder()
    decoder.receive_data(b"data: a\r")
    assert decoder.next_event() is NEED_DATA
    decoder.receive_data(b"\ndata: b\r")
    assert decoder.next_event() is NEED_DATA
    decoder.receive_data(b"\n\r")
    assert decoder.next_event() == ev("a\nb")
    decoder.receive_data(b"\n")  # the LF of the blank line's CRLF: no second blank line
    assert decoder.next_event() is NEED_DATA
    decoder.receive_data(b"data: c\r\r")
    assert decoder.next_event() == ev("c")  # a lone CR dispatches without waiting for more


def test_bom_split_across_chunks_and_only_at_the_start() -> None:
    decoder = SSEDecoder()
    for byte in b"\xef\xbb\xbfdata: x\n\n":
        decoder.receive_data(bytes([byte]))
    assert decoder.next_event() == ev("x")
    decoder.receive_data(b"\xef\xbb\xbfdata: y\n\ndata: z\n\n")
    assert decoder.next_event() == ev("z")


def test_last_event_id_persists_and_end_is_sticky() -> None:
    decoder = SSEDecoder()
    assert decoder.last_event_id == ""
    decoder.receive_data(b"id: abc\ndata: 1\n\ndata: 2\n\nid\n\n")
    assert decoder.next_event() == ev("1", id="abc")
    assert decoder.next_event() == ev("2", id="abc")
    assert decoder.next_event() is NEED_DATA
    assert decoder.last_event_id == ""
    decoder.receive_data(b"data: lost")
    decoder.receive_data(b"")
    assert decoder.next_event() is END
    assert decoder.next_event() is END
    with pytest.raises(RuntimeError):
        decoder.receive_data(b"data: late\n\n")


def test_truncated_utf8_at_end_of_stream_is_replaced() -> None:
    decoder = SSEDecoder()
    decoder.receive_data("data: é\n\n".encode()[:-3] + b"\n\n")
    assert decoder.next_event() == ev("\ufffd")


# -- memory bound -------------------------------------------------------------------------


def test_a_long_unterminated_line_is_refused() -> None:
    decoder = SSEDecoder(max_event_size=100)
    decoder.receive_data(b"data: " + b"x" * 90)
    assert decoder.next_event() is NEED_DATA
    decoder.receive_data(b"x" * 10)
    with pytest.raises(RemoteProtocolError):
        decoder.next_event()


def test_the_limit_counts_bytes_not_characters() -> None:
    """25 astral characters are 100 bytes (and 100 bytes of memory): past a 99-byte limit,
    whether in one line or in many data lines."""
    grin = "\U0001f600".encode()
    decoder = SSEDecoder(max_event_size=99)
    decoder.receive_data(b"data: " + grin * 25)
    with pytest.raises(RemoteProtocolError, match="larger than 99 bytes"):
        decoder.next_event()
    decoder = SSEDecoder(max_event_size=99)
    decoder.receive_data((b"data: " + grin * 5 + b"\n") * 5)
    with pytest.raises(RemoteProtocolError):
        decoder.next_event()
    decoder = SSEDecoder(max_event_size=99)
    decoder.receive_data(b"data: " + grin * 23 + b"\n\n")  # (the line: 98 bytes)
    assert decoder.next_event() == ev("\U0001f600" * 23)


def test_many_data_lines_are_refused() -> None:
    decoder = SSEDecoder(max_event_size=100)
    decoder.receive_data(b"data: 123456789\n" * 20)
    with pytest.raises(RemoteProtocolError):
        decoder.next_event()


def test_events_up_to_the_limit_pass_and_the_limit_is_per_event() -> None:
    decoder = SSEDecoder(max_event_size=100)
    block = b"data: " + b"x" * 80 + b"\n\n"
    decoder.receive_data(block * 5)
    assert [decoder.next_event() for _ in range(5)] == [ev("x" * 80)] * 5


def test_comments_count_against_the_limit_only_per_line() -> None:
    decoder = SSEDecoder(max_event_size=50)
    decoder.receive_data((b": " + b"c" * 40 + b"\n") * 10 + b"data: ok\n\n")
    assert decoder.next_event() == ev("ok")
    with pytest.raises(ValueError):
        SSEDecoder(max_event_size=0)


# -- chunking independence and round trips (hypothesis) -----------------------------------

field_text = st.text(st.characters(exclude_characters="\r\n\0", codec="utf-8"), max_size=8)
events_strategy = st.lists(
    st.tuples(
        st.text(max_size=30),
        st.none() | field_text,
        st.none() | field_text,
        st.booleans(),
    ),
    max_size=6,
)


def _stream_and_expectation(
    specs: list[tuple[str, str | None, str | None, bool]], newline: str
) -> tuple[bytes, list[ServerSentEvent]]:
    """Encode ``specs`` (with comments between) and compute what a decoder must yield."""
    parts: list[bytes] = []
    expected: list[ServerSentEvent] = []
    last_id = ""
    for data, event, id, comment in specs:
        if comment:
            parts.append(encode_comment("keep-alive"))
        parts.append(encode_event(data, event=event or None, id=id))
        if id is not None:
            last_id = id
        normalized = re.sub(r"\r\n?", "\n", data)
        expected.append(ServerSentEvent(data=normalized, event=event or None, id=last_id or None))
    stream = b"".join(parts).replace(b"\n", newline.encode())
    return stream, expected


@settings(max_examples=150, deadline=None)
@given(events_strategy, st.sampled_from(["\n", "\r\n", "\r"]), st.data())
def test_whole_byte_by_byte_and_random_splits_agree(
    specs: list[tuple[str, str | None, str | None, bool]], newline: str, data: st.DataObject
) -> None:
    stream, expected = _stream_and_expectation(specs, newline)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert decode(stream) == expected
    assert decode(stream, 1) == expected
    assert list(iter_events(pieces)) == expected


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_encode_decode_round_trip(text: str) -> None:
    (event,) = decode(encode_event(text))
    assert event.data == re.sub(r"\r\n?", "\n", text)


def test_iter_events_skips_empty_chunks_and_drops_the_incomplete_tail() -> None:
    chunks = [b"", b"data: a\n", b"", b"\n", b"data: b"]
    assert list(iter_events(chunks)) == [ev("a")]
    assert list(iter_events([])) == []
