"""The adapter contract: a parsed HTTP request in, a response out.

A WSGI (or any other) adapter turns its request into :class:`HttpRequest`,
hands it to :meth:`a2a_core._server.Dispatcher.handle` and writes the
:class:`HttpResponse` back. The body of a streaming response is an iterator
of byte chunks; closing it stops the producer (the WSGI ``close()`` rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._observe import CallRecord
    from ._service import StreamHolder

__all__ = ["Headers", "HttpRequest", "HttpResponse", "is_simple_request_type"]

#: Request media types a browser sends cross-origin without a CORS preflight ("simple
#: requests"); A2A requires JSON, so a call in one of them can only be a confused or
#: hostile page.
_SIMPLE_REQUEST_TYPES = frozenset(
    {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}
)


def is_simple_request_type(content_type: str | None) -> bool:
    """Whether ``Content-Type`` (``Text/Plain; charset=utf-8`` and the like) is one a
    browser sends cross-origin without asking first; both bindings refuse those."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media in _SIMPLE_REQUEST_TYPES


class Headers:
    """A read-only, case-insensitive multi-map of header names to values."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[tuple[str, str]] | Mapping[str, str] = ()) -> None:
        # (a list, the usual argument, is told apart without the slower ABC check)
        pairs: Iterable[tuple[str, str]]
        if isinstance(items, list) or not isinstance(items, Mapping):
            pairs = items
        else:
            pairs = items.items()
        self._items: dict[str, list[str]] = {}
        for name, value in pairs:
            self._items.setdefault(name.lower(), []).append(value)

    @classmethod
    def of_lowercase(cls, items: dict[str, list[str]]) -> Headers:
        """Headers from their inner form: lower-case names -> values, in order (the dict
        is taken as it is, not copied). For an adapter that builds it in one pass."""
        headers = cls.__new__(cls)
        headers._items = items
        return headers

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of ``name``."""
        values = self._items.get(name.lower())
        return values[0] if values else default

    def get_all(self, name: str) -> list[str]:
        """Every value of ``name`` (repeated header lines), in order."""
        return list(self._items.get(name.lower(), ()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._items

    def __repr__(self) -> str:
        return f"Headers({sorted(self._items)})"


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpRequest:
    """One request, relative to where the app is mounted.

    ``path`` is the path below the mount point (WSGI ``PATH_INFO``), always
    starting with "/". ``body_too_large`` is set by an adapter that stopped
    reading at its size limit, so the dispatcher can answer with a clear error
    instead of a truncated body being parsed. ``client_gone`` is the adapter's
    way to tell whether the client has hung up (None: it cannot tell), so a
    request that waits can stop waiting for nobody. ``stream_holder`` is the
    adapter's offer to hold the request's stream while it waits
    (:class:`~a2a_core._service.StreamHolder`; None: no offer). ``record``, when
    the adapter observes its requests, is filled by the binding that answers
    (:mod:`a2a_core._observe`).
    """

    method: str
    path: str = "/"
    headers: Headers = field(default_factory=Headers)
    query: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    body_too_large: bool = False
    client_gone: Callable[[], bool] | None = None
    stream_holder: StreamHolder | None = field(default=None, compare=False, repr=False)
    record: CallRecord | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes | Iterator[bytes] = b""

    @property
    def is_stream(self) -> bool:
        return not isinstance(self.body, bytes)
