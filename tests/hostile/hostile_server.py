"""A hostile A2A agent on loopback, written on raw sockets: it answers what a real agent
never would (gigabyte cards, endless streams, broken framing, trickles, redirect games), so
the client's limits are tried against a server that means harm.

Each case is a path prefix: ``http://127.0.0.1:PORT/<case>`` is an agent URL. Its card
(``/<case>/.well-known/agent-card.json``) is a good one unless the case is about the card;
a POST to ``/<case>`` (the card's JSON-RPC interface) gets the case's hostile answer. A
case named ``rest-…`` offers the HTTP+JSON binding instead, and any request below
``/<case>/`` but the card's gets the hostile answer. Big
bodies are generated as they are sent, never held: the server's memory does not grow
with the sizes it claims. Every request's path and headers are kept in :attr:`seen`.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["HostileServer", "Request", "CASES", "MB"]

MB = 1024 * 1024
_BLOCK = 64 * 1024
_PAD = b"a" * _BLOCK


@dataclass
class Request:
    """One request the server read: what the client sent, headers lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Handler = Callable[["HostileServer", socket.socket, Request], None]


def _head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _answer(conn: socket.socket, body: bytes, content_type: str = "application/json",
            status: str = "200 OK", **extra: str) -> None:
    conn.sendall(_head(status, {"Content-Type": content_type,
                                "Content-Length": str(len(body)), **extra}) + body)


def _stream(conn: socket.socket, blocks: Iterator[bytes]) -> None:
    """Send blocks until they end or the client goes away (the client hanging up is its
    right: it is how a refusal looks from here)."""
    try:
        for block in blocks:
            conn.sendall(block)
    except OSError:
        pass


def _padding(total: int) -> Iterator[bytes]:
    """``total`` bytes of a JSON string's inside, made as they are sent."""
    sent = 0
    while sent < total:
        block = _PAD[: min(_BLOCK, total - sent)]
        sent += len(block)
        yield block


def _chunked(blocks: Iterator[bytes]) -> Iterator[bytes]:
    for block in blocks:
        yield f"{len(block):x}\r\n".encode() + block + b"\r\n"
    yield b"0\r\n\r\n"


def card_json(url: str, binding: str = "JSONRPC") -> bytes:
    """A good 1.0 card whose interface (JSON-RPC, or ``binding``) is ``url``, streaming on."""
    return json.dumps({
        "name": "Hostile Agent", "description": "answers badly on purpose", "version": "1.0.0",
        "supportedInterfaces": [{"url": url, "protocolBinding": binding,
                                 "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
    }).encode()


def working_event(task_id: str = "t-1") -> bytes:
    """A JSON-RPC stream event: the task is working (not final, so EOF is a drop)."""
    result = {"task": {"id": task_id, "contextId": "c-1",
                       "status": {"state": "TASK_STATE_WORKING"}}}
    return b"data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()


# -- the card's hostile answers ------------------------------------------------------------

def huge_declared(size: int) -> Handler:
    """A card whose Content-Length is ``size``, sent lazily for as long as the client reads."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        conn.sendall(_head("200 OK", {"Content-Type": "application/json",
                                      "Content-Length": str(size)}))
        _stream(conn, iter([b'{"name": "', *_padding(size - 10)]))
    return handle


def huge_chunked(size: int) -> Handler:
    """A card of ``size`` bytes in chunks, no length declared."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        conn.sendall(_head("200 OK", {"Content-Type": "application/json",
                                      "Transfer-Encoding": "chunked"}))
        _stream(conn, _chunked(iter([b'{"name": "', *_padding(size)])))
    return handle


