"""An agent whose runs execute on Celery workers, not in the web server (docs/work-tier.md).

    .venv/bin/pip install -e '.[celery]'
    celery -A examples.celery_agent:celery worker                 # the work tier
    a2a serve examples.celery_agent:app --workers 2               # the web tier

(``-A`` names ``:celery``: given a bare module, Celery takes its ``app`` attribute,
which here is the A2AApp.)

``app`` is the A2AApp (the web tier serves it; the workers run its agent) and
``celery`` the Celery application. A deploy of the web tier never stops a run:
the web processes only store tasks, queue their runs and follow the store.

A message's first text part picks what the agent does, as ``benchmarks/apps/ours.py``'s:
``stream N`` (N chunks), ``slow MS`` (sleep MS milliseconds, then echo), ``hold``
(WORKING until canceled), ``ask`` (input-required, then echoes the answer);
anything else is echoed back.

Environment: ``A2A_CELERY_BROKER`` (default ``amqp://guest:guest@127.0.0.1:5672//``;
``redis://127.0.0.1:6379/0`` works too), ``A2A_CELERY_QUEUE`` (default ``a2a``),
``A2A_STORE`` (default: the SQLite file ``$A2A_DB``, else ``./a2a-tasks.sqlite3``;
``postgresql://...`` when the tiers run on several hosts), ``A2A_BASE_URL``,
``A2A_LEASE_SECONDS`` (default 30: how soon a run whose worker died is re-run or failed),
``A2A_CANCEL_GRACE`` (default 30: seconds a canceled run may go on before its pool process
is killed; docs/work-tier.md, "Revoke is the backstop").
``A2A_PUSH_LOOPBACK=1`` lets push notifications go to loopback webhooks (local
trials only: the default policy refuses them).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

from celery import Celery

from a2a_core.models import AgentSkill, Message, TaskState, TextPart
from a2a_wsgi import A2AApp, Agent, AgentContext, input_required, reply, stream, working
from a2a_wsgi._agent import Outcome
from a2a_wsgi.celery_executor import CeleryExecutor
from a2a_wsgi.push import PushSettings, UrlPolicy
from a2a_wsgi.settings import RuntimeSettings

__all__ = ["CeleryEchoAgent", "app", "celery"]

BROKER = os.environ.get("A2A_CELERY_BROKER", "amqp://guest:guest@127.0.0.1:5672//")
QUEUE = os.environ.get("A2A_CELERY_QUEUE", "a2a")
#: Seconds a run's lease lasts: a worker that died is noticed after at most this long.
LEASE_SECONDS = float(os.environ.get("A2A_LEASE_SECONDS", "30"))
#: Seconds a canceled run may go on before the worker revokes it by force.
CANCEL_GRACE = float(os.environ.get("A2A_CANCEL_GRACE", "30"))


def _chunks(count: int) -> Iterator[str]:
    for index in range(count):
        yield f"chunk {index}"


class CeleryEchoAgent(Agent):
    name = "Celery Echo Agent"
    description = "Answers with the text it is sent, from a Celery worker"
    version = "1.0.0"
    skills = [
        AgentSkill(id="echo", name="Echo", description="Repeats your message", tags=["echo"])
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome:
        """Echo, or the mode the first text part names (see the module docstring)."""
        first = msg.parts[0] if msg.parts else None
        words = first.text.split() if isinstance(first, TextPart) else []
        mode, args = (words[0], words[1:]) if words else ("", [])
        if mode == "stream" and args:
            return stream(_chunks(int(args[0])))
        if mode == "hold":
            ctx.emit_status(TaskState.WORKING)
            ctx.cancelled.wait()
            return working()
        if mode == "ask" and len(ctx.history) == 1:
            return input_required("What should I echo?")
        if mode == "slow" and args:
            # Sleeps in slices, so a cancel stops it within one.
            deadline = time.monotonic() + int(args[0]) / 1000
            while not ctx.cancelled.wait(max(0.0, min(0.1, deadline - time.monotonic()))):
                if time.monotonic() >= deadline:
                    break
        return reply(*msg.parts)


def build(agent: Agent) -> tuple[A2AApp, Celery]:
    """The A2AApp serving ``agent`` with its runs on Celery, and that Celery application."""
    celery = Celery("celery_agent", broker=BROKER)
    celery.conf.task_default_queue = QUEUE  # what a worker started without -Q consumes
    executor = CeleryExecutor(celery, queue=QUEUE, cancel_grace=CANCEL_GRACE)
    app = A2AApp(
        agent,
        base_url=os.environ.get("A2A_BASE_URL"),
        store=os.environ.get("A2A_STORE") or "sqlite://",
        push=PushSettings(policy=UrlPolicy.allowing_loopback())
        if os.environ.get("A2A_PUSH_LOOPBACK") == "1" else None,
        runtime=RuntimeSettings(executor=executor, lease_seconds=LEASE_SECONDS),
    )
    return app, executor.serve(app)


app, celery = build(CeleryEchoAgent())
