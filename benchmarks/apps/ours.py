"""Our server: the echo agent of ``examples/echo.py``, plus the modes the benchmarks need.

    python -m a2a_wsgi._cli serve benchmarks.apps.ours:app -k gevent    # a2a serve
    python -m benchmarks.apps.ours -k gthread --bind 127.0.0.1:8000    # the same, shorter

A message's first text part picks what the agent does:

* ``"stream N"``: N text chunks (N artifact-update events), then completed;
* ``"slow MS"``: sleep MS milliseconds (``time.sleep``: a thread under
  gthread, a greenlet under gevent's patching), then echo;
* ``"hold"`` / ``"hold S"``: stay WORKING until the task is canceled, with a
  WORKING status update ("still working K") every S seconds when S is given,
  so subscribers see traffic and the quiet-stream timeout does not end them;
* anything else: echoed back as one artifact, exactly as ``examples/echo.py`` does.

``BENCH_STORE`` picks the task store: ``memory`` (default), ``sqlite`` or
``postgres`` (see :mod:`benchmarks.apps.stores`). The worker class is
gunicorn's, not the app's: ``a2a serve -k gevent|gthread`` (``main`` below
passes its arguments to it).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Sequence

from a2a_core.models import AgentSkill, Message, TaskState, TextPart
from a2a_wsgi import A2AApp, Agent, AgentContext, reply, stream, working
from a2a_wsgi._agent import Outcome

from .stores import make_store

__all__ = ["BenchEchoAgent", "app", "main"]


def _chunks(count: int) -> Iterator[str]:
    """N small text chunks, so the stream's cost is the framing, not the payload."""
    for index in range(count):
        yield f"chunk {index}"


def _hold(ctx: AgentContext, tick: float | None) -> Outcome:
    """WORKING until canceled; a status update every ``tick`` seconds when given."""
    ctx.emit_status(TaskState.WORKING)
    beats = 0
    while not ctx.cancelled.wait(tick):
        beats += 1
        ctx.emit_status(TaskState.WORKING, f"still working {beats}")
    return working()


class BenchEchoAgent(Agent):
    name = "Echo Agent"
    description = "Answers with the text it is sent"
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
            return _hold(ctx, float(args[0]) if args else None)
        if mode == "slow" and args:
            time.sleep(int(args[0]) / 1000)
        return reply(*msg.parts)


app = A2AApp(BenchEchoAgent(),
             base_url=os.environ.get("A2A_BASE_URL", "http://127.0.0.1:8000/"),
             store=make_store(os.environ.get("BENCH_STORE", "memory")))


def main(argv: Sequence[str] | None = None) -> int:
    """``a2a serve benchmarks.apps.ours:app`` with these ``a2a serve`` options (``-k`` …)."""
    from a2a_wsgi._cli import serve_main

    return serve_main(["benchmarks.apps.ours:app", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
