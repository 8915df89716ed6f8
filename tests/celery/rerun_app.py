"""An agent declared safe to re-run after a lost worker, on Celery (the kill -9 test).

Built here, not from examples/celery_agent.py: importing that module would create its
app too, and every app a process creates is started in it (two runtimes, two reapers
with different re-run policies, on one store).
"""

from __future__ import annotations

import os
import time

from celery import Celery

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._agent import Outcome
from a2a_wsgi.celery_executor import CeleryExecutor
from a2a_wsgi.settings import RuntimeSettings


class RerunSleeper(Agent):
    """Sleeps 3 s, then echoes: safe to run again from the start."""

    name = "Rerun Sleeper"
    rerun_on_worker_loss = True

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome:
        time.sleep(3)
        return reply(*msg.parts)


celery = Celery("rerun_app", broker=os.environ["A2A_CELERY_BROKER"])
executor = CeleryExecutor(celery, queue=os.environ["A2A_CELERY_QUEUE"])
app = A2AApp(RerunSleeper(), store="sqlite://",
             runtime=RuntimeSettings(executor=executor,
                                     lease_seconds=float(os.environ["A2A_LEASE_SECONDS"])))
executor.serve(app)
