"""The 1.0 gRPC binding's sans-IO half: the service's methods and the codec of its messages.

Needs the ``grpc`` extra (protobuf, googleapis-common-protos); nothing here imports grpcio,
opens a socket or starts a thread. The server (:mod:`a2a_wsgi.grpc`) and the client
(:mod:`a2a_client.grpc_binding`) put these messages on the wire.
"""

from __future__ import annotations

from .codec import (
    decode_status_details,
    error_status,
    params_of,
    request_message,
    result_message,
    result_value,
    stream_message,
)
from .proto import SERVICE_NAME, GrpcMethod, add_proto, grpc_method, grpc_methods, message_class

__all__ = [
    "SERVICE_NAME",
    "GrpcMethod",
    "add_proto",
    "decode_status_details",
    "error_status",
    "grpc_method",
    "grpc_methods",
    "message_class",
    "params_of",
    "request_message",
    "result_message",
    "result_value",
    "stream_message",
]
