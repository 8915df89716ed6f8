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
:mod:`._decode_requests` (the tolerant decoders), :mod:`._codecs` (the codec
pieces the entries of :mod:`a2a_core.optable` name), :mod:`._error_decode` (error
objects read back), :mod:`._encode` (the :class:`~._encode.Dialect` and the
writers both versions share), :mod:`.v0_3` and :mod:`.v1_0` (what each version
writes its own way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .._jsonvalue import JSONObject, JSONValue
from ..errors import InvalidAgentResponseError, InvalidParamsError, RPCError
from ..models import (
    AgentCard,
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from . import _encode
from . import _v0_3 as v0_3
from . import _v1_0 as v1_0
from ._card import decode_card, encode_card
from ._common import MAX_PARTS, VERSIONS, check_task_id, check_version, invalid
from ._decode import decode_stream_event as _decode_stream_event
from ._decode_requests import DECODERS
from ._error_decode import decode_error
from ._limits import check_request_limits

if TYPE_CHECKING:
    from ..optable import OperationSpec

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
Req = TypeVar("Req")
Res = TypeVar("Res")

#: version -> what its output spells its own way.
_DIALECTS: Mapping[str, _encode.Dialect] = {"0.3": v0_3.DIALECT, "1.0": v1_0.DIALECT}


def _dialect(version: str) -> _encode.Dialect:
    """The version's dialect; an unsupported version is a ValueError, never a default."""
    try:
        return _DIALECTS[version]  # (no call on the way every encoding takes)
    except (KeyError, TypeError):  # not one of ours, or not even a string
        check_version(version)
        raise


def _decode_card(data: object, path: str) -> AgentCard:
    return decode_card(data, path=path)


#: model type -> tolerant decoder (data, path).
_DECODERS: Mapping[type, Callable[[Any, str], Any]] = {**DECODERS, AgentCard: _decode_card}

_STREAM_TYPES = (Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)


# -- models ------------------------------------------------------------------------------


def encode(obj: object, version: str) -> JSONObject:
    """Any model as that version's JSON object (AgentCard via the card codec)."""
    dialect = _dialect(version)
    if isinstance(obj, AgentCard):
        return encode_card(obj, version)
    return dialect.encode(obj)


def decode(cls: type[T], data: object, *, path: str = "") -> T:
    """Read ``cls`` from either dialect; bad input raises InvalidParamsError naming ``path``."""
    decoder = _DECODERS.get(cls)
    if decoder is None:
        raise TypeError(f"no wire decoding for {getattr(cls, '__name__', cls)!r}")
    return cast(T, decoder(data, path))


def encode_stream_event(event: StreamEvent, version: str) -> JSONObject:
    """0.3: the bare object with ``kind``; 1.0: a StreamResponse ``{"statusUpdate": …}``."""
    dialect = _dialect(version)
    if not isinstance(event, _STREAM_TYPES):
        raise TypeError(f"not a stream event: {type(event).__name__}")
    return _encode.encode_stream_event(event, dialect)


def decode_stream_event(data: object, *, path: str = "") -> StreamEvent:
    """Either shape: a 1.0 wrapper or a bare 0.3 object."""
    return _decode_stream_event(data, path)


# -- params and results ------------------------------------------------------------------


def encode_params(op: OperationSpec[Req, Any], request: Req, version: str) -> JSONObject:
    """Client side: the request model as ``params`` (for 0.3's card call that is ``{}``)."""
    expected = op.request
    if not isinstance(request, expected):
        raise TypeError(f"{op.name} takes a {expected.__name__}, not {type(request).__name__}")
    return encode(request, version)


def decode_params(
    op: OperationSpec[Req, Any], params: object, version: str, *, path: str = "params",
    max_parts: int = MAX_PARTS,
) -> Req:
    """Server side: ``params`` as the operation's request model, in either dialect's shape.

    Only an operation whose entry says ``params_optional`` (GetExtendedAgentCard) may
    omit its params. For push-config Get/Delete, ``version`` decides what a lone ``id``
    means (0.3: the task; 1.0: the config).
    Every task id the caller names must look like one a server issues
    (:func:`~._common.check_task_id`), and every identifier, list and free-form
    member is held to its cap (:mod:`._limits`, as the entry's ``limits`` says;
    ``max_parts`` for a message's parts); in a 0.3 request a data part's ``data``
    must be an object. Results from peers and stored tasks are not held to any of that.
    """
    check_version(version)
    if params is None and op.params_optional:
        params = {}
    if params.__class__ is not dict and not isinstance(params, Mapping):
        raise invalid(path, "params must be an object")
    if op.quick_decode is not None:  # the plain shape, in one pass (None: anything else)
        quick = op.quick_decode(params, max_parts)
        if quick is not None:
            return quick
    request = op.decode_request(params, path, version)
    check_request_limits(op.limits, params, path, version, max_parts=max_parts,
                         request=op.request)
    _check_task_ids(op, request, params, path)
    return request


def _check_task_ids(
    op: OperationSpec[Any, Any], request: object, params: Mapping[str, JSONValue], path: str
) -> None:
    """Apply the task-id format check to the id a request names, at its JSON path: its
    ``task_id`` (sent as ``taskId``, or as a lone ``id`` in 0.3), else its ``id`` when the
    entry says ``task_in_id``, else its message's ``taskId``."""
    task_id = getattr(request, "task_id", None)
    if isinstance(task_id, str):
        member = next((k for k in ("taskId", "task_id") if params.get(k) is not None), "id")
        check_task_id(task_id, f"{path}.{member}")
        return
    named = getattr(request, "id", None)
    if op.task_in_id and isinstance(named, str):
        check_task_id(named, f"{path}.id")
        return
    in_message = getattr(getattr(request, "message", None), "task_id", None)
    if isinstance(in_message, str):
        check_task_id(in_message, f"{path}.message.taskId")


def encode_result(op: OperationSpec[Any, Res], result: Res, version: str) -> Any:
    """Server side: the handler's result as that version's ``result`` member."""
    check_version(version)
    if not isinstance(result, op.results):
        raise TypeError(f"{op.name} cannot answer a {type(result).__name__}")
    return op.encode_result(result, version)


def decode_result(op: OperationSpec[Any, Res], data: JSONValue, version: str) -> Res:
    """Client side, tolerant (bare or wrapped, either spelling).

    A malformed result raises InvalidAgentResponseError (-32006): the agent is at fault.
    """
    check_version(version)
    try:
        return op.decode_result(data, "result")
    except InvalidParamsError as exc:
        raise InvalidAgentResponseError(exc.message, field_violations=exc.field_violations) from exc


# -- errors ------------------------------------------------------------------------------


def encode_error(err: RPCError, version: str) -> JSONObject:
    """The JSON-RPC ``error`` member: 0.3 free-form ``data``, 1.0 ErrorInfo/BadRequest details."""
    return _dialect(version).error(err)
