"""The seam between protocol dispatch and whatever runs agents.

:class:`~a2a_core._server.Dispatcher` speaks HTTP and JSON-RPC and knows both
wire versions; an :class:`A2AService` (the WSGI server's runtime, or a test
double that is a real implementation) only sees typed requests and returns
typed results. It never sees a method name, a version or a JSON shape.

Authorization is decided by :class:`~a2a_core._operations.Operations` (it
fetches the task with :meth:`A2AService.get_task`, asks the ``authorize_task``
callback, then calls the operation), so a service need not repeat it; it
still receives the caller's identity in :class:`CallContext` to scope what it
stores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from . import models
from ._jsonvalue import JSONValue

__all__ = [
    "CallContext",
    "OutboundEvent",
    "Heartbeat",
    "HEARTBEAT",
    "Idle",
    "IDLE",
    "StreamHolder",
    "StreamItem",
    "Wakeup",
    "A2AService",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    """What the binding and the call pipeline learned about one call, for every service method."""

    #: The negotiated protocol version ("0.3" or "1.0").
    version: str
    #: Merged metadata: static <- per-request <- params.metadata (later wins),
    #: with the authenticated identity under "a2a.auth". None when empty. Not
    #: only JSON: the static and per-request layers and the identity are the
    #: deployment's Python objects.
    metadata: Mapping[str, object] | None = None
    #: URI -> activation value of each activated extension, in configured order.
    extensions: Mapping[str, object] = field(default_factory=dict)
    #: Whatever the deployment authenticated the caller as (None: anonymous).
    identity: object = None
    #: Tenant from the request params (1.0), or set by the deployment.
    tenant: str | None = None
    #: The raw JSON-RPC params (for authorize_task's context and extension hooks).
    params: Mapping[str, JSONValue] = field(default_factory=dict)
    #: ``Last-Event-ID`` the client sent when reconnecting a stream.
    last_event_id: str | None = None
    #: The public URL of the app's root for this request (after per-request overrides);
    #: the card adds ``json_rpc_path`` and ``rest_path`` to it.
    base_url: str | None = None
    #: True once the client has hung up (None: the adapter cannot tell); a
    #: service that waits checks it so it never waits for nobody.
    client_gone: Callable[[], bool] | None = None
    #: The task the call names, as Operations read and authorized it through this service
    #: (cancel, push configs); a service may answer from it instead of reading it again.
    task: models.Task | None = None
    #: The server's offer to hold this call's stream while it waits (None: no offer; a
    #: stream waits where it runs). See :class:`StreamHolder`.
    stream_holder: StreamHolder | None = None


@dataclass(frozen=True, slots=True)
class OutboundEvent:
    """A stream event with the id it is sent under (the SSE ``id:`` field).

    ``more``: the next event is already at hand (the rest of one batch read from the
    log), so a writer may hold this one back and send both in one write.
    """

    event: models.StreamEvent
    event_id: str | None = None
    more: bool = False


class Heartbeat:
    """Yielded by a stream while idle; sent as an SSE comment so proxies keep the stream."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "HEARTBEAT"


HEARTBEAT = Heartbeat()


class Idle:
    """Yielded by a held stream (:class:`StreamHolder`) that has nothing to send now,
    instead of waiting: framed as nothing, an empty write. Never yielded otherwise."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "IDLE"


IDLE = Idle()

#: What a streaming service method yields.
StreamItem = models.StreamEvent | OutboundEvent | Heartbeat | Idle


class Wakeup(Protocol):
    """What a held stream sleeps on: whoever has news for it calls :meth:`set`."""

    def set(self) -> None:
        """The stream's next item may be ready: its server takes it (soon, elsewhere)."""
        ...

    def clear(self) -> None:
        """The stream is about to sleep: forget earlier wake-ups."""
        ...


class StreamHolder(Protocol):
    """A server's offer to hold a call's stream while it waits between items, so that
    a waiting stream costs the server no thread or task of its own.

    The adapter passes it with the request (``HttpRequest.stream_holder``); the call
    hands it on in ``CallContext.stream_holder``. A service whose stream sleeps between
    items may take it up once, when it makes the stream (before the first item is
    taken): :meth:`hold` gives it its :class:`Wakeup`. From then on, when the stream
    has nothing to send, it clears the wakeup, arranges for it to be set when its next
    item may be ready (an event, a deadline, the client hanging up, the server
    stopping) and yields :data:`IDLE` instead of waiting. The server takes the next
    item once the wakeup is set; the stream never blocks in ``next()``. A stream that
    does not take the offer is written by the server as any other.
    """

    def hold(self) -> Wakeup | None:
        """Take the offer: this call's stream sleeps on the wakeup returned. None: the
        offer stands no more (the server writes the stream already); it waits where it
        runs."""
        ...


class A2AService(Protocol):
    """The operations behind the JSON-RPC methods, in typed form.

    Errors are raised as :mod:`a2a_core.errors` classes (``TaskNotFoundError``
    …); anything else becomes an InternalError without leaking its text.
    """

    def agent_card(self) -> models.AgentCard:
        """The public card; the card endpoint fills in its interfaces when empty."""
        ...

    def extended_agent_card(self, ctx: CallContext) -> models.AgentCard:
        """Raise ExtendedAgentCardNotConfiguredError when there is none."""
        ...

    def send_message(
        self, request: models.SendMessageRequest, ctx: CallContext
    ) -> models.Task | models.Message:
        """Blocking unless ``request.configuration.blocking`` is False."""
        ...

    def send_streaming_message(
        self, request: models.SendMessageRequest, ctx: CallContext
    ) -> Iterator[StreamItem]:
        """Task (or one Message) first, then updates; closing the iterator stops listening."""
        ...

    def get_task(self, task_id: str, ctx: CallContext) -> models.Task:
        """The full task (Operations trims its history); TaskNotFoundError if unknown."""
        ...

    def list_tasks(
        self, request: models.ListTasksRequest, ctx: CallContext
    ) -> models.ListTasksResponse:
        """Filtered, newest first, paged; Operations trims history and artifacts."""
        ...

    def cancel_task(self, request: models.CancelTaskRequest, ctx: CallContext) -> models.Task:
        ...

    def subscribe_to_task(
        self, request: models.SubscribeToTaskRequest, ctx: CallContext
    ) -> Iterator[StreamItem]:
        """Current task first, then each change; ends at a terminal state."""
        ...

    def create_push_config(
        self, config: models.TaskPushNotificationConfig, ctx: CallContext
    ) -> models.TaskPushNotificationConfig:
        ...

    def get_push_config(
        self, request: models.GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> models.TaskPushNotificationConfig:
        ...

    def list_push_configs(
        self, request: models.ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> models.ListTaskPushNotificationConfigsResponse:
        ...

    def delete_push_config(
        self, request: models.DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> None:
        ...
