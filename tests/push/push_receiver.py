"""A real webhook receiver on loopback: a werkzeug server in a thread, scriptable per test."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    """Records every POST. ``script`` maps a path to a list of answers, used in turn
    (the last one repeats): an int status, "hang" (hold the connection until the test
    ends), or a callable(request) -> Response."""

    url: str
    received: list[Received] = field(default_factory=list)
    script: dict[str, list[Any]] = field(default_factory=dict)
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.RLock = field(default_factory=threading.RLock)
    changed: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)

    def hits(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.path == path]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 0.05))  # predicates may watch more than hits
        return True

    def wait_hits(self, path: str, count: int, timeout: float = 10.0) -> list[Received]:
        self.wait_for(lambda: sum(r.path == path for r in self.received) >= count, timeout)
        return self.hits(path)

    def app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = Request(environ)
        body = request.get_data()
        with self.changed:
            self.received.append(Received(request.path, dict(request.headers), body,
                                          time.monotonic()))
            answers = self.script.get(request.path, [200])
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
            self.changed.notify_all()
        if answer == "hang":
            self.released.wait(30)
            answer = 200
        if callable(answer):
            return answer(request)(environ, start_response)
        return Response("ok", status=answer)(environ, start_response)


@pytest.fixture(name="receiver")
def receiver_fixture() -> Iterator[Receiver]:
    """Import ``receiver_fixture`` into a test module to use the ``receiver`` fixture."""
    holder: dict[str, Receiver] = {}

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        return holder["r"].app(environ, start_response)

    server = make_server("127.0.0.1", 0, app, threaded=True)
    holder["r"] = Receiver(url=f"http://127.0.0.1:{server.server_port}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield holder["r"]
    finally:
        holder["r"].released.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
