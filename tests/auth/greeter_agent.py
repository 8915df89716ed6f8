"""An agent that greets its caller and names the type ``context.identity`` had.

Used by the host sites of tests/auth/test_require_login.py and by
test_identity_type.py: the issue it guards is an agent that printed
``Hello Principal(identity='user:1', …)`` for one login and ``Hello user:1``
for another.
"""

from __future__ import annotations

from typing import Any

from a2a_core.models import Message
from a2a_wsgi import Agent, AgentContext, reply


class Greeter(Agent):
    """``Hello <caller> (<module.type of context.identity>)``, or ``Hello anonymous``."""

    name = "Greeter"

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        if ctx.identity is None:
            return reply("Hello anonymous")
        kind = type(ctx.identity)
        return reply(f"Hello {ctx.identity} ({kind.__module__}.{kind.__qualname__})")
