"""The A2A 1.0 gRPC service, read from the generated descriptor set, matched to the table.

The descriptors come from ``a2a_core/schemas/_generated/a2a-v1.0.binpb`` (generated from
the vendored proto, unmodified) into a descriptor pool of our own, so the official SDK's
``lf.a2a.v1`` classes, registered in protobuf's default pool, can be loaded beside ours.

Each rpc of ``A2AService`` is named exactly as its operation in 1.0 (``SendMessage``,
``GetTask``…), so :func:`grpc_methods` pairs them by name: the request and response
classes and the streaming kind come from the proto, everything else from the operation's
entry in :mod:`a2a_core.optable`. Adding an operation to the table adds its rpc here once
a proto has it: the A2A proto for the spec's operations, a deployment's own proto
(:func:`add_proto`, named by the entry's ``grpc_service``) for its own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, ServiceDescriptor
from google.protobuf.message import Message

from ..optable import OPERATIONS, AnyOperation, OperationTable

__all__ = ["SERVICE_NAME", "GrpcMethod", "add_proto", "code_number", "grpc_method",
           "grpc_methods", "message_class", "pool", "service"]

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


#: operation -> its rpc, once found (a miss is not kept: :func:`add_proto` may add it).
_FOUND: dict[AnyOperation, GrpcMethod] = {}


def grpc_method(operation: AnyOperation) -> GrpcMethod | None:
    """The rpc that carries ``operation``: the one named as the operation (its 1.0 name) in
    the service its entry names; None when that service has no such rpc (yet).

    The streaming kind must agree: an entry that streams is a server-streaming rpc.
    """
    found = _FOUND.get(operation)
    if found is not None:
        return found
    try:
        method = pool().FindServiceByName(operation.grpc_service).FindMethodByName(
            operation.name)
    except KeyError:
        return None
    if method is None:  # (older protobuf answers None rather than raising)
        return None
    if operation.streams != method.server_streaming:
        raise ValueError(f"{method.name}: the table and the proto disagree on streaming")
    found = _FOUND[operation] = GrpcMethod(
        operation=operation, path=f"/{operation.grpc_service}/{method.name}",
        request=message_class(method.input_type),
        response=message_class(method.output_type),
        streams=method.server_streaming)
    return found


def grpc_methods(table: OperationTable = OPERATIONS) -> tuple[GrpcMethod, ...]:
    """Every rpc that carries an operation of ``table``: the A2A service's in the proto's
    order, then a deployment's own in the table's."""
    methods = [m for m in map(grpc_method, table) if m is not None]
    order = {m.name: i for i, m in enumerate(service().methods)}
    return tuple(sorted(methods, key=lambda m: (
        m.operation.grpc_service != SERVICE_NAME, order.get(m.operation.name, 0))))


def add_proto(file: descriptor_pb2.FileDescriptorProto) -> None:
    """Describe a deployment's own gRPC service (and its messages) beside the A2A proto's,
    so that an operation whose entry names it (``grpc_service``) is served and called over
    gRPC. Its imports must be in the pool already (the A2A proto, google.protobuf's);
    adding the same file twice is allowed, another file of the same name is not."""
    pool().Add(file)
