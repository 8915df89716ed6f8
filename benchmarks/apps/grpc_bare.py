"""The ceiling for the gRPC benchmark: a grpcio server that does the least SendMessage needs.

    python -m benchmarks.apps.grpc_bare --bind 127.0.0.1:9000

The same sync ``grpc.server`` and thread pool as ours (``DEFAULT_MAX_WORKERS`` threads),
one generic handler: the request is parsed into the proto's message (our descriptor pool),
and a completed Task echoing the message's parts as one artifact is built directly as a
message and sent back. Nothing is validated, stored or logged. Prints ``LISTENING <port>``.
"""

from __future__ import annotations

import argparse
import itertools
import signal
import sys
import threading
from concurrent import futures
from typing import Any

import grpc

from a2a_core._grpc import SERVICE_NAME, message_class
from a2a_wsgi.grpc import DEFAULT_MAX_WORKERS

_REQUEST = message_class("lf.a2a.v1.SendMessageRequest")
_RESPONSE = message_class("lf.a2a.v1.SendMessageResponse")
_COMPLETED = 3  # TASK_STATE_COMPLETED
_ids = itertools.count()


def send_message(request: Any, context: grpc.ServicerContext) -> Any:
    number = next(_ids)
    response = _RESPONSE()
    task = response.task
    task.id = f"tsk-{number}"
    task.context_id = request.message.context_id or f"ctx-{number}"
    task.status.state = _COMPLETED
    artifact = task.artifacts.add()
    artifact.artifact_id = f"art-{number}"
    artifact.parts.extend(request.message.parts)
    task.history.append(request.message)
    return response


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bind", default="127.0.0.1:0")
    args = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=DEFAULT_MAX_WORKERS))
    handler = grpc.unary_unary_rpc_method_handler(
        send_message, request_deserializer=_REQUEST.FromString,
        response_serializer=lambda message: message.SerializeToString())
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE_NAME, {"SendMessage": handler}),))
    port = server.add_insecure_port(args.bind)
    server.start()
    print(f"LISTENING {port}", flush=True)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    stopping.wait()
    server.stop(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
