"""gRPC messages <-> the 1.0 JSON wire form, and A2A errors <-> ``google.rpc.Status``.

ProtoJSON (protobuf's canonical JSON mapping) is the shape of the 1.0 JSON bindings: the
spec derives both from the same proto. So a request message becomes the same params a
JSON-RPC call carries (:func:`params_of`), and a result the 1.0 codecs wrote becomes the
rpc's response message (:func:`result_message`); the operations and their codecs see no
difference. Two things ProtoJSON changes on the way: ``Struct`` numbers are doubles
(``1`` arrives as ``1.0``), and zero values of plain proto3 fields are left out.

Errors travel as the gRPC status code of the spec's table
(:data:`a2a_core._rest.GRPC_STATUS`, but for :data:`GRPC_ONLY_STATUS`) with a
``google.rpc.Status`` in the
``grpc-status-details-bin`` trailer whose details are the ErrorInfo (and BadRequest) the
other bindings send; a client reads the typed error back by the ErrorInfo reason.
"""

from __future__ import annotations

from collections.abc import Mapping

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from .._jsonvalue import JSONObject, JSONValue
from .._rest import decode_status, encode_status
from .._versioning import V1_0
from ..errors import (
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    RPCError,
    VersionNotSupportedError,
)
from ..models import StreamEvent
from ..wire import encode_stream_event
from ._defaults import with_required_defaults
from ._fromjson import GiveUp, parse
from .proto import GrpcMethod, code_number, message_class, pool

__all__ = [
    "GRPC_ONLY_STATUS",
    "decode_status_details",
    "error_status",
    "params_of",
    "request_message",
    "result_message",
    "result_value",
    "stream_message",
]

_STATUS = "google.rpc.Status"

#: Where a gRPC call's code is not the one :data:`a2a_core._rest.GRPC_STATUS` names.
#: A version the server does not speak is UNIMPLEMENTED, as the 1.0.0 table and the 1.0
#: conformance kit (GRPC-ERR-002) have it: the rpc is not implemented in that version,
#: and no change of state makes it so, which is what FAILED_PRECONDITION (the 1.0.1
#: table's code) would tell a client to wait for. Clients read the error by its
#: ErrorInfo reason (VERSION_NOT_SUPPORTED), which does not change.
GRPC_ONLY_STATUS: Mapping[type[RPCError], str] = {
    VersionNotSupportedError: "UNIMPLEMENTED",
}


def params_of(message: Message) -> JSONObject:
    """Server side: a request message as the 1.0 params a JSON-RPC call would carry."""
    params: JSONObject = json_format.MessageToDict(message, descriptor_pool=pool())
    return params


def result_message(method: GrpcMethod, value: JSONValue) -> Message:
    """Server side: the operation's 1.0 result JSON as the rpc's response message.

    :raises InternalError: our own result does not fit the proto (a bug, logged by the
        caller, never shown to the peer beyond the code).
    """
    return _parsed(method.response, {} if value is None else value, InternalError)


def stream_message(event: StreamEvent) -> Message:
    """Server side: one stream event as a ``StreamResponse``."""
    return _parsed(message_class("lf.a2a.v1.StreamResponse"),
                   encode_stream_event(event, V1_0), InternalError)


def request_message(method: GrpcMethod, params: JSONObject) -> Message:
    """Client side: the 1.0 params the client's codec wrote as the rpc's request message.

    :raises InvalidParamsError: a field the proto has no place for (a preview extension's).
    """
    return _parsed(method.request, params, InvalidParamsError)


def result_value(message: Message) -> JSONValue:
    """Client side: a response message as 1.0 result JSON (``Empty``: null), REQUIRED
    fields at their defaults written out (:mod:`._defaults`)."""
    if message.DESCRIPTOR.full_name == "google.protobuf.Empty":
        return None
    value: JSONObject = json_format.MessageToDict(message, descriptor_pool=pool())
    return with_required_defaults(message.DESCRIPTOR.name, value)


def _parsed(cls: type[Message], value: JSONValue, error: type[RPCError]) -> Message:
    try:  # the common shapes without ParseDict's cost; ParseDict for the rest (and errors)
        return parse(value, cls())
    except GiveUp:
        pass
    try:
        if not isinstance(value, dict):
            raise TypeError(f"a JSON object is needed, not {type(value).__name__}")
        return json_format.ParseDict(value, cls(), descriptor_pool=pool())
    except (json_format.ParseError, TypeError, ValueError) as exc:
        raise error(f"{cls.DESCRIPTOR.name} does not fit the 1.0 proto: {exc}") from None


def error_status(err: RPCError, code_name: str | None = None) -> tuple[str, bytes]:
    """Server side: the gRPC code name and the serialized ``google.rpc.Status`` of ``err``.

    :param code_name: the code when it is not the spec table's (UNAUTHENTICATED,
        PERMISSION_DENIED for a refused caller, UNAVAILABLE when no stream place is free).
    """
    body = encode_status(err)["error"]
    name = code_name or GRPC_ONLY_STATUS.get(type(err)) or body["status"]
    status = json_format.ParseDict(
        {"code": code_number(name), "message": err.message, "details": body["details"] or []},
        message_class(_STATUS)(), descriptor_pool=pool())  # each detail an Any, by its @type
    return name, status.SerializeToString()


def decode_status_details(code_name: str, message: str, details: bytes | None) -> RPCError | None:
    """Client side: the typed error a ``grpc-status-details-bin`` trailer names.

    None when there is none, or it names no A2A reason (another service, a proxy): the
    caller then reports the bare status.
    """
    if not details:
        return None
    try:
        status = json_format.MessageToDict(message_class(_STATUS).FromString(details),
                                           descriptor_pool=pool())
    except (DecodeError, json_format.Error, TypeError, KeyError):
        raise InvalidAgentResponseError("grpc-status-details-bin is no google.rpc.Status") \
            from None
    payload: Mapping[str, JSONValue] = {"error": {
        "code": status.get("code", 0), "status": code_name,
        "message": status.get("message") or message, "details": status.get("details", [])}}
    return decode_status(payload)
