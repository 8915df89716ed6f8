"""The only place JSON shapes exist: models <-> wire dicts, both protocol versions.

Encoding is per version (``"0.3"`` or ``"1.0"``; anything else is a
``ValueError``): the server answers in the dialect the request negotiated.
Decoding is tolerant: it reads either dialect's shapes and spellings whatever
was negotiated, because both method sets are accepted on one endpoint.
The one place where a member *means* different things (the push-config
``id``), ``decode_params`` lets ``version`` decide; see ``_decode_requests._push_target``.

Bad input raises :class:`~a2a_core.errors.InvalidParamsError` naming the JSON
path of the bad field. ``decode_result`` (client side) raises
:class:`~a2a_core.errors.InvalidAgentResponseError` instead, with the same
path and ``field_violations``: there the fault is the agent's, not ours.

The Agent Card codec lives in :mod:`.card`; ``encode``/``decode`` delegate to it.

Layout: :mod:`._common` (versions, limits, the error shape), :mod:`._limits`
(the caps on what a client sends, applied to requests only), :mod:`._quick`
(plain SendMessage params decoded and capped in one pass), :mod:`._json`
(timestamps, base64, omitted members), :mod:`._enums` (state and role
spellings), :mod:`._fields` (the path-tracking reader), :mod:`._decode` and
:mod:`._decode_requests` (the tolerant decoders), :mod:`._error_decode` (error
objects read back), :mod:`._encode` (the :class:`~._encode.Dialect` and the
writers both versions share), :mod:`.v0_3` and :mod:`.v1_0` (what each version
writes its own way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, cast, overload

from ..errors import InvalidAgentResponseError, InvalidParamsError, RPCError
from ..methods import Operation
from ..models import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from . import _encode, v0_3, v1_0
from ._common import MAX_PARTS, VERSIONS, check_task_id, check_version, invalid
from ._decode import decode_stream_event as _decode_stream_event
from ._decode import decode_task, decode_task_push_config
from ._decode_requests import (
    DECODERS,
    decode_delete_push_config,
    decode_get_push_config,
    decode_list_push_configs_response,
    decode_list_tasks_response,
)
from ._error_decode import decode_error
from ._limits import check_request_limits
from ._quick import quick_send_request
from .card import decode_card, encode_card

__all__ = [
    "VERSIONS",
    "encode",
    "decode",
    "encode_stream_event",
    "decode_stream_event",
    "encode_params",
    "decode_params",
    "encode_result",
    "decode_result",
    "encode_error",
    "decode_error",
]

T = TypeVar("T")

#: version -> what its output spells its own way.
_DIALECTS: Mapping[str, _encode.Dialect] = {"0.3": v0_3.DIALECT, "1.0": v1_0.DIALECT}


def _dialect(version: str) -> _encode.Dialect:
    """The version's dialect; an unsupported version is a ValueError, never a default."""
    return _DIALECTS[check_version(version)]


def _decode_card(data: Any, path: str) -> AgentCard:
    return decode_card(data, path=path)


#: model type -> tolerant decoder (data, path).
_DECODERS: Mapping[type, Callable[[Any, str], Any]] = {**DECODERS, AgentCard: _decode_card}

#: operation -> the request model its params decode to.
REQUEST_TYPES: Mapping[Operation, type] = {
    Operation.SEND_MESSAGE: SendMessageRequest,
    Operation.SEND_STREAMING_MESSAGE: SendMessageRequest,
    Operation.GET_TASK: GetTaskRequest,
    Operation.LIST_TASKS: ListTasksRequest,
    Operation.CANCEL_TASK: CancelTaskRequest,
    Operation.SUBSCRIBE_TO_TASK: SubscribeToTaskRequest,
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: TaskPushNotificationConfig,
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: GetTaskPushNotificationConfigRequest,
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: ListTaskPushNotificationConfigsRequest,
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: DeleteTaskPushNotificationConfigRequest,
    Operation.GET_EXTENDED_AGENT_CARD: GetExtendedAgentCardRequest,
}

_STREAM_TYPES = (Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)
_EVENT_RESULTS = frozenset(
    {Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK}
)

#: operation -> what its handler may return.
RESULT_TYPES: Mapping[Operation, tuple[type, ...]] = {
    Operation.SEND_MESSAGE: (Task, Message),
    Operation.SEND_STREAMING_MESSAGE: _STREAM_TYPES,
    Operation.GET_TASK: (Task,),
    Operation.LIST_TASKS: (ListTasksResponse,),
    Operation.CANCEL_TASK: (Task,),
    Operation.SUBSCRIBE_TO_TASK: _STREAM_TYPES,
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (TaskPushNotificationConfig,),
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (TaskPushNotificationConfig,),
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (ListTaskPushNotificationConfigsResponse,),
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (type(None),),
    Operation.GET_EXTENDED_AGENT_CARD: (AgentCard,),
}


