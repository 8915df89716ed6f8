"""Telemetry: access and task log lines, and OpenTelemetry spans and metrics when installed.

* :func:`observe` wraps the handling of one WSGI request: one line on the
  ``a2a_wsgi.access`` logger when the answer is done (a stream: when it
  ends), a span for the request, the request metrics. The app carries
  :func:`call_record` on its :class:`~a2a_core._http.HttpRequest` so the
  bindings can say what the call was.
* The runtime reports each task transition (:func:`task_transition`, on
  ``a2a_wsgi.tasks``), runs the agent in :func:`agent_span`, carries the
  trace to its pool (:func:`carry`) and into queued webhook POSTs
  (:func:`traced_outbox`); the push worker sends each in a
  :class:`PushAttempt`.

OpenTelemetry (the ``otel`` extra) is used when ``opentelemetry`` can be
imported; otherwise nothing of it is imported and only the log lines are
written. A caller's W3C ``traceparent`` is honoured either way. See
``docs/telemetry.md``.
"""

from __future__ import annotations

from ._access import (
    ACCESS_LOGGER,
    RECORD_KEY,
    REQUEST_ID_HEADER,
    call_record,
    observe,
    request_id,
    unobserved,
)
from ._push import PushAttempt, push_settled
from ._runtime import (
    TASKS_LOGGER,
    TRACEPARENT_HEADER,
    agent_raised,
    agent_span,
    outbox_written,
    task_transition,
    traced_outbox,
    transitions_wanted,
)
from ._trace import carry, current_traceparent, otel

__all__ = [
    "ACCESS_LOGGER",
    "OTEL_ENABLED",
    "PushAttempt",
    "RECORD_KEY",
    "REQUEST_ID_HEADER",
    "TASKS_LOGGER",
    "TRACEPARENT_HEADER",
    "agent_raised",
    "agent_span",
    "call_record",
    "carry",
    "current_traceparent",
    "observe",
    "request_id",
    "outbox_written",
    "push_settled",
    "task_transition",
    "traced_outbox",
    "transitions_wanted",
    "unobserved",
]

#: Whether OpenTelemetry was importable (spans and metrics are made).
OTEL_ENABLED = otel is not None
