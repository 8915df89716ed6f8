"""Waiting for a task to settle as fast as the agent allows, with no setting to choose.

:func:`wait_until_settled` takes, in order, the best path the agent offers:

1. **long-poll** GetTask, when the agent serves task generations (``long_poll`` given):
   each request is held by the server until the task changes, so a change is learned at
   once and an idle task costs one request per hold;
2. a **SubscribeToTask stream**, when the card declares streaming (``subscribe`` given):
   the task's own events, then one GetTask for the full settled task (its artifacts);
   any failure of the stream falls back to polling from the last snapshot seen;
3. **polling** (:func:`~a2a_client._polling.wait_for_task`, ``poll`` given with the caller's
   intervals), short intervals first.

A snapshot already in hand (the send's answer) is checked first, so an agent that
answers at once costs no request of waiting at all. ``cancel`` and ``timeout`` are
honoured on every path: a stream is aborted from a timer, a long-poll hold never
outlasts the budget left.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from a2a_core._generations import GENERATIONS_EXTENSION_URI
from a2a_core.errors import RemoteProtocolError, RPCError, UnsupportedOperationError
from a2a_core.models import AgentCard, GetTaskRequest, Task, TaskStatusUpdateEvent
from a2a_core.optable import Operation

from ._bindings import GRPC, HTTP_JSON
from ._cards import Endpoint
from ._channel import Channel
from ._errors import HTTPStatusError, ReadTimeout, TransportError, WaitTimeout
from ._polling import DEFAULT_WAIT_TIMEOUT, is_settled, wait_for_task
from ._rest import RestChannel
from ._rpc import RPCChannel
from ._streams import EventStream
from ._transport import Timeout, Transport

__all__ = ["LongPoll", "Poll", "Subscribe", "known_card", "preview_long_poll",
           "wait_until_settled"]

log = logging.getLogger("a2a_client")

#: Opens SubscribeToTask for a task id.
Subscribe = Callable[[str], EventStream]
#: (last snapshot, seconds left) -> the next snapshot, held by the server until it changes.
LongPoll = Callable[[Task, float], Task]


class Poll(Protocol):
    """Polling GetTask until the task settles: :func:`~a2a_client._polling.wait_for_task`
    with its task and intervals bound (``functools.partial``)."""

    def __call__(self, *, first: Task | None, timeout: float,
                 on_update: Callable[[Task, float], None], cancel: threading.Event) -> Task: ...


#: The longest hold a server is expected to make (ours: 30 s); a read waits a little more.
_LONGEST_HOLD = 30.0

#: Failures after which a faster path gives way to the next one (never the caller's own).
_PATH_FAILURES = (TransportError, HTTPStatusError, RPCError, RemoteProtocolError)


@dataclasses.dataclass
class _Progress:
    """The last snapshot and the caller's callback, shared by the paths."""

    start: float
    clock: Callable[[], float]
    on_update: Callable[[Task, float], None] | None
    task: Task | None = None

    def elapsed(self) -> float:
        return self.clock() - self.start

    def see(self, task: Task) -> None:
        """A new snapshot: remember it and tell the caller (once per snapshot)."""
        if task is self.task:
            return
        self.task = task
        if self.on_update is not None:
            self.on_update(task, self.elapsed())


def known_card(held: AgentCard | None, fetch: Callable[[], AgentCard] | None) -> AgentCard | None:
    """The card in hand, else fetched once; None when there is none to read."""
    if held is not None or fetch is None:
        return held
    try:
        return fetch()
    except (TransportError, HTTPStatusError, RemoteProtocolError):
        return None  # no card: polling still works against a pinned endpoint


def preview_long_poll(
    card: AgentCard | None,
    transport: Transport,
    endpoint: Endpoint,
    extensions: tuple[str, ...],
    timeout: Timeout,
    history_length: int | None,
) -> LongPoll | None:
    """Long-poll GetTask when the card declares the generation preview and we speak 1.0.

    The preview's extension is requested on these calls only, through a channel of
    their own. A snapshot without a generation is asked with 0, which the server
    answers at once with one (dev-1.1: 0 means "not known").
    """
    if card is None or endpoint.version != "1.0" or endpoint.binding == GRPC:
        return None  # (the proto's GetTaskRequest has no generation: no long-poll over gRPC)
    if GENERATIONS_EXTENSION_URI not in {e.uri for e in card.capabilities.extensions}:
        return None
    make = RestChannel if endpoint.binding == HTTP_JSON else RPCChannel
    preview: Channel = make(transport, lambda: endpoint, (*extensions, GENERATIONS_EXTENSION_URI))

    def long_poll(task: Task, left: float) -> Task:
        request = GetTaskRequest(id=task.id, history_length=history_length,
                                 current_generation=task.generation or 0)
        # The server's hold is bounded; ours too, by the budget left (then we ask again).
        read = min(max(timeout[1], _LONGEST_HOLD + 5.0), left + 0.5)
        try:
            answer = preview.call(Operation.GET_TASK, request, (timeout[0], read))
        except ReadTimeout:
            return task
        if not isinstance(answer, Task) or answer.generation is None:
            raise RemoteProtocolError("a long-poll GetTask was answered without a generation")
        return answer

    return long_poll