# -- models ------------------------------------------------------------------------------


def encode(obj: object, version: str) -> dict[str, Any]:
    """Any model as that version's JSON object (AgentCard via the card codec)."""
    dialect = _dialect(version)
    if isinstance(obj, AgentCard):
        return encode_card(obj, version)
    return dialect.encode(obj)


def decode(cls: type[T], data: Any, *, path: str = "") -> T:
    """Read ``cls`` from either dialect; bad input raises InvalidParamsError naming ``path``."""
    decoder = _DECODERS.get(cls)
    if decoder is None:
        raise TypeError(f"no wire decoding for {getattr(cls, '__name__', cls)!r}")
    return cast(T, decoder(data, path))


def encode_stream_event(event: StreamEvent, version: str) -> dict[str, Any]:
    """0.3: the bare object with ``kind``; 1.0: a StreamResponse ``{"statusUpdate": …}``."""
    dialect = _dialect(version)
    if not isinstance(event, _STREAM_TYPES):
        raise TypeError(f"not a stream event: {type(event).__name__}")
    return _encode.encode_stream_event(event, dialect)


def decode_stream_event(data: Any, *, path: str = "") -> StreamEvent:
    """Either shape: a 1.0 wrapper or a bare 0.3 object."""
    return _decode_stream_event(data, path)


# -- params and results ------------------------------------------------------------------


def encode_params(op: Operation, request: object, version: str) -> dict[str, Any]:
    """Client side: the request model as ``params`` (for 0.3's card call that is ``{}``)."""
    expected = REQUEST_TYPES[op]
    if not isinstance(request, expected):
        raise TypeError(f"{op.value} takes a {expected.__name__}, not {type(request).__name__}")
    return encode(request, version)


#: What ``decode_params`` returns for some operation (each overload names its own).
Request = (
    SendMessageRequest
    | GetTaskRequest
    | ListTasksRequest
    | CancelTaskRequest
    | SubscribeToTaskRequest
    | TaskPushNotificationConfig
    | GetTaskPushNotificationConfigRequest
    | ListTaskPushNotificationConfigsRequest
    | DeleteTaskPushNotificationConfigRequest
    | GetExtendedAgentCardRequest
)
_SEND = Literal[Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE]


@overload
def decode_params(op: _SEND, params: object, version: str, *, path: str = ...,
                  max_parts: int = ...) -> SendMessageRequest: ...
@overload
def decode_params(op: Literal[Operation.GET_TASK], params: object, version: str, *,
                  path: str = ..., max_parts: int = ...) -> GetTaskRequest: ...
@overload
def decode_params(op: Literal[Operation.LIST_TASKS], params: object, version: str, *,
                  path: str = ..., max_parts: int = ...) -> ListTasksRequest: ...
@overload
def decode_params(op: Literal[Operation.CANCEL_TASK], params: object, version: str, *,
                  path: str = ..., max_parts: int = ...) -> CancelTaskRequest: ...
@overload
def decode_params(op: Literal[Operation.SUBSCRIBE_TO_TASK], params: object, version: str, *,
                  path: str = ..., max_parts: int = ...) -> SubscribeToTaskRequest: ...
@overload
def decode_params(op: Literal[Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG], params: object,
                  version: str, *, path: str = ...,
                  max_parts: int = ...) -> TaskPushNotificationConfig: ...
@overload
def decode_params(op: Literal[Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG], params: object,
                  version: str, *, path: str = ...,
                  max_parts: int = ...) -> GetTaskPushNotificationConfigRequest: ...
@overload
def decode_params(op: Literal[Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS], params: object,
                  version: str, *, path: str = ...,
                  max_parts: int = ...) -> ListTaskPushNotificationConfigsRequest: ...
@overload
def decode_params(op: Literal[Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG], params: object,
                  version: str, *, path: str = ...,
                  max_parts: int = ...) -> DeleteTaskPushNotificationConfigRequest: ...
@overload
def decode_params(op: Literal[Operation.GET_EXTENDED_AGENT_CARD], params: object, version: str,
                  *, path: str = ..., max_parts: int = ...) -> GetExtendedAgentCardRequest: ...
@overload
def decode_params(op: Operation, params: object, version: str, *, path: str = ...,
                  max_parts: int = ...) -> Request: ...
