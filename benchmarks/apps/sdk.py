"""The official a2a-sdk serving the same echo agent, on uvicorn (runs in benchmarks/.venv-sdk).

    benchmarks/.venv-sdk/bin/uvicorn benchmarks.apps.sdk:app --workers 1 --no-access-log

Same behaviour as :mod:`benchmarks.apps.ours`: a message is echoed back as one
artifact and the task completes; ``"stream N"`` streams N artifact chunks.
Both protocol versions are enabled on one endpoint, as ours does. This file
only imports the SDK; it is never imported by our test environment.
"""

from __future__ import annotations

import os

from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

__all__ = ["EchoExecutor", "app"]


class EchoExecutor(AgentExecutor):
    """Echo the parts as one artifact, or stream N chunks for ``"stream N"``."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = message.parts[0].text if message.parts else ""
        if text.startswith("stream "):
            count = int(text.split()[1])
            await updater.start_work()
            artifact_id = "art-stream"
            for index in range(count):
                await updater.add_artifact([new_text_part(f"chunk {index}")],
                                           artifact_id=artifact_id, append=index > 0,
                                           last_chunk=index == count - 1)
            await updater.complete()
            return
        await updater.add_artifact(list(message.parts))
        await updater.complete(updater.new_agent_message(list(message.parts)))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("echo tasks finish at once")


BASE_URL = os.environ.get("A2A_BASE_URL", "http://127.0.0.1:8000/")

CARD = AgentCard(
    name="Echo Agent",
    description="Answers with the text it is sent",
    version="1.0.0",
    supported_interfaces=[AgentInterface(url=BASE_URL, protocol_binding="JSONRPC",
                                         protocol_version="1.0")],
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="Echo", description="Repeats your message",
                       tags=["echo"])],
)

handler = DefaultRequestHandler(agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(),
                                agent_card=CARD)
app = Starlette(routes=[*create_agent_card_routes(CARD),
                        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)])
