"""Server-Sent Events: an encoder and an incremental, sans-IO decoder.

The decoder has the werkzeug multipart / h11 shape: feed bytes with
:meth:`SSEDecoder.receive_data` (``b""`` means end of stream) and pull
events with :meth:`SSEDecoder.next_event` until it answers :data:`NEED_DATA`
or :data:`END`. It follows the WHATWG "event stream interpretation" rules:

* CRLF, LF and CR all end a line, also when the CR ends one chunk and the LF
  starts the next (one line ending, not two);
* one leading U+FEFF at the start of the stream is dropped; bytes that are not
  UTF-8 become U+FFFD;
* lines starting with ``:`` are comments; a line without a colon is a field
  name with an empty value; one space after the colon is removed; unknown
  fields are ignored; an ``id`` containing NUL is ignored; ``retry`` counts
  only when it is ASCII digits;
* a blank line dispatches the event, unless no ``data`` line was seen;
  ``data`` lines are joined with ``\\n``;
* the last event id persists from event to event (:attr:`SSEDecoder.last_event_id`);
* an event still incomplete at end of stream is discarded.

Memory is bounded: an event (its data plus the line being read) larger than
``max_event_size`` bytes of UTF-8 raises :class:`RemoteProtocolError`. Counting bytes, not
characters, bounds the memory held whatever the characters (a str of astral characters
takes four bytes each).

SSE has no escapes, so the encoder sends a data string with line breaks as
several ``data:`` lines; the receiver gets ``\\n`` for each of ``\\r\\n``,
``\\r`` and ``\\n``.
"""

from __future__ import annotations

import codecs
import enum
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from .errors import RemoteProtocolError

__all__ = [
    "HOLD_BYTES",
    "join_batches",
    "DEFAULT_MAX_EVENT_SIZE",
    "ServerSentEvent",
    "Sentinel",
    "NEED_DATA",
    "END",
    "encode_event",
    "encode_data_event",
    "encode_comment",
    "encode_retry",
    "SSEDecoder",
    "iter_events",
]

#: Largest event (in bytes of UTF-8) the decoder buffers before giving up.
DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024

#: The most a stream's writer holds back of one batch's events (each marked ``more``: the
#: next is at hand) to send them in one write; past it, what is held goes out.
HOLD_BYTES = 64 * 1024


def join_batches(frames: Iterable[tuple[bytes, bool]]) -> Iterator[bytes]:
    """The writes for ``(frame, more)`` pairs: a frame marked ``more`` waits to go out
    with the next, up to :data:`HOLD_BYTES`, so a batch of events costs one write.

    An empty frame (the producer sleeps, :data:`~a2a_core._service.IDLE`) is passed on
    as an empty write, after what is held."""
    held = b""
    for frame, more in frames:
        if more and len(held) + len(frame) <= HOLD_BYTES:
            held += frame
            continue
        if not frame and held:
            yield held
            held = b""
        write, held = held + frame if held else frame, b""
        del frame  # (not kept while the stream waits for its next event)
        yield write
        del write
    if held:  # the frames ended inside a batch
        yield held

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_END_CHAR = re.compile(r"[\r\n]")


class Sentinel(enum.Enum):
    """What :meth:`SSEDecoder.next_event` answers when it has no event."""

    #: Feed more bytes, then ask again.
    NEED_DATA = "NEED_DATA"
    #: The stream ended; no more events will come.
    END = "END"

    def __repr__(self) -> str:
        return self.value


NEED_DATA: Literal[Sentinel.NEED_DATA] = Sentinel.NEED_DATA
END: Literal[Sentinel.END] = Sentinel.END


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSentEvent:
    """One dispatched event.

    ``event`` is ``None`` when no ``event:`` field was given (browsers call that
    type "message"). ``id`` is the last event id in effect at dispatch, as the
    spec defines it (``None`` while it is empty). ``retry`` is the reconnection
    time given inside this event's block, if any.
    """

    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None


# -- encoding -----------------------------------------------------------------------------


def _check_field(name: str, value: str) -> None:
    """CR or LF in a one-line field would forge extra fields; NUL in an id is dropped by peers."""
    if "\r" in value or "\n" in value:
        raise ValueError(f"SSE {name} must not contain CR or LF")
    if name == "id" and "\0" in value:
        raise ValueError("SSE id must not contain NUL")


def _check_retry(retry: int) -> None:
    """Peers accept only ASCII digits, so a negative number would be ignored."""
    if not isinstance(retry, int) or isinstance(retry, bool):
        raise TypeError("SSE retry must be an int (milliseconds)")
    if retry < 0:
        raise ValueError("SSE retry must not be negative")


def encode_event(
    data: str, *, event: str | None = None, id: str | None = None, retry: int | None = None
) -> bytes:
    """One complete event block, UTF-8, ending with a blank line.

    :raises ValueError: CR/LF in ``event`` or ``id``, NUL in ``id``, negative ``retry``.
    """
    lines: list[str] = []
    if event is not None:
        _check_field("event", event)
        lines.append(f"event: {event}")
    if id is not None:
        if "\r" in id or "\n" in id or "\0" in id:  # (every event has one: no call when clean)
            _check_field("id", id)
        lines.append(f"id: {id}" if id else "id")
    if retry is not None:
        _check_retry(retry)
        lines.append(f"retry: {retry}")
    if "\n" in data or "\r" in data:
        lines.extend(f"data: {line}" if line else "data" for line in _LINE_BREAK.split(data))
    else:  # one line (every JSON body we send): what the split would give, without it
        lines.append(f"data: {data}" if data else "data")
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def encode_data_event(data: bytes, *, id: str | None = None) -> bytes:
    """:func:`encode_event` for ``data`` already in UTF-8 (compact JSON, say): the same
    bytes, without decoding and encoding it again when it holds no line break.

    :raises ValueError: CR/LF or NUL in ``id``.
    """
    if not data or b"\r" in data or b"\n" in data:
        return encode_event(data.decode("utf-8"), id=id)
    if id is None:
        return b"data: " + data + b"\n\n"
    _check_field("id", id)
    return (f"id: {id}\ndata: " if id else "id\ndata: ").encode("utf-8") + data + b"\n\n"


