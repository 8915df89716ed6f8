"""The A2A 1.0 gRPC service, read from the generated descriptor set, matched to the table.

The descriptors come from ``a2a_core/schemas/_generated/a2a-v1.0.binpb`` (generated from
the vendored proto, unmodified) into a descriptor pool of our own, so the official SDK's
``lf.a2a.v1`` classes, registered in protobuf's default pool, can be loaded beside ours.

Each rpc of ``A2AService`` is named exactly as its operation in 1.0 (``SendMessage``,
``GetTask``…), so :func:`grpc_methods` pairs them by name: the request and response
classes and the streaming kind come from the proto, everything else from the operation's
entry in :mod:`a2a_core.optable`. Adding an operation to the table adds its rpc here once
the proto has it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, ServiceDescriptor
from google.protobuf.message import Message

from ..optable import OPERATIONS, AnyOperation, OperationTable

__all__ = ["SERVICE_NAME", "GrpcMethod", "code_number", "grpc_methods", "message_class",
           "pool", "service"]

#: The proto's service, as gRPC names it in every method path.
SERVICE_NAME = "lf.a2a.v1.A2AService"
_DESCRIPTORS = "a2a-v1.0.binpb"


@dataclass(frozen=True)
class GrpcMethod:
    """One rpc of the service and the operation it carries."""

    operation: AnyOperation
    #: ``/lf.a2a.v1.A2AService/SendMessage``: what a channel calls.
    path: str
    request: type[Message]
    response: type[Message]
    #: A server-streaming rpc (SendStreamingMessage, SubscribeToTask).
    streams: bool


@functools.cache
def pool() -> descriptor_pool.DescriptorPool:
    """Our descriptors: the A2A proto, google.rpc's Status and details, and their imports."""
    data = resources.files("a2a_core.schemas._generated").joinpath(_DESCRIPTORS).read_bytes()
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(data).file:  # imports come first
        pool.Add(file)
    return pool


def service() -> ServiceDescriptor:
    """The proto's ``A2AService``."""
    return pool().FindServiceByName(SERVICE_NAME)


def message_class(descriptor: Descriptor | str) -> type[Message]:
    """The message class of ``descriptor`` (or of its full name) in our pool."""
    if isinstance(descriptor, str):
        descriptor = pool().FindMessageTypeByName(descriptor)
    return message_factory.GetMessageClass(descriptor)


def code_number(name: str) -> int:
    """A ``google.rpc.Code`` name's number (``NOT_FOUND`` -> 5)."""
    return pool().FindEnumTypeByName("google.rpc.Code").values_by_name[name].number


@functools.cache
def grpc_methods(table: OperationTable = OPERATIONS) -> tuple[GrpcMethod, ...]:
    """Every rpc of the service whose operation ``table`` has, in the proto's order.

    The streaming kind must agree: an entry that streams is a server-streaming rpc.
    """
    methods = []
    for method in service().methods:
        operation = table.named(method.name)
        if operation is None:
            continue
        if operation.streams != method.server_streaming:
            raise ValueError(f"{method.name}: the table and the proto disagree on streaming")
        methods.append(GrpcMethod(
            operation=operation, path=f"/{SERVICE_NAME}/{method.name}",
            request=message_class(method.input_type),
            response=message_class(method.output_type),
            streams=method.server_streaming))
    return tuple(methods)
