"""Our server: the echo agent of ``examples/echo.py``, plus a streaming mode for the SSE scenario.

    gunicorn -k gthread --threads 16 benchmarks.apps.ours:app

A message whose first text part is ``"stream N"`` is answered with a stream
of N text chunks (N artifact-update events); anything else is echoed back as
one artifact, exactly as ``examples/echo.py`` does. ``BENCH_STORE`` picks
the task store: ``memory`` (default), ``sqlite`` or ``postgres``
(see :mod:`benchmarks.apps.stores`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from a2a_core.models import AgentSkill, Message, TextPart
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, stream
from a2a_wsgi.agent import Reply, Stream

from .stores import make_store

__all__ = ["BenchEchoAgent", "app"]


def _chunks(count: int) -> Iterator[str]:
    """N small text chunks, so the stream's cost is the framing, not the payload."""
    for index in range(count):
        yield f"chunk {index}"


class BenchEchoAgent(Agent):
    name = "Echo Agent"
    description = "Answers with the text it is sent"
    version = "1.0.0"
    skills = [
        AgentSkill(id="echo", name="Echo", description="Repeats your message", tags=["echo"])
    ]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Reply | Stream:
        """Echo, or stream N chunks when asked with ``"stream N"``."""
        first = msg.parts[0] if msg.parts else None
        if isinstance(first, TextPart) and first.text.startswith("stream "):
            return stream(_chunks(int(first.text.split()[1])))
        return reply(*msg.parts)


app = A2AApp(BenchEchoAgent(),
             base_url=os.environ.get("A2A_BASE_URL", "http://127.0.0.1:8000/"),
             store=make_store(os.environ.get("BENCH_STORE", "memory")))
