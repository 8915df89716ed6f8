"""A2A 1.0 output: the ProtoJSON of ``a2a.proto`` (package ``lf.a2a.v1``).

lowerCamel member names, ``TASK_STATE_*`` / ``ROLE_*`` enum names, flat parts
(``text`` | ``raw`` | ``url`` | ``data`` plus ``filename``, ``mediaType``,
``metadata``), no ``kind``, no ``final``; polymorphic results are wrapped by
member name (``{"task": …}``). Unset and empty members are omitted, REQUIRED
ones never are. What 1.0 spells like 0.3 is written by the shared writers of
:mod:`._encode`; this module holds only what differs. Input is read by the
tolerant decoder (:mod:`._decode`).

What 1.0 cannot carry and is therefore dropped (documented, tested): the
0.3 ``final`` flag, all but the first authentication scheme, and ``metadata``
on GetTask/SubscribeToTask requests (those proto messages have none).

Errors carry ``data`` as a list of ``google.protobuf.Any`` details: always a
``google.rpc.ErrorInfo``, plus a ``google.rpc.BadRequest`` when the error
names bad fields. ErrorInfo metadata is string to string, so free-form
``RPCError.data`` travels JSON-encoded under the key :data:`DATA_METADATA_KEY`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from .. import models as m
from .._jsonvalue import JSONObject, JSONValue
from ..errors import RPCError
from ._encode import Dialect, int64, writers
from ._enums import ROLE_1_0, STATE_1_0
from ._json import compact, encode_bytes

__all__ = [
    "DIALECT",
    "ERROR_INFO_TYPE",
    "BAD_REQUEST_TYPE",
    "ERROR_DOMAIN",
    "DATA_METADATA_KEY",
    "encode_part",
    "encode_push_config",
    "encode_error",
]

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"
ERROR_DOMAIN = "a2a-protocol.org"
#: ErrorInfo metadata key holding ``RPCError.data``, JSON-encoded.
DATA_METADATA_KEY = "data"


def encode_part(part: m.Part) -> JSONObject:
    """Exactly one content member; ``data`` may be any JSON value (null and [] included)."""
    out: JSONObject
    if part.__class__ is m.TextPart or isinstance(part, m.TextPart):  # (most parts: no call)
        out = {"text": part.text}
    elif isinstance(part, m.FilePart):
        out = {"raw": encode_bytes(part.raw)} if part.raw is not None else {"url": part.url}
        if part.filename is not None:
            out["filename"] = part.filename
    elif isinstance(part, m.DataPart):
        out = {"data": part.data}
    else:
        raise TypeError(f"not a part: {part!r}")
    if part.media_type is not None:
        out["mediaType"] = part.media_type
    if part.metadata is not None:
        out["metadata"] = dict(part.metadata)
    return out


# -- push notifications ------------------------------------------------------------------


def encode_authentication(auth: m.AuthenticationInfo) -> JSONObject:
    """1.0 has one REQUIRED ``scheme``: the first of ours ("" when there is none)."""
    scheme = auth.schemes[0] if auth.schemes else ""
    return {"scheme": scheme, **compact({"credentials": auth.credentials})}


def encode_push_config(config: m.PushNotificationConfig) -> JSONObject:
    """A TaskPushNotificationConfig without a task (as SendMessageConfiguration wants it)."""
    auth = config.authentication
    return compact(
        {
            "id": config.id,
            "url": config.url,
            "token": config.token,
            "authentication": None if auth is None else encode_authentication(auth),
        }
    )


def encode_task_push_config(config: m.TaskPushNotificationConfig) -> JSONObject:
    """Flat: the webhook's members next to ``taskId`` and ``tenant``."""
    return {
        "taskId": config.task_id,
        **encode_push_config(config.push_notification_config),
        **compact({"tenant": config.tenant}),
    }


# -- requests ----------------------------------------------------------------------------


