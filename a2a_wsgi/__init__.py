"""a2a_wsgi: serve an A2A agent from any WSGI server (gunicorn, Flask, Django).

    from a2a_wsgi import A2AApp, Agent, reply

    class Echo(Agent):
        name = "Echo"
        def handle_message(self, msg, ctx):
            return reply(msg.text)

    app = A2AApp(Echo(), base_url="https://agents.example.com/echo/")

The names below are this package's public surface, with the few public modules
``docs/api.md`` lists. Each is imported on first use (:mod:`a2a_core._lazy`): ``import
a2a_wsgi`` alone loads nothing of the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_core._lazy import lazy_exports

if TYPE_CHECKING:
    from ._agent import Agent as Agent
    from ._agent import AgentContext as AgentContext
    from ._agent import Outcome as Outcome
    from ._agent import auth_required as auth_required
    from ._agent import error as error
    from ._agent import input_required as input_required
    from ._agent import message as message
    from ._agent import reject as reject
    from ._agent import reply as reply
    from ._agent import stream as stream
    from ._agent import working as working
    from ._app import A2AApp as A2AApp
    from ._card_schema import CardSchemaError as CardSchemaError
    from ._overrides import get_agent_card as get_agent_card
    from ._overrides import get_base_url as get_base_url
    from ._overrides import get_identity as get_identity
    from ._overrides import get_metadata as get_metadata
    from ._overrides import put_base_url as put_base_url
    from ._overrides import put_identity as put_identity
    from ._overrides import put_metadata as put_metadata
    from ._runtime import Runtime as Runtime
    from ._serve import ServerHandle as ServerHandle
    from ._serve import gunicorn_post_worker_init as gunicorn_post_worker_init
    from ._serve import run_gunicorn as run_gunicorn
    from ._serve import serve as serve
    from ._serve import settle_gc as settle_gc
    from .push import PushSettings as PushSettings
    from .push import UrlPolicy as UrlPolicy
    from .stores import MemoryTaskStore as MemoryTaskStore
    from .stores import SQLiteTaskStore as SQLiteTaskStore
    from .stores import TaskStore as TaskStore
    from .stores import open_store as open_store

__all__ = [
    "A2AApp",
    "CardSchemaError",
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
    "gunicorn_post_worker_init",
    "settle_gc",
    # per-request overrides (a2a_wsgi._overrides)
    "get_agent_card",
    "get_base_url",
    "get_identity",
    "get_metadata",
    "put_base_url",
    "put_identity",
    "put_metadata",
]

#: Where each name lives (imported on first use).
_WHERE = {
    **dict.fromkeys(["Agent", "AgentContext", "Outcome", "auth_required", "error",
                     "input_required", "message", "reject", "reply", "stream", "working"],
                    "a2a_wsgi._agent"),
    "A2AApp": "a2a_wsgi._app",
    "CardSchemaError": "a2a_wsgi._card_schema",
    **dict.fromkeys(["get_agent_card", "get_base_url", "get_identity", "get_metadata",
                     "put_base_url", "put_identity", "put_metadata"], "a2a_wsgi._overrides"),
    "PushSettings": "a2a_wsgi.push",
    "UrlPolicy": "a2a_wsgi.push",
    "Runtime": "a2a_wsgi._runtime",
    **dict.fromkeys(["ServerHandle", "gunicorn_post_worker_init", "run_gunicorn", "serve",
                     "settle_gc"], "a2a_wsgi._serve"),
    **dict.fromkeys(["MemoryTaskStore", "SQLiteTaskStore", "TaskStore", "open_store"],
                    "a2a_wsgi.stores"),
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
