"""What the runtime reports: the agent's span, task transitions, queued webhook POSTs."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from a2a_core._tasks import TransitionEvent

from ._trace import current_traceparent, otel

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ..stores._base import OutboxEntry

__all__ = ["TASKS_LOGGER", "agent_raised", "agent_span", "outbox_written", "task_transition",
           "traced_outbox", "transitions_wanted"]

TASKS_LOGGER = "a2a_wsgi.tasks"
TRACEPARENT_HEADER = "traceparent"

log = logging.getLogger(TASKS_LOGGER)

_NO_SPAN = nullcontext()


def agent_span(agent: str | None, task_id: str,
               context_id: str | None) -> AbstractContextManager[Any]:
    """A span around one agent call, current while the agent runs (nothing without
    OpenTelemetry)."""
    if otel is None or not otel.listening():  # a no-op span would change nothing
        return _NO_SPAN
    return _agent_span(agent, task_id, context_id)


@contextmanager
def _agent_span(agent: str | None, task_id: str, context_id: str | None) -> Iterator[Any]:
    attributes = {"a2a.task_id": task_id, "a2a.context_id": context_id, "a2a.agent": agent}
    span = otel.start("A2A handle_message", otel.INTERNAL,
                      {k: v for k, v in attributes.items() if v is not None})
    token = otel.activate(span)
    try:
        yield span
    except BaseException as exc:
        otel.failed(span, exc)
        raise
    finally:
        otel.deactivate(token)
        span.end()


def agent_raised(exc: BaseException) -> None:
    """The agent raised (the runtime turns it into a failed task): the agent's span says so."""
    if otel is None:
        return
    otel.failed(otel.current_span(), exc)


def transitions_wanted() -> bool:
    """Whether :func:`task_transition` would log or count anything now (else a caller
    need not build the transitions it would pass)."""
    return log.isEnabledFor(logging.INFO) or (otel is not None and otel.listening())


def task_transition(transition: TransitionEvent) -> None:
    """One line on ``a2a_wsgi.tasks`` per state change, counted by the state entered."""
    logged = log.isEnabledFor(logging.INFO)
    metered = otel is not None and otel.listening()
    if not (logged or metered):  # nobody listens: nothing to spell out
        return
    old = transition.from_state.value if transition.from_state is not None else None
    new = transition.to_state.value
    if logged:
        trace = current_traceparent()
        fields = {"task_id": transition.task_id, "from_state": old, "to_state": new,
                  "trace_id": trace.trace_id if trace is not None else None}
        log.info("task %s %s -> %s", transition.task_id, old or "(new)", new, extra=fields)
    if metered:
        otel.task_states.add(1, {"a2a.task.state": new})
        span = otel.current_span()
        if span.is_recording():
            span.add_event("a2a.task.transition", {"a2a.task_id": transition.task_id,
                                                   "a2a.task.state": new})


def traced_outbox(entries: Sequence[OutboxEntry]) -> Sequence[OutboxEntry]:
    """``entries`` with this thread's ``traceparent`` among their headers, so each webhook
    POST, whenever and wherever it is sent, joins the trace that caused it."""
    trace = current_traceparent()
    if trace is None or not entries:
        return entries
    header = (TRACEPARENT_HEADER, trace.header())
    return tuple(dataclasses.replace(e, headers=(*e.headers, header)) for e in entries)


def outbox_written(count: int) -> None:
    """``count`` webhook POSTs were queued (the backlog metric; sent ones are taken off)."""
    if otel is not None and count and otel.listening():
        otel.push_backlog.add(count)
