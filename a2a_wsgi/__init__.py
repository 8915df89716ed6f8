"""a2a_wsgi: serve an A2A agent from any WSGI server (gunicorn, Flask, Django).

    from a2a_wsgi import A2AApp, Agent, reply

    class Echo(Agent):
        name = "Echo"
        def handle_message(self, msg, ctx):
            return reply(msg.text)

    app = A2AApp(Echo(), base_url="https://agents.example.com/echo/")
"""

from __future__ import annotations

from . import overrides
from .agent import (
    Agent,
    AgentContext,
    Outcome,
    auth_required,
    error,
    input_required,
    message,
    reject,
    reply,
    stream,
    working,
)
from .app import A2AApp
from .overrides import get_agent_card as get_agent_card
from .overrides import get_base_url as get_base_url
from .overrides import get_identity as get_identity
from .overrides import get_metadata as get_metadata
from .overrides import put_base_url as put_base_url
from .overrides import put_identity as put_identity
from .overrides import put_metadata as put_metadata
from .push import PushSettings, UrlPolicy
from .runtime import Runtime
from .serve import ServerHandle, run_gunicorn, serve
from .stores import MemoryTaskStore, SQLiteTaskStore, TaskStore, open_store

__all__ = [
    "A2AApp",
    "Agent",
    "AgentContext",
    "Outcome",
    "reply",
    "input_required",
    "stream",
    "error",
    "message",
    "working",
    "auth_required",
    "reject",
    "Runtime",
    "PushSettings",
    "UrlPolicy",
    "MemoryTaskStore",
    "SQLiteTaskStore",
    "TaskStore",
    "open_store",
    "serve",
    "ServerHandle",
    "run_gunicorn",
    *overrides.__all__,  # per-request overrides, listed once in a2a_wsgi.overrides
]
