"""A2A 0.3 output: the JSON of ``types.ts`` / the 0.3 JSON schema.

``kind`` on every Message, Task, Part and event; lower-case kebab states;
``"user"``/``"agent"``; file parts nested under ``file`` with ``bytes``/``uri``,
``name`` and ``mimeType``; ``final`` on status updates; push configs nested as
``{taskId, pushNotificationConfig}``. What 0.3 spells like 1.0 is written by
the shared writers of :mod:`._encode`; this module holds only what differs.
Input is read by the tolerant decoder (:mod:`._decode`), never here.

What 0.3 cannot carry and is therefore dropped (documented, tested):
``media_type`` of text and data parts, ``tenant`` everywhere, and the paging
fields of a push-config list request. Non-object ``DataPart.data`` is wrapped
as ``{"value": x}`` with ``metadata.data_part_compat = true``, which the
decoder undoes (the 1.0 SDK's compat rule).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import models as m
from .._jsonvalue import JSONObject
from ..errors import RPCError
from ._common import DATA_PART_COMPAT
from ._encode import Dialect, encode_task_id_params, writers
from ._enums import ROLE_0_3, STATE_0_3
from ._json import compact, encode_bytes, struct

__all__ = [
    "DIALECT",
    "encode_part",
    "encode_push_config",
    "encode_list_push_configs_result",
    "encode_error",
]


def encode_part(part: m.Part) -> JSONObject:
    if isinstance(part, m.TextPart):
        out: JSONObject = {"kind": "text", "text": part.text}
        if part.metadata is not None:
            out["metadata"] = dict(part.metadata)
        return out
    if isinstance(part, m.FilePart):
        content = {"bytes": encode_bytes(part.raw)} if part.raw is not None else {"uri": part.url}
        file = {**content, **compact({"name": part.filename, "mimeType": part.media_type})}
        return compact({"kind": "file", "file": file, "metadata": struct(part.metadata)})
    if isinstance(part, m.DataPart):
        return _encode_data_part(part)
    raise TypeError(f"not a part: {part!r}")


def _encode_data_part(part: m.DataPart) -> JSONObject:
    """0.3 data must be an object: wrap anything else and flag it for the decoder."""
    metadata = struct(part.metadata)
    data = part.data
    if not isinstance(data, Mapping):
        data = {"value": data}
        metadata = {**(metadata or {}), DATA_PART_COMPAT: True}
    return compact({"kind": "data", "data": dict(data), "metadata": metadata})


# -- push notifications ------------------------------------------------------------------


def encode_authentication(auth: m.AuthenticationInfo) -> JSONObject:
    return {"schemes": list(auth.schemes), **compact({"credentials": auth.credentials})}


def encode_push_config(config: m.PushNotificationConfig) -> JSONObject:
    auth = config.authentication
    return {
        "url": config.url,
        **compact(
            {
                "id": config.id,
                "token": config.token,
                "authentication": None if auth is None else encode_authentication(auth),
            }
        ),
    }


def encode_task_push_config(config: m.TaskPushNotificationConfig) -> JSONObject:
    """Nested form; ``tenant`` has no 0.3 spelling."""
    return {
        "taskId": config.task_id,
        "pushNotificationConfig": encode_push_config(config.push_notification_config),
    }


def encode_list_push_configs_result(
    response: m.ListTaskPushNotificationConfigsResponse,
) -> list[Any]:
    """0.3 answers a bare array (no paging)."""
    return [encode_task_push_config(c) for c in response.configs]


# -- requests ----------------------------------------------------------------------------


def encode_send_configuration(config: m.SendMessageConfiguration) -> JSONObject:
    """``blocking`` is always explicit: 0.3 gives it no default."""
    push = config.push_notification_config
    return {
        **compact(
            {
                "acceptedOutputModes": list(config.accepted_output_modes),
                "historyLength": config.history_length,
                "pushNotificationConfig": None if push is None else encode_push_config(push),
            }
        ),
        "blocking": config.blocking,
    }


def encode_get_task(request: m.GetTaskRequest) -> JSONObject:
    return {
        "id": request.id,
        **compact({"historyLength": request.history_length, "metadata": struct(request.metadata)}),
    }


def encode_get_push_config(request: m.GetTaskPushNotificationConfigRequest) -> JSONObject:
    """Trap: 0.3's ``id`` is the TASK id; the config is ``pushNotificationConfigId``."""
    return {"id": request.task_id, **compact({"pushNotificationConfigId": request.config_id})}


def encode_delete_push_config(request: m.DeleteTaskPushNotificationConfigRequest) -> JSONObject:
    return {"id": request.task_id, "pushNotificationConfigId": request.config_id}


def encode_list_push_configs(request: m.ListTaskPushNotificationConfigsRequest) -> JSONObject:
    return {"id": request.task_id}


def encode_error(error: RPCError) -> JSONObject:
    """``data`` goes out as is, and only when set."""
    encoded: JSONObject = {"code": error.code, "message": error.message}
    if error.data is not None:
        encoded["data"] = error.data
    return encoded


#: model type -> its 0.3-only encoder; the rest are :data:`._encode.SHARED_WRITERS`.
_OWN: Mapping[type, Callable[[Any], JSONObject]] = {
    m.AuthenticationInfo: encode_authentication,
    m.PushNotificationConfig: encode_push_config,
    m.TaskPushNotificationConfig: encode_task_push_config,
    m.SendMessageConfiguration: encode_send_configuration,
    m.GetTaskRequest: encode_get_task,
    m.GetTaskPushNotificationConfigRequest: encode_get_push_config,
    m.DeleteTaskPushNotificationConfigRequest: encode_delete_push_config,
    m.ListTaskPushNotificationConfigsRequest: encode_list_push_configs,
}

DIALECT = Dialect(
    version="0.3",
    tagged=True,
    final=True,
    tenants=False,
    states=STATE_0_3,
    roles=ROLE_0_3,
    part=encode_part,
    error=encode_error,
    # SubscribeToTask params are CancelTask's in 0.3: an id and metadata.
    writers={**writers(_OWN), m.SubscribeToTaskRequest: encode_task_id_params},
)
