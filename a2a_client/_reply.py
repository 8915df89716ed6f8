"""One HTTP response read within bounds, and requests' errors in ours.

* **Memory is bounded by us, not by the peer.** A body is read in pieces of at most
  :data:`READ_CHUNK` bytes (decompressed), whatever length it declares or whatever chunk
  size it announces; a body read whole is refused from its ``Content-Length`` before any
  of it is read, and otherwise once it passes ``max_body``.
* **So is time.** A body read whole must arrive within the read timeout, however slowly
  it trickles; a stream's reader sets a :attr:`Reply.deadline` no read outlasts.
* **One exception choke point.** :func:`map_errors` turns every requests/urllib3
  failure into the :mod:`a2a_client._errors` family, chained ``from`` the original
  (httpx's ``map_httpcore_exceptions``). It wraps sending *and* reading, so a
  stream that goes idle raises :class:`ReadTimeout`, not a requests exception.
"""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import requests
from urllib3.exceptions import HTTPError, ReadTimeoutError

from a2a_core.errors import RemoteProtocolError

from ._errors import ConnectError, ConnectTimeout, ReadTimeout, TimeoutException, TransportError

__all__ = ["READ_CHUNK", "DeadlineExceeded", "Reply", "map_errors"]

#: Most bytes one read takes off the connection: what a read holds is bounded by this,
#: not by the length the peer declares (nor by a chunk size it announces).
READ_CHUNK = 64 * 1024


def _is_read_timeout(exc: requests.exceptions.ConnectionError) -> bool:
    """requests reports a read timeout *while streaming* as a ConnectionError around urllib3's."""
    return any(isinstance(arg, ReadTimeoutError) for arg in exc.args)


@contextmanager
def map_errors() -> Iterator[None]:
    """Translate requests' exceptions into ours, most specific first."""
    try:
        yield
    except requests.exceptions.ConnectTimeout as exc:
        raise ConnectTimeout(str(exc)) from exc
    except requests.exceptions.ReadTimeout as exc:
        raise ReadTimeout(str(exc)) from exc
    except requests.exceptions.Timeout as exc:
        raise TimeoutException(str(exc)) from exc
    except requests.exceptions.ConnectionError as exc:
        if _is_read_timeout(exc):
            raise ReadTimeout(str(exc)) from exc
        raise ConnectError(str(exc)) from exc
    except requests.exceptions.RequestException as exc:
        raise TransportError(str(exc)) from exc
    except ReadTimeoutError as exc:  # our reads of a body go to urllib3 directly
        raise ReadTimeout(str(exc)) from exc
    except HTTPError as exc:  # a broken connection, a short body, bad chunking or encoding
        raise TransportError(str(exc)) from exc


class DeadlineExceeded(ReadTimeout):
    """A read was cut short by :attr:`Reply.deadline` (not by the read timeout)."""


class Reply:
    """One HTTP response: status, headers, and the body read whole or incrementally.

    :param read_timeout: the request's read timeout: the longest wait for one read, and
        the most a body read whole (:meth:`read`) may take.
    """

    def __init__(self, response: requests.Response, max_body: int,
                 read_timeout: float | None = None) -> None:
        self._response = response
        self._max_body = max_body
        self.read_timeout = read_timeout
        #: ``time.monotonic()`` past which no read waits: one raises ReadTimeout instead
        #: (None: only the read timeout bounds each read). A stream's reader sets it.
        self.deadline: float | None = None
        #: What the ReadTimeout says when the deadline passes.
        self.deadline_message = "the response took longer than its deadline"
        self.status_code: int = response.status_code
        #: Case-insensitive, as requests gives it.
        self.headers: Mapping[str, str] = response.headers
        self.url: str = response.url
        self._body: bytes | None = None

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-cased."""
        return self.headers.get("Content-Type", "").split(";")[0].strip().lower()

    @property
    def declared_length(self) -> int | None:
        """The ``Content-Length`` the peer declared (None: none, or not a number)."""
        value = self.headers.get("Content-Length", "").strip()
        return int(value) if value.isascii() and value.isdigit() else None

    def read(self) -> bytes:
        """The whole body (read once, then kept), refusing more than ``max_body`` bytes.

        A declared length past the limit is refused before a byte is read; the body must
        arrive within the read timeout (from this call), however slowly it trickles.
        """
        if self._body is not None:
            return self._body
        declared = self.declared_length
        if declared is not None and declared > self._max_body:
            self.close()
            raise RemoteProtocolError(f"response body larger than {self._max_body} bytes "
                                      f"(Content-Length: {declared})")
        if self.deadline is None and self.read_timeout is not None:
            self.deadline = time.monotonic() + self.read_timeout
            self.deadline_message = (f"the response body did not arrive within the read "
                                     f"timeout ({self.read_timeout:g} s)")
        body = io.BytesIO()
        try:
            for chunk in self.iter_bytes():
                if body.tell() + len(chunk) > self._max_body:
                    raise RemoteProtocolError(f"response body larger than {self._max_body} bytes")
                body.write(chunk)
        finally:
            self.close()
        self._body = body.getvalue()
        return self._body

    def iter_bytes(self) -> Iterator[bytes]:
        """Chunks of at most :data:`READ_CHUNK` bytes, as they arrive (any boundary).

        :raises ReadTimeout: a read waited past the read timeout, or :attr:`deadline`
            passed.
        """
        if self._body is not None:
            yield self._body
            return
        raw = self._response.raw
        read1 = getattr(raw, "read1", None)
        if read1 is None:  # urllib3 older than 2.3: bounded reads, whole chunks
            with map_errors():
                for chunk in raw.stream(READ_CHUNK, decode_content=True):
                    self._check_deadline()
                    yield chunk
            return
        while True:
            cut = self._arm()
            with map_errors():
                try:
                    chunk = read1(READ_CHUNK, decode_content=True)
                except ReadTimeoutError as exc:
                    if cut:
                        self.close()
                        raise DeadlineExceeded(self.deadline_message) from exc
                    raise
            if not chunk:  # (None: closed under us, by close() or abort())
                return
            yield chunk

    def _arm(self) -> bool:
        """Make the next read wait no longer than the deadline allows; True if it cut it."""
        if self.deadline is None:
            return False
        left = self._check_deadline()
        sock = _socket_of(self._response)
        if sock is None:
            return False
        cut = self.read_timeout is None or left < self.read_timeout
        sock.settimeout(left if cut else self.read_timeout)
        return cut

    def _check_deadline(self) -> float:
        """Seconds left before the deadline; raises ReadTimeout once it has passed."""
        if self.deadline is None:
            return float("inf")
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.close()
            raise DeadlineExceeded(self.deadline_message)
        return left

    def close(self) -> None:
        """Release the connection (idempotent)."""
        self._response.close()

    def abort(self) -> None:
        """From another thread: end a read blocked on this response, then close it.

        Closing alone does not wake a thread blocked in ``recv``; shutting the socket
        down does (the reader then sees an error or EOF).
        """
        sock = _socket_of(self._response)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by the peer or by us
        self._response.close()


def _socket_of(response: requests.Response) -> socket.socket | None:
    """The socket under a streamed response: urllib3's connection, or http.client's reader.

    Once the body is being read, http.client has detached the socket from the
    connection; the buffered reader of the response still holds it.
    """
    raw = response.raw
    sock = getattr(getattr(raw, "connection", None), "sock", None)
    if sock is None:
        reader = getattr(getattr(raw, "_fp", None), "fp", None)
        sock = getattr(getattr(reader, "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None
