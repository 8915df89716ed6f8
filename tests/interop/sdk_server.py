"""An agent built with the official ``a2a-sdk`` and served by uvicorn: the peer our client calls.

Run as ``python sdk_server.py``: it binds 127.0.0.1 on a free port, prints
``LISTENING <port>`` on stdout once the socket is bound, and serves until
killed. One JSON-RPC endpoint at ``/`` speaks 1.0 and (``enable_v0_3_compat``)
0.3; the card is at ``/.well-known/agent-card.json``.

The executor picks its behaviour from the user's text, so one process covers
every case the interop tests need:

* anything else: the task completes with one artifact ``"echo: <text>"``;
* ``"stream …"``: WORKING, then three appended artifact chunks, then COMPLETED;
* ``"hold …"``: WORKING, then it waits (up to 30 s) until it is canceled;
* ``"ask …"``: INPUT_REQUIRED with the prompt ``"Which numbers?"``;
* ``"parts …"``: completes with one artifact holding the message's parts unchanged;
* ``"direct …"``: answers with a bare Message ``"direct: <text>"`` (no task).
"""

from __future__ import annotations

import asyncio
import socket
import sys

import uvicorn
from a2a.helpers import new_task, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Role,
    TaskState,
)
from starlette.applications import Starlette

__all__ = ["InteropExecutor", "build_app", "build_card", "main"]

STREAM_CHUNKS = ("one ", "two ", "three")
ASK_PROMPT = "Which numbers?"


class InteropExecutor(AgentExecutor):
    """Echo, stream, hold-until-canceled or ask, chosen by the first word of the text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Publish the task first (the SDK answers a non-blocking send with it), then work."""
        assert context.task_id and context.context_id and context.message
        text = context.get_user_input()
        command = text.split(" ", 1)[0]
        if command == "direct":
            await event_queue.enqueue_event(
                new_text_message(f"direct: {text}", context_id=context.context_id,
                                 role=Role.ROLE_AGENT)
            )
            return
        if context.current_task is None:
            await event_queue.enqueue_event(
                new_task(
                    context.task_id,
                    context.context_id,
                    TaskState.TASK_STATE_SUBMITTED,
                    history=[context.message],
                )
            )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if command == "stream":
            await self._stream(updater)
        elif command == "hold":
            await updater.start_work()
            await asyncio.sleep(30)
        elif command == "ask":
            await updater.requires_input(
                new_text_message(ASK_PROMPT, context_id=updater.context_id,
                                 task_id=updater.task_id, role=Role.ROLE_AGENT)
            )
        elif command == "parts":
            await updater.add_artifact(list(context.message.parts), name="parts")
            await updater.complete()
        else:
            await updater.add_artifact([new_text_part(f"echo: {text}")], name="echo")
            await updater.complete()

    @staticmethod
    async def _stream(updater: TaskUpdater) -> None:
        """Three chunks of one artifact, a little apart, so they arrive as separate events."""
        await updater.start_work()
        for index, chunk in enumerate(STREAM_CHUNKS):
            await asyncio.sleep(0.05)
            await updater.add_artifact(
                [new_text_part(chunk)],
                artifact_id="counting",
                name="counting",
                append=index > 0,
                last_chunk=index == len(STREAM_CHUNKS) - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """The SDK has already cancelled execute(); record the terminal state."""
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build_card(base_url: str) -> AgentCard:
    """A card with a 1.0 and a 0.3 JSON-RPC interface on the same URL."""
    return AgentCard(
        name="SDK Echo",
        description="An a2a-sdk agent used by the interop tests",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="echo", name="Echo", description="Echoes the task text",
                       tags=["echo"]),
            AgentSkill(id="stream", name="Stream", description="Streams three chunks",
                       tags=["stream"]),
        ],
    )


def build_app(base_url: str) -> Starlette:
    """Card route + one JSON-RPC route serving 1.0 and 0.3."""
    card = build_card(base_url)
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
    ]
    return Starlette(routes=routes)


def main() -> None:
    """Bind and listen first (the port is known and reachable), then hand over to uvicorn."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue until uvicorn accepts: no start-up race
    port = sock.getsockname()[1]
    app = build_app(f"http://127.0.0.1:{port}/")
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    print(f"LISTENING {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
