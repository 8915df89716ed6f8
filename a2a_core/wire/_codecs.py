"""The codec pieces an operation's entry in :mod:`a2a_core.optable` names.

Each operation reads its params with a ``(params, path, version) -> request``
decoder, writes its result with a ``(result, version) -> JSON`` encoder and
reads a result back (client side) with a ``(data, path) -> result`` decoder.
Most are a model's own codec; the few that differ (the push-config ``id``
whose meaning the version decides, the event-shaped results, Delete's
``null``, 0.3's bare array of configs) are here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .._jsonvalue import JSONValue
from ..models import (
    AgentCard,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsResponse,
    Message,
    StreamEvent,
    Task,
)
from . import _encode
from . import _v0_3 as v0_3
from . import _v1_0 as v1_0
from ._card import decode_card, encode_card
from ._common import check_version, invalid
from ._decode import decode_stream_event
from ._decode_requests import DECODERS, decode_delete_push_config, decode_get_push_config
from ._derived import derived_decoder

__all__ = [
    "QuickDecoder",
    "RequestDecoder",
    "ResultDecoder",
    "ResultEncoder",
    "decode_card_result",
    "decode_delete_request",
    "decode_empty",
    "decode_get_push_request",
    "decode_send_result",
    "encode_event",
    "encode_model",
    "encode_null",
    "encode_push_configs",
    "request_decoder",
    "result_decoder",
]

T = TypeVar("T")

#: (params, JSON path, negotiated version) -> the request model.
RequestDecoder = Callable[[Mapping[str, JSONValue], str, str], T]
#: (params, max parts) -> the request, decoded and capped in one pass; None: the shape is not
#: the plain one, so the full decoder and the limits decide (and word any refusal).
QuickDecoder = Callable[[Mapping[str, JSONValue], int], T | None]
#: (result, version) -> the ``result`` member (JSON-ready).
ResultEncoder = Callable[[T, str], Any]
#: (the ``result`` member, JSON path) -> the result model (client side).
ResultDecoder = Callable[[JSONValue, str], T]

_DIALECTS: Mapping[str, _encode.Dialect] = {"0.3": v0_3.DIALECT, "1.0": v1_0.DIALECT}


def request_decoder(cls: type[T]) -> RequestDecoder[T]:
    """The model's own tolerant decoder (hand-written, else derived from its fields:
    :mod:`._derived`); the version does not change what it reads."""
    decode = DECODERS.get(cls) or derived_decoder(cls)

    def decode_request(params: Mapping[str, JSONValue], path: str, version: str) -> T:
        result: T = decode(params, path)
        return result

    return decode_request


def decode_get_push_request(
    params: Mapping[str, JSONValue], path: str, version: str
) -> GetTaskPushNotificationConfigRequest:
    """A lone ``id`` is the task in 0.3, the config in 1.0."""
    return decode_get_push_config(params, path, version)


def decode_delete_request(
    params: Mapping[str, JSONValue], path: str, version: str
) -> DeleteTaskPushNotificationConfigRequest:
    """As :func:`decode_get_push_request`."""
    return decode_delete_push_config(params, path, version)


# -- results, server side ----------------------------------------------------------------


def encode_model(result: object, version: str) -> Any:
    """The model in that version's shape (an AgentCard by the card codec)."""
    if isinstance(result, AgentCard):
        return encode_card(result, version)
    return _DIALECTS[check_version(version)].encode(result)


def encode_event(result: StreamEvent, version: str) -> Any:
    """0.3: the bare object with kind; 1.0: the one-member wrapper (SendMessageResponse
    for SendMessage, StreamResponse for the streams)."""
    return _encode.encode_stream_event(result, _DIALECTS[check_version(version)])


def encode_null(result: None, version: str) -> Any:
    """Delete: 1.0's proto says Empty (``{}``); the official SDK answers ``null`` and the
    conformance kit checks for it, so both versions send null (decode takes both)."""
    return None


def encode_push_configs(result: ListTaskPushNotificationConfigsResponse, version: str) -> Any:
    """0.3 answers a bare array (no paging); 1.0 ``{configs, nextPageToken}``."""
    if version == "0.3":
        return v0_3.encode_list_push_configs_result(result)
    return encode_model(result, version)


# -- results, client side ----------------------------------------------------------------


def decode_send_result(data: object, path: str) -> Task | Message:
    event = decode_stream_event(data, path)
    if not isinstance(event, (Task, Message)):
        raise invalid(path, f"expected a task or a message, got a {type(event).__name__}")
    return event


def decode_empty(data: object, path: str) -> None:
    """Delete answers ``null`` (0.3, and the 1.0 SDK) or ``{}`` (1.0 Empty)."""
    if data is not None and data != {}:
        raise invalid(path, "expected null or {}")


def result_decoder(cls: type[T]) -> ResultDecoder[T]:
    """Client side: a result that is one model, read by its own decoder (hand-written, else
    derived from its fields)."""
    decode = DECODERS.get(cls) or derived_decoder(cls)

    def decode_result(data: JSONValue, path: str) -> T:
        result: T = decode(data, path)
        return result

    return decode_result


def decode_card_result(data: object, path: str) -> AgentCard:
    return decode_card(data, path=path)
