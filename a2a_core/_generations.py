"""Task generations, the A2A dev-1.1 preview, negotiated as an extension.

dev-1.1 (not yet released) adds ``Task.generation`` (+1 per state or artifact change,
from 1; the same value on the status and artifact update events of that change), a
long-poll ``GetTaskRequest.currentGeneration`` and ``ifGenerationMatch`` on a send
(-32010 on a mismatch). A server that turns the preview on declares
:data:`GENERATIONS_EXTENSION_URI` in its card; a 1.0 request that lists it in
``A2A-Extensions`` gets the fields, every other request (0.3, or 1.0 without it) gets
exactly the wire it got before: :func:`hidden` takes the fields out of what it is
answered, :func:`ignored` out of what it asked. Why an extension rather than a "1.1"
interface: docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any, Protocol, TypeVar, runtime_checkable

from ._closing import ClosingIterator, forwarded
from ._service import CallContext, OutboundEvent, StreamItem
from ._versioning import V1_0
from .extensions import Activation, Extension
from .models import (
    GetTaskRequest,
    ListTasksResponse,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)

__all__ = [
    "GENERATIONS_EXTENSION_URI",
    "GenerationWaiter",
    "GenerationsExtension",
    "hidden",
    "hidden_items",
    "ignored",
    "negotiated",
    "without_generations",
]

#: The URI a client requests (and the card declares) to get the dev-1.1 generation fields.
GENERATIONS_EXTENSION_URI = "urn:a2a:preview:dev-1.1:task-generations"

T = TypeVar("T")


class GenerationsExtension(Extension):
    """Declared in the card; activated for 1.0 requests only (0.3 has no such fields)."""

    uri = GENERATIONS_EXTENSION_URI
    description = (
        "A2A dev-1.1 preview: Task.generation, long-poll GetTask (currentGeneration), "
        "SendMessageConfiguration.ifGenerationMatch (-32010 TaskGenerationMismatchError)"
    )

    def activate(
        self, requested: tuple[str, ...], context: Mapping[str, object]
    ) -> Activation | None:
        return Activation(uri=self.uri) if context.get("version") == V1_0 else None


@runtime_checkable
class GenerationWaiter(Protocol):
    """A service that can hold a GetTask until the task's generation moves."""

    def task_after_generation(self, task_id: str, generation: int, ctx: CallContext) -> Task:
        """The task once its generation differs from ``generation``, or at a bounded timeout."""
        ...


def negotiated(ctx: CallContext) -> bool:
    """This call asked for the preview and the server serves it."""
    return GENERATIONS_EXTENSION_URI in ctx.extensions


def hidden(value: T, ctx: CallContext) -> T:
    """``value`` without generations unless the call negotiated them (Task, event, page)."""
    if negotiated(ctx):
        return value
    shown: T = without_generations(value)  # (Any: no cast() call on every answer)
    return shown


#: The stream events that carry a generation (exactly these classes: the fast path).
_STAMPED: frozenset[Any] = frozenset((Task, TaskStatusUpdateEvent, TaskArtifactUpdateEvent))


def without_generations(value: Any) -> Any:
    """``value`` (Task, event, page, OutboundEvent) with its generations taken out."""
    if isinstance(value, (Task, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)):
        return value if value.generation is None else replace(value, generation=None)
    if isinstance(value, ListTasksResponse):
        return replace(value, tasks=[without_generations(t) for t in value.tasks])
    if isinstance(value, OutboundEvent):
        event = without_generations(value.event)
        return value if event is value.event else replace(value, event=event)
    return value


def hidden_items(items: Iterator[StreamItem], ctx: CallContext) -> Iterator[StreamItem]:
    """A stream's items, without generations unless the call negotiated them."""
    if negotiated(ctx):
        return items
    # a forwarding ClosingIterator (started()'s, holding the first item) is taken apart:
    # _Stripped gives its first items and closes its iterator, one layer instead of two
    first, inner = forwarded(items)
    return _Stripped(inner, first=first)


class _Stripped(ClosingIterator[StreamItem]):
    """Each item without its generation; ``close()`` closes ``items`` even unstarted.

    A :class:`ClosingIterator` (its ``close()``, ``on_close`` and ``adopt``), so the stream
    place's release can ride on it instead of wrapping it.
    """

    __slots__ = ()

    def __next__(self) -> StreamItem:
        # without_generations() inlined for the usual items (a stamped event, bare or with
        # its id): no call per item beyond this one, on the stream's hot path
        try:
            item: Any = self._first.pop() if self._first else next(self._items)
            outbound = item.__class__ is OutboundEvent
            event: Any = item.event if outbound else item
            if event.__class__ not in _STAMPED:  # anything else (a message, a heartbeat)
                shown: StreamItem = without_generations(item)
                return shown
            if event.generation is not None:
                stripped: Any = replace(event, generation=None)
                item = replace(item, event=stripped) if outbound else stripped
            kept: StreamItem = item
            return kept
        except BaseException:  # exhausted or raised: on_close runs (as ClosingIterator's)
            self._done()
            raise


def ignored(request: T, ctx: CallContext) -> T:
    """The request without its preview fields unless the call negotiated them."""
    if negotiated(ctx):
        return request
    if isinstance(request, SendMessageRequest):
        config = request.configuration
        if config is not None and config.if_generation_match is not None:
            config = replace(config, if_generation_match=None)
            return replace(request, configuration=config)
    elif isinstance(request, GetTaskRequest) and request.current_generation is not None:
        return replace(request, current_generation=None)
    return request
