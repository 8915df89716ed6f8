"""An agent that tells its caller who it is: the examples/django_site and flask_site agent.

    gunicorn -k gthread examples.caller_agent:app     # alone: every caller is anonymous

Inside a site (examples/django_site, examples/flask_site.py) the site's login
names the caller, and the answer says so: ``hello, user:1``.
"""

from __future__ import annotations

from a2a_core.models import AgentSkill, Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply


class CallerAgent(Agent):
    name = "Caller Agent"
    description = "Greets the caller by the identity the site's login gave it"
    version = "1.0.0"
    skills = [AgentSkill(id="whoami", name="Who am I", description="Names the caller",
                         tags=["auth"])]

    def handle_message(self, msg: Message, ctx: AgentContext) -> object:
        """The caller's identity as the site named it (``anonymous`` when none).

        ``ctx.identity`` is a ``Principal`` however the caller logged in (the site's
        session, a token through ``auth=``), and formats as its identity string.
        """
        who = ctx.identity if ctx.identity is not None else "anonymous"
        return reply(f"hello, {who}: {msg.text}")


app = A2AApp(CallerAgent())
