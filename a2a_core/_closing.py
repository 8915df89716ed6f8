"""One iterator wrapper whose ``close()`` reaches the producer behind a response body.

A WSGI server calls ``close()`` on the body it was given, also when the client went away.
A bare generator that never started skips its ``finally`` when closed, which would leave a
stream's producer (a store subscription, a stream place) held; this wrapper closes what it
was told to, whether or not iteration began.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar

__all__ = ["ClosingIterator", "close", "forwarded"]

T = TypeVar("T")


def close(iterator: object) -> None:
    """Call ``iterator.close()`` if it has one."""
    method = getattr(iterator, "close", None)
    if method is not None:
        method()


class ClosingIterator(Generic[T]):
    """``first``'s items, then ``items``'; ``close()`` closes ``items``, then ``also``.

    ``on_close`` runs once: when ``items`` is exhausted or raises, or at ``close()``
    (also before the first item), after everything else was closed.
    """

    __slots__ = ("_first", "_items", "_also", "_on_close", "_ended")

    def __init__(self, items: Iterator[T], *, first: Sequence[T] = (), also: object = None,
                 on_close: Callable[[], None] | None = None) -> None:
        self._first = list(reversed(first))
        self._items = items
        self._also = also
        self._on_close = on_close
        self._ended = False

    def __iter__(self) -> ClosingIterator[T]:
        return self

    def __next__(self) -> T:
        if self._first:
            return self._first.pop()
        try:
            return next(self._items)
        except BaseException:
            self._done()
            raise

    def close(self) -> None:
        self._first.clear()
        try:
            close(self._items)
        finally:
            try:
                close(self._also)
            finally:
                self._done()

    def adopt(self, on_close: Callable[[], None]) -> bool:
        """Take ``on_close`` as this iterator's own, if it has none and has not ended yet
        (then wrapping it in ``ClosingIterator(self, on_close=on_close)`` would only add a
        layer per item). False: it has one already, or it ended; wrap it instead."""
        if self._on_close is not None or self._ended:
            return False
        self._on_close = on_close
        return True

    def _done(self) -> None:
        self._ended = True
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()


def forwarded(items: Iterator[T]) -> tuple[list[T], Iterator[T]]:
    """``items``' pending first items and the iterator behind it, when ``items`` is a plain
    :class:`ClosingIterator` that only forwards (no ``also``, no ``on_close``, not ended);
    else ``([], items)``.

    A wrapper that is a ClosingIterator itself can take both and stand for the two: a held
    stream's wait then sits one frame shallower (each nested ``__next__`` also grows the
    saved C stack of a greenlet). Closing the wrapper closes the same
    iterator the forwarding one would have.
    """
    if (isinstance(items, ClosingIterator) and items.__class__ is ClosingIterator
            and items._also is None
            and items._on_close is None and not items._ended):
        return list(reversed(items._first)), items._items
    return [], items
