"""The official a2a-sdk's gRPC server with the benchmarks' echo agent (benchmarks/.venv-sdk).

    benchmarks/.venv-sdk/bin/python -m benchmarks.apps.grpc_sdk --bind 127.0.0.1:9000

:class:`benchmarks.apps.sdk.EchoExecutor` behind the SDK's ``DefaultRequestHandler`` on
an ``InMemoryTaskStore``, served by its ``GrpcHandler`` on ``grpc.aio`` (the SDK's gRPC
server is asyncio-only), one process. Prints ``LISTENING <port>`` once it serves.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import grpc
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import AgentInterface

from .sdk import CARD, EchoExecutor


async def serve(bind: str) -> None:
    server = grpc.aio.server()
    port = server.add_insecure_port(bind)
    card = type(CARD)()
    card.CopyFrom(CARD)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(AgentInterface(
        url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version="1.0"))
    handler = DefaultRequestHandler(agent_executor=EchoExecutor(),
                                    task_store=InMemoryTaskStore(), agent_card=card)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    print(f"LISTENING {port}", flush=True)
    await server.wait_for_termination()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bind", default="127.0.0.1:0")
    args = parser.parse_args()
    try:
        asyncio.run(serve(args.bind))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
