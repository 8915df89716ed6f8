"""ClosingIterator: the one wrapper every streamed body is closed through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from a2a_core._closing import ClosingIterator


def _producer(log: list[str], name: str, items: tuple[int, ...] = (1, 2)) -> Iterator[int]:
    log.append(f"{name} started")
    try:
        yield from items
    finally:
        log.append(f"{name} closed")


class _Closable:
    def __init__(self, log: list[str], fail: bool = False) -> None:
        self.log, self.fail = log, fail

    def close(self) -> None:
        self.log.append("also closed")
        if self.fail:
            raise RuntimeError("close failed")


def test_close_before_the_first_item_closes_everything_and_runs_on_close_once() -> None:
    log: list[str] = []
    body = ClosingIterator(iter([1]), also=_Closable(log), on_close=lambda: log.append("done"))
    body.close()
    body.close()
    assert log == ["also closed", "done", "also closed"]


def test_a_started_producer_is_closed_then_also() -> None:
    log: list[str] = []
    body = ClosingIterator(_producer(log, "frames"), also=_Closable(log))
    assert next(body) == 1
    body.close()
    assert log == ["frames started", "frames closed", "also closed"]


def test_first_items_come_first_and_exhaustion_runs_on_close() -> None:
    log: list[str] = []
    body = ClosingIterator(iter([2, 3]), first=(0, 1), on_close=lambda: log.append("done"))
    assert list(body) == [0, 1, 2, 3]
    assert log == ["done"]


def test_an_error_from_the_producer_runs_on_close_and_propagates() -> None:
    log: list[str] = []

    def failing() -> Iterator[int]:
        yield 1
        raise ValueError("boom")

    body = ClosingIterator(failing(), on_close=lambda: log.append("done"))
    assert next(body) == 1
    with pytest.raises(ValueError, match="boom"):
        next(body)
    assert log == ["done"]


def test_on_close_runs_even_when_closing_also_fails() -> None:
    log: list[str] = []
    body = ClosingIterator(iter([1]), also=_Closable(log, fail=True),
                           on_close=lambda: log.append("done"))
    with pytest.raises(RuntimeError, match="close failed"):
        body.close()
    assert log == ["also closed", "done"]
