"""A2A 1.0 output: the ProtoJSON of ``a2a.proto`` (package ``lf.a2a.v1``).

lowerCamel member names, ``TASK_STATE_*`` / ``ROLE_*`` enum names, flat parts
(``text`` | ``raw`` | ``url`` | ``data`` plus ``filename``, ``mediaType``,
``metadata``), no ``kind``, no ``final``; polymorphic results are wrapped by
member name (``{"task": …}``). Unset and empty members are omitted, REQUIRED
ones never are. Input is read by the tolerant decoder in :mod:`._common`.

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
from datetime import datetime
from typing import Any

from ..errors import RPCError
from ..models import (
    Artifact,
    AuthenticationInfo,
    CancelTaskRequest,
    DataPart,
    DeleteTaskPushNotificationConfigRequest,
    FilePart,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    PushNotificationConfig,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from ._common import ROLE_1_0, STATE_1_0, compact, encode_bytes, format_timestamp

__all__ = [
    "ENCODERS",
    "ERROR_INFO_TYPE",
    "BAD_REQUEST_TYPE",
    "ERROR_DOMAIN",
    "DATA_METADATA_KEY",
    "encode_part",
    "encode_message",
    "encode_task",
    "encode_stream_event",
    "encode_send_result",
    "encode_task_push_config",
    "encode_error",
]

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"
ERROR_DOMAIN = "a2a-protocol.org"
#: ErrorInfo metadata key holding ``RPCError.data``, JSON-encoded.
DATA_METADATA_KEY = "data"


def encode_part(part: Part) -> dict[str, Any]:
    """Exactly one content member; ``data`` may be any JSON value (null and [] included)."""
    if isinstance(part, TextPart):
        content: dict[str, Any] = {"text": part.text}
        filename = None
    elif isinstance(part, FilePart):
        content = {"raw": encode_bytes(part.raw)} if part.raw is not None else {"url": part.url}
        filename = part.filename
    elif isinstance(part, DataPart):
        content = {"data": part.data}
        filename = None
    else:
        raise TypeError(f"not a part: {part!r}")
    extra = {"filename": filename, "mediaType": part.media_type, "metadata": _struct(part.metadata)}
    return {**content, **compact(extra)}


def encode_message(message: Message) -> dict[str, Any]:
    return {
        "messageId": message.message_id,
        "role": ROLE_1_0[message.role],
        "parts": [encode_part(p) for p in message.parts],
        **compact(
            {
                "contextId": message.context_id,
                "taskId": message.task_id,
                "referenceTaskIds": list(message.reference_task_ids),
                "extensions": list(message.extensions),
                "metadata": _struct(message.metadata),
            }
        ),
    }


def encode_artifact(artifact: Artifact) -> dict[str, Any]:
    return {
        "artifactId": artifact.artifact_id,
        "parts": [encode_part(p) for p in artifact.parts],
        **compact(
            {
                "name": artifact.name,
                "description": artifact.description,
                "extensions": list(artifact.extensions),
                "metadata": _struct(artifact.metadata),
            }
        ),
    }


def encode_status(status: TaskStatus) -> dict[str, Any]:
    return {
        "state": STATE_1_0[status.state],
        **compact(
            {
                "message": None if status.message is None else encode_message(status.message),
                "timestamp": _timestamp(status.timestamp),
            }
        ),
    }


def encode_task(task: Task) -> dict[str, Any]:
    """``contextId`` is always sent, even empty (servers always set it)."""
    return {
        "id": task.id,
        "contextId": task.context_id,
        "status": encode_status(task.status),
        **compact(
            {
                "artifacts": [encode_artifact(a) for a in task.artifacts],
                "history": [encode_message(m) for m in task.history],
                "metadata": _struct(task.metadata),
            }
        ),
    }


def encode_status_update(event: TaskStatusUpdateEvent) -> dict[str, Any]:
    """No ``final`` in 1.0: the stream's end is the server closing it."""
    return {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": encode_status(event.status),
        **compact({"metadata": _struct(event.metadata)}),
    }