def one_huge_chunk(size: int) -> Handler:
    """One chunk announcing ``size`` bytes (a reader trusting it would allocate them)."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        conn.sendall(_head("200 OK", {"Content-Type": "application/json",
                                      "Transfer-Encoding": "chunked"}) + f"{size:x}\r\n".encode())
        _stream(conn, _padding(size))
    return handle


def gzip_bomb(size: int) -> Handler:
    """``size`` bytes of JSON padding gzip-compressed to about a thousandth of that."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        body = server.bomb(size)
        conn.sendall(_head("200 OK", {"Content-Type": "application/json",
                                      "Content-Encoding": "gzip",
                                      "Content-Length": str(len(body))}) + body)
    handle.bomb_size = size  # type: ignore[attr-defined]  # (made when the server starts)
    return handle


def nested(depth: int, content_type: str = "application/json") -> Handler:
    """JSON nested ``depth`` deep."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        _answer(conn, b"[" * depth + b"]" * depth, content_type)
    return handle


def short(declared: int, sent: bytes, then_close: bool) -> Handler:
    """A Content-Length never met: part of the body, then silence (or a close)."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        conn.sendall(_head("200 OK", {"Content-Type": "application/json",
                                      "Content-Length": str(declared)}) + sent)
        if not then_close:
            server.hold(conn)
    return handle


def half_closed(after_head: bool) -> Handler:
    """The server shuts its sending side: before any answer, or after the headers."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        if after_head:
            conn.sendall(_head("200 OK", {"Content-Type": "application/json",
                                          "Content-Length": "1000"}))
        conn.shutdown(socket.SHUT_WR)
        server.hold(conn)  # reading side still open: the client is not told by a reset
    return handle


def slowloris_body(server_pause: float = 0.2) -> Handler:
    """Headers at once, then the body one byte at a time, each well inside the read timeout."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        conn.sendall(_head("200 OK", {"Content-Type": "application/json",
                                      "Content-Length": "100000"}))
        _stream(conn, server.trickle(b" ", server_pause))
    return handle


def slowloris_head(server: HostileServer, conn: socket.socket, req: Request) -> None:
    """The status line and an endless header, a byte every 0.2 s (each inside the read
    timeout, so only a bound on the whole header block ends it)."""
    _stream(conn, iter([b"HTTP/1.1 200 OK\r\nX-Pad: "]))
    _stream(conn, server.trickle(b"a", 0.2))


def redirect(to: Callable[[HostileServer, Request], str], status: str = "302 Found") -> Handler:
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        conn.sendall(_head(status, {"Location": to(server, req), "Content-Length": "0"}))
    return handle


# -- the stream's hostile answers ----------------------------------------------------------

def sse(blocks: Callable[[HostileServer], Iterator[bytes]], chunked: bool = True) -> Handler:
    """A text/event-stream answer made of ``blocks`` (close-delimited when not chunked)."""
    def handle(server: HostileServer, conn: socket.socket, req: Request) -> None:
        head = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        if chunked:
            head["Transfer-Encoding"] = "chunked"
        else:
            head["Connection"] = "close"
        conn.sendall(_head("200 OK", head))
        _stream(conn, _chunked(blocks(server)) if chunked else blocks(server))
    return handle


def _comments(server: HostileServer) -> Iterator[bytes]:
    return server.trickle(b": keep-alive\n\n", 0.05)


def _comment_bytes(server: HostileServer) -> Iterator[bytes]:
    return server.trickle(b":", 0.2)


def _event_of(size: int) -> Callable[[HostileServer], Iterator[bytes]]:
    def blocks(server: HostileServer) -> Iterator[bytes]:
        yield b'data: {"jsonrpc": "2.0", "id": 1, "result": "'
        yield from _padding(size)
    return blocks


