"""The official ``a2a-sdk`` serving the 1.0 kit's contract, for comparison figures.

``run_tck.py --agent sdk`` runs the kit against it: it behaves as
examples/tck_agent.py does by default (the kit's scenarios by messageId
prefix, anything else completed with an echo), on the SDK's own request
handler, in-memory task store and push sender, under uvicorn on loopback:

    .venv/bin/python tests/conformance/sdk_agent.py PORT [GRPC_PORT]

One JSON-RPC 1.0 endpoint at ``/``; the card, at
``/.well-known/agent-card.json``, declares streaming and push notifications
as ours does. With ``GRPC_PORT`` the same request handler (one task store)
is also served over gRPC by the SDK's own ``GrpcHandler`` on ``grpc.aio``,
in the same event loop, and the card lists that GRPC interface after the
JSON-RPC one. Not a test module: nothing here is collected.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable

import grpc
import httpx
import uvicorn
from a2a.helpers import (
    new_data_part,
    new_raw_part,
    new_task,
    new_text_message,
    new_text_part,
    new_url_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    TaskState,
)
from starlette.applications import Starlette

STREAMING_TIMEOUT = float(os.environ.get("TCK_STREAMING_TIMEOUT", "2.0"))

Scenario = Callable[[TaskUpdater, str], Awaitable[None]]


def _message(updater: TaskUpdater, text: str) -> Message:
    return new_text_message(text, context_id=updater.context_id, task_id=updater.task_id,
                            role=Role.ROLE_AGENT)


def _complete(text: str | None = None) -> Scenario:
    async def run(updater: TaskUpdater, user_text: str) -> None:
        await updater.complete(_message(updater, text) if text else None)

    return run


def _artifact(part: Part, *, streamed: bool = False) -> Scenario:
    async def run(updater: TaskUpdater, user_text: str) -> None:
        if streamed:
            await updater.start_work()
        await updater.add_artifact([part], name="output")
        await updater.complete()

    return run


async def _chunked(updater: TaskUpdater, user_text: str) -> None:
    await updater.start_work()
    await updater.add_artifact([new_text_part("chunk-1 ")], artifact_id="chunked", name="output")
    await updater.add_artifact([new_text_part("chunk-2")], artifact_id="chunked", append=True,
                               last_chunk=True)
    await updater.complete()


async def _long_running(updater: TaskUpdater, user_text: str) -> None:
    await updater.start_work()
    await asyncio.sleep(2 * STREAMING_TIMEOUT)
    await updater.complete()


async def _input_required(updater: TaskUpdater, user_text: str) -> None:
    await updater.requires_input(_message(updater, "More input is needed"))


async def _reject(updater: TaskUpdater, user_text: str) -> None:
    await updater.reject(_message(updater, "rejected"))


async def _echo(updater: TaskUpdater, user_text: str) -> None:
    await updater.complete(_message(updater, f"Echo: {user_text}"))


_FILE = new_raw_part(b"tck", "text/plain", "output.txt")

#: The kit's scenarios by messageId prefix (as examples/tck_agent.py), longer prefixes first.
SCENARIOS: tuple[tuple[str, Scenario], ...] = (
    ("tck-complete-task", _complete("Hello from TCK")),
    ("tck-artifact-text", _artifact(new_text_part("Generated text content"))),
    ("tck-artifact-file-url", _artifact(new_url_part("https://example.com/output.txt",
                                                     "text/plain", "output.txt"))),
    ("tck-artifact-file", _artifact(_FILE)),
    ("tck-artifact-data", _artifact(new_data_part({"key": "value", "count": 42}))),
    ("tck-input-required", _input_required),
    ("tck-reject-task", _reject),
    ("tck-stream-001", _artifact(new_text_part("Stream hello from TCK"), streamed=True)),
    ("tck-stream-002", _complete()),
    ("tck-stream-003", _artifact(new_text_part("Stream task lifecycle"), streamed=True)),
    ("tck-stream-ordering-001", _artifact(new_text_part("Ordered output"), streamed=True)),
    ("tck-stream-artifact-text", _artifact(new_text_part("Streamed text content"),
                                           streamed=True)),
    ("tck-stream-artifact-file", _artifact(_FILE, streamed=True)),
    ("tck-stream-artifact-chunked", _chunked),
    ("test-resubscribe-message-id", _long_running),
)


class KitExecutor(AgentExecutor):
    """Routes each message to its scenario by messageId prefix."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id and context.message
        message_id = context.message.message_id
        if message_id.startswith("tck-message-response"):
            await event_queue.enqueue_event(
                new_text_message("Direct message response", context_id=context.context_id,
                                 role=Role.ROLE_AGENT))
            return
        if context.current_task is None:  # the SDK answers a non-blocking send with this
            await event_queue.enqueue_event(
                new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED,
                         history=[context.message]))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        scenario = next((s for prefix, s in SCENARIOS if message_id.startswith(prefix)), _echo)
        await scenario(updater, context.get_user_input())

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build_handler(base_url: str,
                  grpc_url: str | None = None) -> tuple[AgentCard, DefaultRequestHandler]:
    """The card and the SDK's request handler for the kit's contract; the card lists
    ``grpc_url`` if given."""
    interfaces = [AgentInterface(url=base_url, protocol_binding="JSONRPC", protocol_version="1.0")]
    if grpc_url:
        interfaces.append(AgentInterface(url=grpc_url, protocol_binding="GRPC",
                                         protocol_version="1.0"))
    card = AgentCard(
        name="Conformance Agent",
        description="Answers each message as the A2A conformance scenarios describe.",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="conformance", name="Conformance",
                           description="Completes, streams or pauses each task as its "
                                       "message asks", tags=["a2a", "conformance"])],
    )
    configs = InMemoryPushNotificationConfigStore()
    return card, DefaultRequestHandler(
        agent_executor=KitExecutor(), task_store=InMemoryTaskStore(), agent_card=card,
        push_config_store=configs,
        push_sender=BasePushNotificationSender(httpx.AsyncClient(timeout=10.0), configs))


def build_app(card: AgentCard, handler: DefaultRequestHandler) -> Starlette:
    """The card and the JSON-RPC endpoint at ``/``."""
    return Starlette(routes=[*create_agent_card_routes(card),
                             *create_jsonrpc_routes(handler, "/")])


async def serve(port: int, grpc_port: int | None) -> None:
    """uvicorn (JSON-RPC, card) and, when asked, the SDK's gRPC server, in one event loop."""
    grpc_url = f"localhost:{grpc_port}" if grpc_port else None
    card, handler = build_handler(f"http://localhost:{port}/", grpc_url)
    grpc_server = None
    if grpc_port:
        grpc_server = grpc.aio.server()
        grpc_server.add_insecure_port(f"127.0.0.1:{grpc_port}")
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
            GrpcHandler(handler), grpc_server)
        await grpc_server.start()
    config = uvicorn.Config(build_app(card, handler), host="127.0.0.1", port=port,
                            log_level="warning", lifespan="off")
    try:
        await uvicorn.Server(config).serve()
    finally:
        if grpc_server is not None:
            await grpc_server.stop(1)


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 9999
    grpc_port = int(sys.argv[2]) if len(sys.argv) > 2 else None
    asyncio.run(serve(port, grpc_port))


if __name__ == "__main__":
    main()