def wait_until_settled(
    task_id: str,
    get_task: Callable[[], Task],
    *,
    first: Task | None = None,
    subscribe: Subscribe | None = None,
    long_poll: LongPoll | None = None,
    poll: Poll | None = None,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    on_update: Callable[[Task, float], None] | None = None,
    cancel: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Task:
    """The first settled snapshot of ``task_id`` (see the module docstring).

    :param poll: the last path; by default ``wait_for_task`` on ``get_task`` with its
        default intervals.
    :raises WaitTimeout: ``timeout`` passed first (``.task`` is the last snapshot).
    """
    stop = cancel if cancel is not None else threading.Event()
    progress = _Progress(clock(), clock, on_update)
    if first is not None:
        progress.see(first)
        if is_settled(first):
            return first
    if long_poll is not None:
        try:
            return _long_poll(long_poll, get_task, progress, timeout, stop)
        except _PATH_FAILURES as exc:
            log.info("long-poll GetTask failed (%s); waiting by other means", exc)
    if subscribe is not None:
        try:
            settled = _follow(task_id, subscribe, get_task, progress, timeout, stop)
        except _PATH_FAILURES as exc:
            # Often the task finished before we subscribed (-32004): ask at once. That is
            # the expected race, so it is logged for debugging only; other failures at INFO.
            level = logging.DEBUG if isinstance(exc, UnsupportedOperationError) else logging.INFO
            log.log(level, "stream for task %s failed (%s); polling instead", task_id, exc)
            progress.see(get_task())
            settled = None
        if settled is not None:
            return settled
    if poll is None:
        poll = functools.partial(wait_for_task, get_task)
    return _poll(poll, progress, timeout, stop)


def _long_poll(
    long_poll: LongPoll,
    get_task: Callable[[], Task],
    progress: _Progress,
    timeout: float,
    stop: threading.Event,
) -> Task:
    """Held GetTasks until the task settles (a hold that times out just asks again)."""
    if progress.task is None:
        progress.see(get_task())
    while True:
        task = progress.task
        assert task is not None
        if is_settled(task) or stop.is_set():
            return task
        left = timeout - progress.elapsed()
        if left <= 0:
            raise WaitTimeout(task, progress.elapsed())
        progress.see(long_poll(task, left))


def _follow(
    task_id: str,
    subscribe: Subscribe,
    get_task: Callable[[], Task],
    progress: _Progress,
    timeout: float,
    stop: threading.Event,
) -> Task | None:
    """The task's stream until it settles; None when the stream ended without that."""
    stream = subscribe(task_id)
    finished = threading.Event()
    watcher = threading.Thread(
        target=_abort_when, args=(stream, stop, finished, progress, timeout), daemon=True
    )
    watcher.start()
    try:
        for event in stream:
            if isinstance(event, Task):
                progress.see(event)
                if is_settled(event):
                    return event
            elif isinstance(event, TaskStatusUpdateEvent):
                known = progress.task or Task(id=task_id, context_id=event.context_id,
                                              status=event.status)
                progress.see(dataclasses.replace(known, status=event.status))
                if is_settled(progress.task or known):
                    # The events carried the state; the full task (artifacts) is one GetTask.
                    stream.close()
                    progress.see(get_task())
                    return progress.task
    except _PATH_FAILURES:
        if not (stop.is_set() or progress.elapsed() >= timeout):
            raise
    finally:
        finished.set()
        stream.close()
        watcher.join()
    last = progress.task
    if last is not None and stop.is_set():
        return last
    if last is not None and progress.elapsed() >= timeout:
        raise WaitTimeout(last, progress.elapsed())
    return None


def _abort_when(
    stream: EventStream,
    stop: threading.Event,
    finished: threading.Event,
    progress: _Progress,
    timeout: float,
) -> None:
    """Abort the stream when the caller cancels or the budget runs out (a watcher thread)."""
    while not finished.is_set():
        left = timeout - progress.elapsed()
        if left <= 0 or stop.wait(min(left, 0.05)):
            stream.abort()
            return


def _poll(poll: Poll, progress: _Progress, timeout: float, stop: threading.Event) -> Task:
    """Polling from the last snapshot, within what is left of the budget."""
    try:
        return poll(
            first=progress.task,
            timeout=max(0.0, timeout - progress.elapsed()),
            on_update=lambda task, _elapsed: progress.see(task),
            cancel=stop,
        )
    except WaitTimeout as exc:
        raise WaitTimeout(exc.task, progress.elapsed()) from None