def encode_comment(text: str = "") -> bytes:
    """A comment block (a heartbeat that keeps proxies from closing an idle stream)."""
    lines = _LINE_BREAK.split(text)
    return ("".join(f": {line}\n" if line else ":\n" for line in lines) + "\n").encode("utf-8")


def encode_retry(ms: int) -> bytes:
    """A block that only sets the client's reconnection time; it dispatches no event."""
    _check_retry(ms)
    return f"retry: {ms}\n\n".encode("ascii")


# -- decoding -----------------------------------------------------------------------------


def _utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (at least the bytes it holds in memory per character)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class SSEDecoder:
    """Incremental event-stream parser; holds no socket and never blocks."""

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        if max_event_size < 1:
            raise ValueError("max_event_size must be positive")
        self.max_event_size = max_event_size
        #: The last event id buffer; persists across events ("" = none).
        self.last_event_id = ""
        #: The last valid ``retry`` value seen anywhere in the stream.
        self.retry: int | None = None
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._chunks: deque[str] = deque()
        self._pos = 0  # offset into self._chunks[0]
        self._line_parts: list[str] = []
        self._line_len = 0
        self._skip_lf = False  # the last line ended with CR: a following LF belongs to it
        self._bom_checked = False
        self._eof = False
        self._data: list[str] = []
        self._data_len = 0
        self._event_type = ""
        self._event_retry: int | None = None

    def receive_data(self, data: bytes) -> None:
        """Feed bytes from the wire; ``b""`` means the stream ended.

        :raises RuntimeError: data after the end of the stream.
        """
        if self._eof:
            raise RuntimeError("received data after the end of the stream")
        if not data:
            self._eof = True
            self._push(self._text.decode(b"", final=True))
        else:
            self._push(self._text.decode(data))

    def _push(self, text: str) -> None:
        """Queue decoded text, dropping one BOM at the very start of the stream."""
        if not text:
            return
        if not self._bom_checked:
            self._bom_checked = True
            if text[0] == "\ufeff":
                text = text[1:]
        if text:
            self._chunks.append(text)

    def next_event(self) -> ServerSentEvent | Literal[Sentinel.NEED_DATA, Sentinel.END]:
        """The next complete event, :data:`NEED_DATA` or :data:`END`.

        :raises RemoteProtocolError: the event being read exceeds ``max_event_size``.
        """
        while (line := self._next_line()) is not None:
            event = self._process_line(line)
            if event is not None:
                return event
        if self._eof:
            self._discard_pending()
            return END
        return NEED_DATA

    def _next_line(self) -> str | None:
        """Cut the next complete line from the queued chunks (None: not complete yet)."""
        while self._chunks:
            chunk = self._chunks[0]
            if self._skip_lf and self._pos < len(chunk):
                self._skip_lf = False
                if chunk[self._pos] == "\n":
                    self._pos += 1
            match = _LINE_END_CHAR.search(chunk, self._pos)
            if match is None:
                self._append_partial(chunk[self._pos :])
                self._chunks.popleft()
                self._pos = 0
                continue
            end = match.start()
            line = "".join(self._line_parts) + chunk[self._pos : end]
            self._line_parts.clear()
            self._line_len = 0
            self._check_size(_utf8_size(line))
            self._skip_lf = chunk[end] == "\r"
            self._pos = end + 1
            if self._pos >= len(chunk):
                self._chunks.popleft()
                self._pos = 0
            return line
        return None

    def _append_partial(self, text: str) -> None:
        """Keep the start of a line that has not ended yet."""
        if text:
            self._line_parts.append(text)
            self._line_len += _utf8_size(text)
            self._check_size(self._line_len)

    def _check_size(self, pending: int) -> None:
        """Bound memory: a peer must not make us buffer without limit."""
        if pending + self._data_len > self.max_event_size:
            raise RemoteProtocolError(
                f"server-sent event larger than {self.max_event_size} bytes"
            )

    def _process_line(self, line: str) -> ServerSentEvent | None:
        """Apply one line to the event being built; a blank line may dispatch it."""
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_len += _utf8_size(value) + 1
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry = self._event_retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        """End of a block: an event only when some data line was seen."""
        event = None
        if self._data:
            event = ServerSentEvent(
                data="\n".join(self._data),
                event=self._event_type or None,
                id=self.last_event_id or None,
                retry=self._event_retry,
            )
        self._data = []
        self._data_len = 0
        self._event_type = ""
        self._event_retry = None
        return event

    def _discard_pending(self) -> None:
        """At end of stream an incomplete event is dropped, as the spec says."""
        self._line_parts.clear()
        self._line_len = 0
        self._chunks.clear()
        self._dispatch()


def iter_events(
    chunks: Iterable[bytes], *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE
) -> Iterator[ServerSentEvent]:
    """Decode a whole byte stream (e.g. ``response.iter_content(None)``) lazily.

    Empty chunks are skipped; the end of the iterable is the end of the stream.
    """
    decoder = SSEDecoder(max_event_size=max_event_size)
    for chunk in chunks:
        if not chunk:
            continue
        decoder.receive_data(chunk)
        while isinstance(event := decoder.next_event(), ServerSentEvent):
            yield event
    decoder.receive_data(b"")
    while isinstance(event := decoder.next_event(), ServerSentEvent):
        yield event