def encode_send_configuration(config: m.SendMessageConfiguration) -> JSONObject:
    """``returnImmediately`` is the negation of ``blocking``; sent only when true."""
    push = config.push_notification_config
    return compact(
        {
            "acceptedOutputModes": list(config.accepted_output_modes),
            "historyLength": config.history_length,
            "taskPushNotificationConfig": None if push is None else encode_push_config(push),
            "returnImmediately": True if not config.blocking else None,
            "ifGenerationMatch": int64(config.if_generation_match),
        }
    )


def encode_get_task(request: m.GetTaskRequest) -> JSONObject:
    return {
        "id": request.id,
        **compact({"historyLength": request.history_length, "tenant": request.tenant,
                   "currentGeneration": int64(request.current_generation)}),
    }


def encode_subscribe(request: m.SubscribeToTaskRequest) -> JSONObject:
    return {"id": request.id, **compact({"tenant": request.tenant})}


def encode_get_push_config(request: m.GetTaskPushNotificationConfigRequest) -> JSONObject:
    """1.0's ``id`` is the CONFIG id; the task is ``taskId``."""
    return {
        "taskId": request.task_id,
        **compact({"id": request.config_id, "tenant": request.tenant}),
    }


def encode_delete_push_config(request: m.DeleteTaskPushNotificationConfigRequest) -> JSONObject:
    return {
        "taskId": request.task_id,
        "id": request.config_id,
        **compact({"tenant": request.tenant}),
    }


def encode_list_push_configs(request: m.ListTaskPushNotificationConfigsRequest) -> JSONObject:
    paging = {"pageSize": request.page_size, "pageToken": request.page_token}
    return {"taskId": request.task_id, **compact({**paging, "tenant": request.tenant})}


# -- errors ------------------------------------------------------------------------------


def encode_error(error: RPCError) -> JSONObject:
    """``{code, message, data: [ErrorInfo, BadRequest?]}`` (TCK JSONRPC-ERR-003)."""
    metadata: JSONObject = {}
    if error.data is not None:
        metadata[DATA_METADATA_KEY] = json.dumps(error.data, sort_keys=True, default=str)
    metadata.update({str(k): str(v) for k, v in error.metadata.items()})
    details: list[JSONValue] = [
        {
            "@type": ERROR_INFO_TYPE,
            "reason": error.reason or _default_reason(error),
            "domain": ERROR_DOMAIN,
            "metadata": metadata,
        }
    ]
    if error.field_violations:
        violations: list[JSONValue] = [
            {"field": f, "description": d} for f, d in error.field_violations.items()
        ]
        details.append({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations})
    return {"code": error.code, "message": error.message, "data": details}


def _default_reason(error: RPCError) -> str:
    """UPPER_SNAKE of the class name (ParseError -> PARSE_ERROR); unknown codes say so."""
    if type(error) is RPCError:
        return "UNKNOWN_ERROR"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(error).__name__).upper()


#: model type -> its 1.0-only encoder; the rest are :data:`._encode.SHARED_WRITERS`.
_OWN: Mapping[type, Callable[[Any], JSONObject]] = {
    m.AuthenticationInfo: encode_authentication,
    m.PushNotificationConfig: encode_push_config,
    m.TaskPushNotificationConfig: encode_task_push_config,
    m.SendMessageConfiguration: encode_send_configuration,
    m.GetTaskRequest: encode_get_task,
    m.SubscribeToTaskRequest: encode_subscribe,
    m.GetTaskPushNotificationConfigRequest: encode_get_push_config,
    m.DeleteTaskPushNotificationConfigRequest: encode_delete_push_config,
    m.ListTaskPushNotificationConfigsRequest: encode_list_push_configs,
}

DIALECT = Dialect(
    version="1.0",
    tagged=False,
    final=False,
    tenants=True,
    states=STATE_1_0,
    roles=ROLE_1_0,
    part=encode_part,
    error=encode_error,
    writers=writers(_OWN),
)
