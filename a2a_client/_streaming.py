"""The streaming operations of :class:`~a2a_client.A2AClient`: SendStreamingMessage and
SubscribeToTask, each an :class:`~a2a_client._streams.EventStream`.

A mixin, so that ``client.py`` keeps discovery, the binding and sending. Every stream a
client opens holds the client's limits: ``event_timeout`` (seconds without an event;
comments and keep-alives do not count) and ``max_event_size`` (bytes of one event), so a
server that sends nothing but comments, or one endless event, ends the call with a typed
error instead of holding it or the client's memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from a2a_core.models import Message, PushNotificationConfig, StreamEvent, SubscribeToTaskRequest
from a2a_core.optable import AnyOperation, Operation

from ._sending import send_request
from ._streams import DEFAULT_EVENT_TIMEOUT, DEFAULT_MAX_EVENT_SIZE, EventStream
from ._tasks import TaskOperations
from ._transport import Reply

__all__ = ["StreamOperations"]


class StreamOperations(TaskOperations):
    """SendStreamingMessage and SubscribeToTask (and, inherited, the task operations)."""

    #: Resubscriptions in a row without progress before a stream gives up, and the
    #: seconds before one (times the attempt number); the client sets them.
    max_reconnects: int = 3
    reconnect_delay: float = 0.5
    #: Seconds a stream may hand on no event (None: only the idle read timeout bounds it).
    event_timeout: float | None = DEFAULT_EVENT_TIMEOUT
    #: The longest event (and line) a stream reads, in bytes of UTF-8.
    max_event_size: int = DEFAULT_MAX_EVENT_SIZE

    def _open_stream(self, op: AnyOperation, request: object,
                     last_event_id: str | None = None) -> Reply:
        """Opens one SSE answer of the operation; the client supplies it."""
        raise NotImplementedError

    def _event_decoder(self) -> Callable[[Any], StreamEvent]:
        """The JSON of one event -> the event, for the binding in use; the client supplies it."""
        raise NotImplementedError

    def _stream(self, op: AnyOperation, request: object) -> EventStream:
        """An EventStream that resubscribes with SubscribeToTask and falls back to GetTask."""
        return EventStream(
            lambda: self._open_stream(op, request),
            self._event_decoder(),
            reopen=lambda task_id, last_id: self._open_stream(
                Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task_id), last_id
            ),
            fetch=self.get_task,
            max_reconnects=self.max_reconnects,
            reconnect_delay=self.reconnect_delay,
            event_timeout=self.event_timeout,
            max_event_size=self.max_event_size,
        )

    def stream_message(
        self,
        message: str | Message | Mapping[str, Any],
        *,
        context_id: str | None = None,
        task_id: str | None = None,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        push_notification_config: PushNotificationConfig | Mapping[str, Any] | str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> EventStream:
        """SendStreamingMessage (``message/stream``): an iterator of typed events.

        A dropped connection is resumed with SubscribeToTask; see :class:`EventStream`.
        """
        request = send_request(
            message,
            context_id=context_id,
            task_id=task_id,
            blocking=True,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_notification_config=push_notification_config,
            metadata=metadata,
        )
        return self._stream(Operation.SEND_STREAMING_MESSAGE, request)

    def subscribe(self, task_id: str) -> EventStream:
        """SubscribeToTask (``tasks/resubscribe``): events of a running task."""
        return self._stream(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task_id))

    #: The 0.3 name of :meth:`subscribe`.
    resubscribe = subscribe
