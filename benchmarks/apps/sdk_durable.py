"""The official a2a-sdk's echo agent of :mod:`benchmarks.apps.sdk` on the SDK's own durable
store, ``DatabaseTaskStore`` (SQLAlchemy, async), for ``benchmarks/durable.py``.

    SDK_STORE_URL=sqlite+aiosqlite:////tmp/x.sqlite3 \
        benchmarks/.venv-sdk/bin/uvicorn benchmarks.apps.sdk_durable:app --workers 1
    SDK_STORE_URL=postgresql+asyncpg://postgres@127.0.0.1:5432/test SDK_PG_SCHEMA=s ...

``SDK_STORE_URL`` is a SQLAlchemy async URL; ``SDK_PG_SCHEMA`` puts the SDK's ``tasks`` table
in that PostgreSQL schema (``search_path``; the caller creates and drops it). The engine and
the store are the SDK's defaults (its pool, ``create_table=True``): the store as shipped.
Everything else (executor, card, routes, 0.3 compatibility) is :mod:`benchmarks.apps.sdk`'s.
Runs in benchmarks/.venv-sdk-durable (``requirements-durable.txt``); never imported by our tests.
"""

from __future__ import annotations

import os
from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import DatabaseTaskStore
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette

from .sdk import CARD, EchoExecutor

__all__ = ["app"]

_options: dict[str, Any] = {}
_schema = os.environ.get("SDK_PG_SCHEMA")
if _schema:
    _options["connect_args"] = {"server_settings": {"search_path": _schema}}

engine = create_async_engine(os.environ["SDK_STORE_URL"], **_options)
handler = DefaultRequestHandler(agent_executor=EchoExecutor(),
                                task_store=DatabaseTaskStore(engine), agent_card=CARD)
app = Starlette(routes=[*create_agent_card_routes(CARD),
                        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)])