def _astral_event_of(size: int) -> Callable[[HostileServer], Iterator[bytes]]:
    """An event of ``size`` bytes of 4-byte characters (four bytes each in a str, too)."""
    def blocks(server: HostileServer) -> Iterator[bytes]:
        yield b'data: {"jsonrpc": "2.0", "id": 1, "result": "'
        block = "\U0001f600".encode() * (_BLOCK // 4)
        for _ in range(size // len(block)):
            yield block
    return blocks


def _broken(server: HostileServer) -> Iterator[bytes]:
    yield b"\xef\xbb\xbf\xff\xfe garbage without a colon\r"
    yield b"\ndata\r\rdata: {not json}\n\nid: a\x00b\nevent: \x00\n\n"
    yield b"data: " + b"\x80" * 100 + b"\n\n"
    yield b"retry: -5\nretry: x\n\ndata: [1, 2\ndata: 3]\n\n"
    yield b"data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"nonsense\": 1}}\n\n"
    yield b"data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"task\": {\"id\": 5}}}\n"


def _deep_event(server: HostileServer) -> Iterator[bytes]:
    yield b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n"


def _retry(value: int) -> Callable[[HostileServer], Iterator[bytes]]:
    def blocks(server: HostileServer) -> Iterator[bytes]:
        yield f"retry: {value}\n\n".encode() + working_event() + b"\n\n"
    return blocks


# -- the cases -----------------------------------------------------------------------------

def _to_self(server: HostileServer, req: Request) -> str:
    return req.path


def _to_other(server: HostileServer, req: Request) -> str:
    return server.other.url + "/stolen" + req.path


#: case -> (where the hostility is: "card", "post" (JSON-RPC) or "any" (HTTP+JSON), handler)
CASES: dict[str, tuple[str, Handler]] = {
    "card-2g": ("card", huge_declared(2 * 1024 * MB)),
    "card-600m": ("card", huge_declared(600 * MB)),
    "card-600m-chunked": ("card", huge_chunked(600 * MB)),
    "card-one-2g-chunk": ("card", one_huge_chunk(2 * 1024 * MB)),
    "card-gzip-bomb": ("card", gzip_bomb(1024 * MB)),
    "card-deep": ("card", nested(100_000)),
    "card-short-silent": ("card", short(100_000, b'{"name": ', then_close=False)),
    "card-short-closed": ("card", short(100_000, b'{"name": ', then_close=True)),
    "card-half-closed": ("card", half_closed(after_head=False)),
    "card-half-closed-body": ("card", half_closed(after_head=True)),
    "card-slowloris": ("card", slowloris_body()),
    "card-slowloris-head": ("card", slowloris_head),
    "card-redirect-loop": ("card", redirect(_to_self)),
    "card-redirect-away": ("card", redirect(_to_other)),
    "card-redirect-file": ("card", redirect(lambda server, req: "file:///etc/passwd")),
    "send-600m": ("post", huge_declared(600 * MB)),
    "send-deep": ("post", nested(100_000)),
    "send-slowloris": ("post", slowloris_body()),
    "send-slowloris-head": ("post", slowloris_head),
    "send-redirect-away": ("post", redirect(_to_other, "307 Temporary Redirect")),
    "stream-comments": ("post", sse(_comments)),
    "stream-comment-trickle": ("post", sse(_comment_bytes, chunked=False)),
    "stream-event-100m": ("post", sse(_event_of(100 * MB))),
    "stream-event-400m": ("post", sse(_event_of(400 * MB), chunked=False)),
    "stream-event-400m-astral": ("post", sse(_astral_event_of(400 * MB))),
    "stream-slowloris-head": ("post", slowloris_head),
    "stream-broken": ("post", sse(_broken)),
    "stream-deep": ("post", sse(_deep_event)),
    "stream-retry-0": ("post", sse(_retry(0))),
    "stream-retry-huge": ("post", sse(_retry(10**12))),
    "stream-600m-declared": ("post", huge_declared(600 * MB)),
    "get-task-deep": ("post", nested(100_000)),
    "cancel-slowloris": ("post", slowloris_body()),
    "subscribe-comments": ("post", sse(_comments)),
    "rest-send-600m": ("any", huge_declared(600 * MB)),
    "rest-get-task-slowloris": ("any", slowloris_body()),
    "rest-get-task-deep": ("any", nested(100_000)),
    "rest-stream-comments": ("any", sse(_comments)),
    "rest-stream-event-400m": ("any", sse(_event_of(400 * MB), chunked=False)),
    "rest-stream-broken": ("any", sse(_broken)),
}


class HostileServer:
    """A thread per connection on 127.0.0.1; :meth:`close` ends them all."""

    def __init__(self, cases: dict[str, tuple[str, Handler]] | None = None,
                 tls: ssl.SSLContext | None = None) -> None:
        self.cases = CASES if cases is None else cases
        self.seen: list[Request] = []
        self._tls = tls
        self._listener = socket.create_server(("127.0.0.1", 0))
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stop = threading.Event()
        self._bombs: dict[int, bytes] = {}
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self.other: HostileServer = self  # another origin, set by the caller for redirects
        for _, handler in self.cases.values():
            if hasattr(handler, "bomb_size"):
                self.bomb(handler.bomb_size)
        self._thread = threading.Thread(target=self._accept, daemon=True, name="hostile")
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
        with self._lock:
            for conn in list(self._conns):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._thread.join(5)

    def hold(self, conn: socket.socket) -> None:
        """Keep a connection open, silent, until the client leaves or the server closes."""
        conn.settimeout(0.2)
        while not self._stop.is_set():
            try:
                if conn.recv(_BLOCK) == b"":
                    return
            except TimeoutError:
                continue
            except OSError:
                return

    def trickle(self, piece: bytes, pause: float) -> Iterator[bytes]:
        """``piece`` every ``pause`` seconds, for ever (until the server closes)."""
        while not self._stop.wait(pause):
            yield piece

    def bomb(self, size: int) -> bytes:
        """A gzip body that inflates to ``size`` bytes of JSON (made once)."""
        with self._lock:
            if size not in self._bombs:
                packer = zlib.compressobj(9, zlib.DEFLATED, 31)
                parts = [packer.compress(b'{"name": "')]
                parts += [packer.compress(block) for block in _padding(size)]
                self._bombs[size] = b"".join(parts) + packer.flush()
            return self._bombs[size]

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10)
            if self._tls is not None:
                conn = self._tls.wrap_socket(conn, server_side=True)
        except OSError:
            conn.close()
            return
        with self._lock:
            self._conns.add(conn)
        try:
            while not self._stop.is_set():
                req = _read_request(conn)
                if req is None:
                    return
                with self._lock:
                    self.seen.append(req)
                self._dispatch(conn, req)
        except OSError:
            pass
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def _dispatch(self, conn: socket.socket, req: Request) -> None:
        case, _, below = req.path.lstrip("/").partition("/")
        where, handler = self.cases.get(case, ("", _not_found))
        is_card = below.split("?")[0] == ".well-known/agent-card.json"
        hostile = (is_card if where == "card" else
                   req.method == "POST" and not below if where == "post" else
                   where == "any" and not is_card)
        if hostile:
            handler(self, conn, req)
            conn.close()
        elif is_card:
            binding = "HTTP+JSON" if case.startswith("rest-") else "JSONRPC"
            _answer(conn, card_json(f"{self.url}/{case}", binding))
        else:
            _not_found(self, conn, req)


def _not_found(server: HostileServer, conn: socket.socket, req: Request) -> None:
    _answer(conn, b"not here", "text/plain", "404 Not Found")


def _read_request(conn: socket.socket) -> Request | None:
    """The next request on the connection (None: the client left)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(_BLOCK)
        if not chunk or len(data) > 1 * MB:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = conn.recv(_BLOCK)
        if not chunk:
            return None
        body += chunk
    return Request(method, path, headers, body[:length])


if __name__ == "__main__":  # pragma: no cover - by hand: python tests/hostile/hostile_server.py
    server = HostileServer()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.close()
