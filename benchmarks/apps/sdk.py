"""The official a2a-sdk serving the same echo agent, on uvicorn (runs in benchmarks/.venv-sdk).

    benchmarks/.venv-sdk/bin/uvicorn benchmarks.apps.sdk:app --workers 1 --no-access-log

Same behaviour as :mod:`benchmarks.apps.ours`: a message is echoed back as one
artifact and the task completes; ``"stream N"`` streams N artifact chunks;
``"slow MS"`` waits MS milliseconds (``asyncio.sleep``) and then echoes;
``"hold"`` / ``"hold S"`` stays WORKING until canceled, with a WORKING status
update ("still working K") every S seconds when S is given.
Both protocol versions are enabled on one endpoint, as ours does. This file
only imports the SDK; it is never imported by our test environment.
"""

from __future__ import annotations

import asyncio
import os

from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
from starlette.applications import Starlette

__all__ = ["EchoExecutor", "app"]


async def _hold(updater: TaskUpdater, tick: float | None) -> None:
    """WORKING until canceled (the SDK cancels this coroutine); an update every ``tick`` s."""
    await updater.start_work()
    if tick is None:
        await asyncio.Event().wait()  # never set: only the cancel ends it
        return
    beats = 0
    while True:
        await asyncio.sleep(tick)
        beats += 1
        await updater.update_status(TaskState.TASK_STATE_WORKING, message=updater.new_agent_message(
            [new_text_part(f"still working {beats}")]))


class EchoExecutor(AgentExecutor):
    """Echo the parts as one artifact, or the mode the first text part names (see above)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = message.parts[0].text if message.parts else ""
        words = text.split()
        if words[:1] == ["hold"]:
            await _hold(updater, float(words[1]) if len(words) > 1 else None)
            return
        if words[:1] == ["slow"] and len(words) > 1:
            await asyncio.sleep(int(words[1]) / 1000)
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
        """Only ``hold`` tasks live long enough to cancel: report CANCELED; the SDK then
        cancels the running ``execute``."""
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


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