def encode_artifact_update(event: TaskArtifactUpdateEvent) -> dict[str, Any]:
    return {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": encode_artifact(event.artifact),
        **compact(
            {
                "append": event.append or None,
                "lastChunk": event.last_chunk or None,
                "metadata": _struct(event.metadata),
            }
        ),
    }


_STREAM_MEMBERS: Mapping[type, str] = {
    Task: "task",
    Message: "message",
    TaskStatusUpdateEvent: "statusUpdate",
    TaskArtifactUpdateEvent: "artifactUpdate",
}


def encode_stream_event(event: StreamEvent) -> dict[str, Any]:
    """A ``StreamResponse``: the member name is the discriminator."""
    return {_STREAM_MEMBERS[type(event)]: ENCODERS[type(event)](event)}


def encode_send_result(result: Task | Message) -> dict[str, Any]:
    """A ``SendMessageResponse``: ``{"task": …}`` or ``{"message": …}``."""
    return encode_stream_event(result)


# -- push notifications ------------------------------------------------------------------


def encode_authentication(auth: AuthenticationInfo) -> dict[str, Any]:
    """1.0 has one REQUIRED ``scheme``: the first of ours ("" when there is none)."""
    scheme = auth.schemes[0] if auth.schemes else ""
    return {"scheme": scheme, **compact({"credentials": auth.credentials})}


def encode_push_config(config: PushNotificationConfig) -> dict[str, Any]:
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


def encode_task_push_config(config: TaskPushNotificationConfig) -> dict[str, Any]:
    """Flat: the webhook's members next to ``taskId`` and ``tenant``."""
    return {
        "taskId": config.task_id,
        **encode_push_config(config.push_notification_config),
        **compact({"tenant": config.tenant}),
    }


def encode_list_push_configs_response(
    response: ListTaskPushNotificationConfigsResponse,
) -> dict[str, Any]:
    return {
        "configs": [encode_task_push_config(c) for c in response.configs],
        "nextPageToken": response.next_page_token,
    }


# -- requests and responses --------------------------------------------------------------


def encode_send_configuration(config: SendMessageConfiguration) -> dict[str, Any]:
    """``returnImmediately`` is the negation of ``blocking``; sent only when true."""
    push = config.push_notification_config
    return compact(
        {
            "acceptedOutputModes": list(config.accepted_output_modes),
            "historyLength": config.history_length,
            "taskPushNotificationConfig": None if push is None else encode_push_config(push),
            "returnImmediately": True if not config.blocking else None,
        }
    )


def encode_send_request(request: SendMessageRequest) -> dict[str, Any]:
    config = request.configuration
    return {
        "message": encode_message(request.message),
        **compact(
            {
                "configuration": None if config is None else encode_send_configuration(config),
                "metadata": _struct(request.metadata),
                "tenant": request.tenant,
            }
        ),
    }


def encode_get_task(request: GetTaskRequest) -> dict[str, Any]:
    return {
        "id": request.id,
        **compact({"historyLength": request.history_length, "tenant": request.tenant}),
    }


def encode_cancel_task(request: CancelTaskRequest) -> dict[str, Any]:
    return {
        "id": request.id,
        **compact({"metadata": _struct(request.metadata), "tenant": request.tenant}),
    }


def encode_subscribe(request: SubscribeToTaskRequest) -> dict[str, Any]:
    return {"id": request.id, **compact({"tenant": request.tenant})}


def encode_list_tasks(request: ListTasksRequest) -> dict[str, Any]:
    after = request.status_timestamp_after
    return compact(
        {
            "tenant": request.tenant,
            "contextId": request.context_id,
            "status": None if request.status is None else STATE_1_0[request.status],
            "pageSize": request.page_size,
            "pageToken": request.page_token,
            "historyLength": request.history_length,
            "statusTimestampAfter": None if after is None else format_timestamp(after),
            "includeArtifacts": request.include_artifacts or None,
        }
    )