def decode_params(
    op: Operation, params: object, version: str, *, path: str = "params",
    max_parts: int = MAX_PARTS,
) -> Request:
    """Server side: ``params`` as the operation's request model, in either dialect's shape.

    Only GetExtendedAgentCard may omit its params. For push-config Get/Delete,
    ``version`` decides what a lone ``id`` means (0.3: the task; 1.0: the config).
    Every task id the caller names must look like one a server issues
    (:func:`~._common.check_task_id`), and every identifier, list and free-form
    member is held to its cap (:mod:`._limits`; ``max_parts`` for a message's
    parts); in a 0.3 request a data part's ``data`` must be an object. Results
    from peers and stored tasks are not held to any of that.
    """
    check_version(version)
    if params is None and op is Operation.GET_EXTENDED_AGENT_CARD:
        params = {}
    if params.__class__ is not dict and not isinstance(params, Mapping):
        raise invalid(path, "params must be an object")
    if op in _SENDS:  # the plain shape of a send, in one pass (None: anything else)
        quick = quick_send_request(params, max_parts)
        if quick is not None:
            return quick
    request: Request
    if op is Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG:
        request = decode_get_push_config(params, path, version)
    elif op is Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG:
        request = decode_delete_push_config(params, path, version)
    else:
        request = _DECODERS[REQUEST_TYPES[op]](params, path)
    check_request_limits(op, params, path, version, max_parts=max_parts)
    _check_task_ids(request, params, path)
    return request


_SENDS = frozenset({Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE})
_PUSH_REQUESTS = (
    TaskPushNotificationConfig,
    GetTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
)


def _check_task_ids(request: object, params: Mapping[str, Any], path: str) -> None:
    """Apply the task-id format check to the id(s) a request names, at their JSON path."""
    if isinstance(request, (GetTaskRequest, CancelTaskRequest, SubscribeToTaskRequest)):
        check_task_id(request.id, f"{path}.id")
    elif isinstance(request, SendMessageRequest):
        if request.message.task_id is not None:
            check_task_id(request.message.task_id, f"{path}.message.taskId")
    elif isinstance(request, _PUSH_REQUESTS):
        member = next((k for k in ("taskId", "task_id") if params.get(k) is not None), "id")
        check_task_id(request.task_id, f"{path}.{member}")


def encode_result(op: Operation, result: object, version: str) -> Any:
    """Server side: the handler's result as that version's ``result`` member."""
    check_version(version)
    if not isinstance(result, RESULT_TYPES[op]):
        raise TypeError(f"{op.value} cannot answer a {type(result).__name__}")
    if op is Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG:
        # 1.0's proto says Empty (``{}``); the official SDK answers ``null`` and the
        # conformance kit checks for it, so both versions send null (decode takes both).
        return None
    if op in _EVENT_RESULTS:
        # 0.3: the bare object with kind; 1.0: the one-member wrapper, which is
        # SendMessageResponse for SendMessage and StreamResponse for the streams.
        return encode_stream_event(cast(StreamEvent, result), version)
    if isinstance(result, ListTaskPushNotificationConfigsResponse) and version == "0.3":
        return v0_3.encode_list_push_configs_result(result)
    return encode(result, version)


def _decode_send_result(data: Any, path: str) -> Task | Message:
    event = _decode_stream_event(data, path)
    if not isinstance(event, (Task, Message)):
        raise invalid(path, f"expected a task or a message, got a {type(event).__name__}")
    return event


def _decode_empty(data: Any, path: str) -> None:
    """Delete answers ``null`` (0.3, and the 1.0 SDK) or ``{}`` (1.0 Empty)."""
    if data is not None and data != {}:
        raise invalid(path, "expected null or {}")


_RESULT_DECODERS: Mapping[Operation, Callable[[Any, str], Any]] = {
    Operation.SEND_MESSAGE: _decode_send_result,
    Operation.SEND_STREAMING_MESSAGE: _decode_stream_event,
    Operation.GET_TASK: decode_task,
    Operation.LIST_TASKS: decode_list_tasks_response,
    Operation.CANCEL_TASK: decode_task,
    Operation.SUBSCRIBE_TO_TASK: _decode_stream_event,
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: decode_task_push_config,
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: decode_task_push_config,
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: decode_list_push_configs_response,
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: _decode_empty,
    Operation.GET_EXTENDED_AGENT_CARD: _decode_card,
}


def decode_result(op: Operation, data: Any, version: str) -> Any:
    """Client side, tolerant (bare or wrapped, either spelling).

    A malformed result raises InvalidAgentResponseError (-32006): the agent is at fault.
    """
    check_version(version)
    try:
        return _RESULT_DECODERS[op](data, "result")
    except InvalidParamsError as exc:
        raise InvalidAgentResponseError(exc.message, field_violations=exc.field_violations) from exc


# -- errors ------------------------------------------------------------------------------


def encode_error(err: RPCError, version: str) -> dict[str, Any]:
    """The JSON-RPC ``error`` member: 0.3 free-form ``data``, 1.0 ErrorInfo/BadRequest details."""
    return _dialect(version).error(err)
