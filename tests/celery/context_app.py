"""An agent on Celery that answers with what it knows of its call (identity, tenant, claims,
metadata, trace), or ignores its cancel: the context and revoke tests of the work tier.

Behind a bearer token (``tok-alice``: alice of tenant acme, with a claim), with static
metadata and the task generations preview on. ``A2A_CANCEL_GRACE`` is the executor's
revoke backstop (seconds).
"""

from __future__ import annotations

import json
import os
import time

from celery import Celery

from a2a_core.auth import Principal
from a2a_core.models import Message, TaskState, TextPart
from a2a_wsgi import A2AApp, Agent, AgentContext, reply
from a2a_wsgi._agent import Outcome
from a2a_wsgi._telemetry import current_traceparent
from a2a_wsgi.auth import BearerAuthenticator
from a2a_wsgi.celery_executor import CeleryExecutor
from a2a_wsgi.settings import ProtocolSettings, RuntimeSettings

ALICE = Principal("alice", tenant="acme", claims={"role": "reviewer"})


class ContextEcho(Agent):
    """``slow MS``: sleep, then answer; ``stubborn``: say its pid, then sleep 120 s
    whatever happens; anything else: answer at once. The answer is JSON of the call."""

    name = "Context Echo"

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome:
        first = msg.parts[0] if msg.parts else None
        words = first.text.split() if isinstance(first, TextPart) else []
        if words[:1] == ["stubborn"]:
            ctx.emit_status(TaskState.WORKING, f"pid {os.getpid()}")
            time.sleep(120)  # ignores ctx.cancelled
        elif words[:1] == ["slow"]:
            ctx.cancelled.wait(int(words[1]) / 1000)
        trace = current_traceparent()
        identity = ctx.identity
        return reply(json.dumps({
            "identity": None if identity is None else str(identity),
            "tenant": getattr(identity, "tenant", None),
            "claims": dict(getattr(identity, "claims", {}) or {}),
            "metadata": {k: v for k, v in (ctx.metadata or {}).items() if k != "a2a.auth"},
            "trace_id": trace.trace_id if trace is not None else None,
        }))


celery = Celery("context_app", broker=os.environ["A2A_CELERY_BROKER"])
executor = CeleryExecutor(celery, queue=os.environ["A2A_CELERY_QUEUE"],
                          cancel_grace=float(os.environ.get("A2A_CANCEL_GRACE", "30")))
app = A2AApp(ContextEcho(), store="sqlite://",
             auth=BearerAuthenticator(lambda token: ALICE if token == "tok-alice" else None),
             protocol=ProtocolSettings(metadata={"deployment": "test"},
                                       preview_generations=True),
             runtime=RuntimeSettings(executor=executor, poll_interval=0.2))
executor.serve(app)