def encode_list_tasks_response(response: ListTasksResponse) -> dict[str, Any]:
    """All four members are REQUIRED: ``nextPageToken`` is "" on the last page."""
    return {
        "tasks": [encode_task(t) for t in response.tasks],
        "nextPageToken": response.next_page_token,
        "pageSize": response.page_size,
        "totalSize": response.total_size,
    }


def encode_get_push_config(request: GetTaskPushNotificationConfigRequest) -> dict[str, Any]:
    """1.0's ``id`` is the CONFIG id; the task is ``taskId``."""
    return {
        "taskId": request.task_id,
        **compact({"id": request.config_id, "tenant": request.tenant}),
    }


def encode_delete_push_config(request: DeleteTaskPushNotificationConfigRequest) -> dict[str, Any]:
    return {
        "taskId": request.task_id,
        "id": request.config_id,
        **compact({"tenant": request.tenant}),
    }


def encode_list_push_configs(request: ListTaskPushNotificationConfigsRequest) -> dict[str, Any]:
    return {
        "taskId": request.task_id,
        **compact(
            {
                "pageSize": request.page_size,
                "pageToken": request.page_token,
                "tenant": request.tenant,
            }
        ),
    }


def encode_get_extended_card(request: GetExtendedAgentCardRequest) -> dict[str, Any]:
    return compact({"tenant": request.tenant})


# -- errors ------------------------------------------------------------------------------


def encode_error(error: RPCError) -> dict[str, Any]:
    """``{code, message, data: [ErrorInfo, BadRequest?]}`` (TCK JSONRPC-ERR-003)."""
    metadata: dict[str, str] = {}
    if error.data is not None:
        metadata[DATA_METADATA_KEY] = json.dumps(error.data, sort_keys=True, default=str)
    metadata.update({str(k): str(v) for k, v in error.metadata.items()})
    details: list[dict[str, Any]] = [
        {
            "@type": ERROR_INFO_TYPE,
            "reason": error.reason or _default_reason(error),
            "domain": ERROR_DOMAIN,
            "metadata": metadata,
        }
    ]
    if error.field_violations:
        violations = [{"field": f, "description": d} for f, d in error.field_violations.items()]
        details.append({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations})
    return {"code": error.code, "message": error.message, "data": details}


def _default_reason(error: RPCError) -> str:
    """UPPER_SNAKE of the class name (ParseError -> PARSE_ERROR); unknown codes say so."""
    if type(error) is RPCError:
        return "UNKNOWN_ERROR"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(error).__name__).upper()


def _timestamp(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)


def _struct(metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if metadata is None else dict(metadata)


#: model type -> its 1.0 encoder.
ENCODERS: Mapping[type, Callable[[Any], dict[str, Any]]] = {
    TextPart: encode_part,
    FilePart: encode_part,
    DataPart: encode_part,
    Message: encode_message,
    Artifact: encode_artifact,
    TaskStatus: encode_status,
    Task: encode_task,
    TaskStatusUpdateEvent: encode_status_update,
    TaskArtifactUpdateEvent: encode_artifact_update,
    AuthenticationInfo: encode_authentication,
    PushNotificationConfig: encode_push_config,
    TaskPushNotificationConfig: encode_task_push_config,
    SendMessageConfiguration: encode_send_configuration,
    SendMessageRequest: encode_send_request,
    GetTaskRequest: encode_get_task,
    CancelTaskRequest: encode_cancel_task,
    SubscribeToTaskRequest: encode_subscribe,
    ListTasksRequest: encode_list_tasks,
    ListTasksResponse: encode_list_tasks_response,
    GetTaskPushNotificationConfigRequest: encode_get_push_config,
    DeleteTaskPushNotificationConfigRequest: encode_delete_push_config,
    ListTaskPushNotificationConfigsRequest: encode_list_push_configs,
    ListTaskPushNotificationConfigsResponse: encode_list_push_configs_response,
    GetExtendedAgentCardRequest: encode_get_extended_card,
}
