"""The agent to run the official conformance kit (a2a-tck) against.

It behaves like the agent the kit was tuned for (see the kit notes, section 7):
every task goes SUBMITTED -> WORKING and **stays WORKING**; a follow-up
message keeps it working; cancel moves it to CANCELED. Messages whose id
starts with ``test-subscribe-message-id`` / ``test-resubscribe-message-id``
wait ``TCK_SUBSCRIBE_DELAY`` seconds (default 3) first, so a subscriber can
attach while the task is live.

    PYTHONPATH=. python examples/tck_agent.py              # http://localhost:9999/
    PYTHONPATH=. TCK_PORT=9000 python examples/tck_agent.py

The card advertises ``http://localhost:<port>/`` (the kit flags IP addresses
in cards) and declares streaming, push notifications and the optional
timestamp extension. Declaring push is what the kit needs: it only exercises
the push-config CRUD methods, and a card without push trips the kit's own
TypeError in ``test_push_notification_not_supported_error_32003_enhanced``.
``tests/conformance/run_tck.py`` runs the kit against this agent.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone

from a2a_core.extensions import TimestampExtension
from a2a_core.models import AgentSkill, Message
from a2a_wsgi import A2AApp, Agent, AgentContext, serve, working
from a2a_wsgi.push import PushSettings, UrlPolicy

PORT = int(os.environ.get("TCK_PORT", "9999"))
SUBSCRIBE_DELAY = float(os.environ.get("TCK_SUBSCRIBE_DELAY", "3.0"))
_DELAYED_PREFIXES = ("test-subscribe-message-id", "test-resubscribe-message-id")


class ConformanceAgent(Agent):
    # Wording matters: the kit flags cards mentioning credentials or "internal"-like words.
    name = "Conformance Agent"
    description = "Accepts every message and keeps its task working until it is canceled."
    version = "1.0.0"
    skills = [
        AgentSkill(
            id="conformance",
            name="Conformance",
            description="Keeps each task in the working state",
            tags=["a2a", "conformance"],
            examples=["hello"],
        )
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> object:
        if msg.message_id.startswith(_DELAYED_PREFIXES):
            deadline = time.monotonic() + SUBSCRIBE_DELAY
            while time.monotonic() < deadline and not ctx.is_cancelled():
                time.sleep(0.05)
        return working()


app = A2AApp(
    ConformanceAgent(),
    base_url=os.environ.get("A2A_BASE_URL", f"http://localhost:{PORT}/"),
    # Push with the default protections, plus loopback: the kit's webhook receiver listens on
    # localhost:8888. Every other private, link-local or metadata address stays refused.
    push=PushSettings(policy=UrlPolicy.allowing_loopback()),
    # The seed's reference extension (optional, active only when a client asks for it):
    # a real declared extension lets the kit's extension-declaration tests run.
    extensions=[TimestampExtension(lambda: datetime.now(timezone.utc))],
)


if __name__ == "__main__":
    handle = serve(app, f"0.0.0.0:{PORT}")
    print(f"Conformance agent on http://localhost:{handle.port}/")
    try:
        handle.thread.join()
    except KeyboardInterrupt:
        handle.stop()
