"""An echo agent that signs its push deliveries and may push to loopback webhooks.

    .venv/bin/pip install -e '.[signing]'           # once: signatures need the extra
    .venv/bin/python examples/push_agent.py 127.0.0.1:8000

The half of docs/push.md's local recipe that sends; ``examples/push_receiver.py`` is
the half that receives. Push delivery refuses loopback and private addresses by
default (SSRF protection): ``UrlPolicy.allowing_loopback()`` opens 127.0.0.0/8 and
::1 for this local recipe only; keep the default in production. The signing key is
made at start and its public half served at ``/.well-known/jwks.json``.
"""

from __future__ import annotations

import logging
import sys

from a2a_core.models import AgentSkill, Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, serve
from a2a_wsgi._agent import Outcome
from a2a_wsgi.push import PushSettings, PushSigner, UrlPolicy


class PushEchoAgent(Agent):
    name = "Push Echo Agent"
    description = "Answers with the text it is sent, and pushes each task update"
    version = "1.0.0"
    skills = [
        AgentSkill(id="echo", name="Echo", description="Repeats your message", tags=["echo"])
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome:
        return reply(*msg.parts)


app = A2AApp(PushEchoAgent(),
             push=PushSettings(policy=UrlPolicy.allowing_loopback(), signer=PushSigner()))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s [%(process)d] [%(levelname)s] %(name)s: %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    handle = serve(app, sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:8000")
    print(f"Push Echo Agent on {handle.url}/ (JWKS: {handle.url}/.well-known/jwks.json)",
          flush=True)
    try:
        handle.thread.join()
    except KeyboardInterrupt:
        handle.stop()
