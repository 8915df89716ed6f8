"""After many streams have ended, the watcher hands their memory back once streams stay gone."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from a2a_wsgi import _stalled_writes as stalled_writes
from a2a_wsgi._stalled_writes import StalledWrites


@pytest.fixture
def released(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """When the test's watcher released memory; its checks made quick."""
    calls: list[float] = []
    monkeypatch.setattr(stalled_writes, "CHECK_EVERY", 0.02)
    monkeypatch.setattr(stalled_writes, "RELEASE_QUIET", 0.3)
    return calls


def _streams(watcher: StalledWrites, count: int) -> None:
    """``count`` streams opened and read to their end on a real socket."""
    left, right = socket.socketpair()
    try:
        for _ in range(count):
            body: Iterator[bytes] = watcher.watch(iter([b"data: x\n\n"]),
                                                  {"gunicorn.socket": left})
            assert list(body) == [b"data: x\n\n"]
            body.close()  # type: ignore[attr-defined]
    finally:
        left.close()
        right.close()


def _wait_for(condition: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():  # type: ignore[operator]
        time.sleep(0.01)


def test_memory_is_released_only_after_streams_stay_gone(released: list[float]) -> None:
    watcher = StalledWrites(30.0, release=lambda: released.append(time.monotonic()))
    _streams(watcher, stalled_writes.RELEASE_AFTER)
    ended = time.monotonic()
    # Short gaps between bursts: a busy worker at no open stream for an instant.
    for _ in range(3):
        time.sleep(0.1)
        _streams(watcher, 1)
    assert released == []
    last = time.monotonic()
    _wait_for(lambda: released, 5)
    assert len(released) == 1
    assert released[0] - last >= 0.3 - 0.05 and released[0] - ended >= 0.6
    time.sleep(0.2)
    assert len(released) == 1  # once; the watcher has ended


def test_few_ended_streams_release_nothing(released: list[float]) -> None:
    watcher = StalledWrites(30.0, release=lambda: released.append(time.monotonic()))
    _streams(watcher, 3)
    time.sleep(0.6)
    assert released == [] and watcher.open_count() == 0
