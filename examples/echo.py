"""An agent that answers with what it was sent.

    python examples/echo.py [HOST:PORT]           # serve() on 127.0.0.1:8000
    a2a serve examples.echo:app --bind 127.0.0.1:9000 --workers 4
    gunicorn -k gthread --threads 16 -w 4 -b 127.0.0.1:9000 examples.echo:app

The card advertises the URL each request came in on (for loopback hosts; set
A2A_BASE_URL, or A2A_TRUSTED_HOSTS, to serve other names). With several
workers and no A2A_STORE, the workers share the SQLite file ./a2a-tasks.sqlite3.
A2A_INSPECTOR=1 serves the inspector page at /inspector/ (to loopback clients).
A2A_PREVIEW_GENERATIONS=1 serves the A2A dev-1.1 task generations to clients that
negotiate them (long-poll GetTask: docs/protocol.md).
"""

from __future__ import annotations

import logging
import os
import sys

from a2a_core.models import AgentSkill, Message
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, serve
from a2a_wsgi.settings import ProtocolSettings


class EchoAgent(Agent):
    name = "Echo Agent"
    description = "Answers with the text it is sent"
    version = "1.0.0"
    skills = [
        AgentSkill(id="echo", name="Echo", description="Repeats your message", tags=["echo"])
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> object:
        """The reply is the message's parts, unchanged (files and data included)."""
        return reply(*msg.parts)


# push=True: webhook delivery with the default protections (public http(s) hosts only,
# every resolved address checked, no redirects, retries with backoff); see docs/push.md.
app = A2AApp(
    EchoAgent(),
    base_url=os.environ.get("A2A_BASE_URL"),
    inspector=os.environ.get("A2A_INSPECTOR") == "1",
    push=True,
    protocol=ProtocolSettings(preview_generations=os.environ.get("A2A_PREVIEW_GENERATIONS") == "1"),
)


if __name__ == "__main__":
    # The access and task lines (docs/telemetry.md) need a handler; werkzeug's own
    # request line would repeat ours. Under gunicorn see examples/gunicorn_logging.py.
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s [%(process)d] [%(levelname)s] %(name)s: %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    handle = serve(app, sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:8000")
    print(f"Echo Agent on {handle.url}/ (card: {handle.url}/.well-known/agent-card.json)")
    if app.settings.inspector:
        print(f"Inspector: {handle.url}/inspector/")
    try:
        handle.thread.join()
    except KeyboardInterrupt:
        handle.stop()
