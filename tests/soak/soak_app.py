"""The agent the soak tests serve with ``a2a serve tests.soak.soak_app:app``-style targets.

``hold N`` stays WORKING, emitting a status update with N bytes of text every 0.1 s
until canceled (at most 120 s): subscribers always have something to be sent.
Anything else is echoed, as ``examples/echo.py`` does.
"""

from __future__ import annotations

from a2a_core.models import Message, TaskState
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, working
from a2a_wsgi._agent import Outcome
from a2a_wsgi.settings import StreamSettings

#: Seconds between a held task's status updates, and the longest it is held.
TICK, HOLD_LIMIT = 0.1, 120.0


class SoakAgent(Agent):
    name = "Soak Agent"

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome:
        kind, _, arg = (msg.text or "").partition(" ")
        if kind != "hold":
            return reply(*msg.parts)
        filler = "x" * int(arg or "1000")
        beats = 0
        while beats * TICK < HOLD_LIMIT and not ctx.cancelled.wait(TICK):
            beats += 1
            ctx.emit_status(TaskState.WORKING, f"{beats} {filler}")
        return working()


app = A2AApp(SoakAgent())
#: The same agent, cutting a stream whose client reads nothing for 1 s.
cut_app = A2AApp(SoakAgent(), streams=StreamSettings(stalled_write_timeout=1.0))
