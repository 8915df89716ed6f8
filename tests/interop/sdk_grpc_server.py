"""The official ``a2a-sdk``'s gRPC server (``GrpcHandler`` on ``grpc.aio``): the peer our
gRPC client calls.

Run as ``python sdk_grpc_server.py``: it listens on a free 127.0.0.1 port, prints
``LISTENING <port>`` once it serves, and serves until killed. The agent is the interop
tests' (sdk_server.py here: "stream", "hold", "ask", "direct", else echo), with
push configs stored in memory and an extended card.
"""

from __future__ import annotations

import asyncio

import grpc
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import AgentCapabilities, AgentInterface
from sdk_server import InteropExecutor, build_card  # this folder: the script's own


async def main() -> None:
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    card = build_card(f"127.0.0.1:{port}")
    del card.supported_interfaces[:]
    card.supported_interfaces.append(AgentInterface(
        url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version="1.0"))
    card.capabilities.CopyFrom(AgentCapabilities(streaming=True, push_notifications=True,
                                                 extended_agent_card=True))
    extended = type(card)()
    extended.CopyFrom(card)
    extended.name = "SDK Echo (extended)"
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(), task_store=InMemoryTaskStore(), agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(), extended_agent_card=extended)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    print(f"LISTENING {port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
