"""A2A 0.3 output: the JSON of ``types.ts`` / the 0.3 JSON schema.

``kind`` on every Message, Task, Part and event; lower-case kebab states;
``"user"``/``"agent"``; file parts nested under ``file`` with ``bytes``/``uri``,
``name`` and ``mimeType``; ``final`` on status updates; push configs nested as
``{taskId, pushNotificationConfig}``. Input is read by the tolerant decoder in
:mod:`._common`, never here.

What 0.3 cannot carry and is therefore dropped (documented, tested):
``media_type`` of text and data parts, ``tenant`` everywhere, and the paging
fields of a push-config list request. Non-object ``DataPart.data`` is wrapped
as ``{"value": x}`` with ``metadata.data_part_compat = true``, which the
decoder undoes (the 1.0 SDK's compat rule).
"""

from __future__ import annotations

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
from ._common import (
    DATA_PART_COMPAT,
    ROLE_0_3,
    STATE_0_3,
    STATE_1_0,
    compact,
    encode_bytes,
    format_timestamp,
)

__all__ = [
    "ENCODERS",
    "encode_part",
    "encode_message",
    "encode_artifact",
    "encode_status",
    "encode_task",
    "encode_status_update",
    "encode_artifact_update",
    "encode_stream_event",
    "encode_push_config",
    "encode_task_push_config",
    "encode_list_push_configs_result",
    "encode_error",
]


def encode_part(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return compact({"kind": "text", "text": part.text, "metadata": _struct(part.metadata)})
    if isinstance(part, FilePart):
        content = {"bytes": encode_bytes(part.raw)} if part.raw is not None else {"uri": part.url}
        file = {**content, **compact({"name": part.filename, "mimeType": part.media_type})}
        return compact({"kind": "file", "file": file, "metadata": _struct(part.metadata)})
    if isinstance(part, DataPart):
        return _encode_data_part(part)
    raise TypeError(f"not a part: {part!r}")


def _encode_data_part(part: DataPart) -> dict[str, Any]:
    """0.3 data must be an object: wrap anything else and flag it for the decoder."""
    metadata = _struct(part.metadata)
    data = part.data
    if not isinstance(data, Mapping):
        data = {"value": data}
        metadata = {**(metadata or {}), DATA_PART_COMPAT: True}
    return compact({"kind": "data", "data": dict(data), "metadata": metadata})


def encode_message(message: Message) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": message.message_id,
        "role": ROLE_0_3[message.role],
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
        "state": STATE_0_3[status.state],
        **compact(
            {
                "message": None if status.message is None else encode_message(status.message),
                "timestamp": _timestamp(status.timestamp),
            }
        ),
    }


def encode_task(task: Task) -> dict[str, Any]:
    return {
        "kind": "task",
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
    """``final`` is REQUIRED in 0.3: always sent."""
    return {
        "kind": "status-update",
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": encode_status(event.status),
        "final": event.final,
        **compact({"metadata": _struct(event.metadata)}),
    }


def encode_artifact_update(event: TaskArtifactUpdateEvent) -> dict[str, Any]:
    return {
        "kind": "artifact-update",
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


def encode_stream_event(event: StreamEvent) -> dict[str, Any]:
    """0.3 streams bare objects; their ``kind`` tells them apart."""
    return ENCODERS[type(event)](event)


# -- push notifications ------------------------------------------------------------------


def encode_authentication(auth: AuthenticationInfo) -> dict[str, Any]:
    return {"schemes": list(auth.schemes), **compact({"credentials": auth.credentials})}


def encode_push_config(config: PushNotificationConfig) -> dict[str, Any]:
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


def encode_task_push_config(config: TaskPushNotificationConfig) -> dict[str, Any]:
    """Nested form; ``tenant`` has no 0.3 spelling."""
    return {
        "taskId": config.task_id,
        "pushNotificationConfig": encode_push_config(config.push_notification_config),
    }


def encode_list_push_configs_result(response: ListTaskPushNotificationConfigsResponse) -> list[Any]:
    """0.3 answers a bare array (no paging)."""
    return [encode_task_push_config(c) for c in response.configs]


def _encode_list_push_configs_response(
    response: ListTaskPushNotificationConfigsResponse,
) -> dict[str, Any]:
    """As an object (``encode``) it keeps the 1.0 member names with 0.3 configs inside."""
    return {
        "configs": encode_list_push_configs_result(response),
        "nextPageToken": response.next_page_token,
    }


# -- requests and responses --------------------------------------------------------------


def encode_send_configuration(config: SendMessageConfiguration) -> dict[str, Any]:
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


def encode_send_request(request: SendMessageRequest) -> dict[str, Any]:
    config = request.configuration
    return {
        "message": encode_message(request.message),
        **compact(
            {
                "configuration": None if config is None else encode_send_configuration(config),
                "metadata": _struct(request.metadata),
            }
        ),
    }


def encode_get_task(request: GetTaskRequest) -> dict[str, Any]:
    return {
        "id": request.id,
        **compact({"historyLength": request.history_length, "metadata": _struct(request.metadata)}),
    }


def encode_task_id_params(request: CancelTaskRequest | SubscribeToTaskRequest) -> dict[str, Any]:
    return {"id": request.id, **compact({"metadata": _struct(request.metadata)})}


def encode_list_tasks(request: ListTasksRequest) -> dict[str, Any]:
    """Not a 0.3 JSON-RPC method (the seed's ``tasks/list`` alias): 1.0 member names
    and ``TASK_STATE_*`` status, which is what that seed validates."""
    after = request.status_timestamp_after
    return compact(
        {
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
    return {
        "tasks": [encode_task(t) for t in response.tasks],
        "nextPageToken": response.next_page_token,
        "pageSize": response.page_size,
        "totalSize": response.total_size,
    }


def encode_get_push_config(request: GetTaskPushNotificationConfigRequest) -> dict[str, Any]:
    """Trap: 0.3's ``id`` is the TASK id; the config is ``pushNotificationConfigId``."""
    return {"id": request.task_id, **compact({"pushNotificationConfigId": request.config_id})}


def encode_delete_push_config(request: DeleteTaskPushNotificationConfigRequest) -> dict[str, Any]:
    return {"id": request.task_id, "pushNotificationConfigId": request.config_id}


def encode_list_push_configs(request: ListTaskPushNotificationConfigsRequest) -> dict[str, Any]:
    return {"id": request.task_id}


def encode_get_extended_card(request: GetExtendedAgentCardRequest) -> dict[str, Any]:
    """0.3 ``agent/getAuthenticatedExtendedCard`` takes no params at all."""
    return {}


def encode_error(error: RPCError) -> dict[str, Any]:
    """``data`` goes out as is, and only when set."""
    encoded: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        encoded["data"] = error.data
    return encoded


def _timestamp(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)


def _struct(metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if metadata is None else dict(metadata)


#: model type -> its 0.3 encoder.
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
    CancelTaskRequest: encode_task_id_params,
    SubscribeToTaskRequest: encode_task_id_params,
    ListTasksRequest: encode_list_tasks,
    ListTasksResponse: encode_list_tasks_response,
    GetTaskPushNotificationConfigRequest: encode_get_push_config,
    DeleteTaskPushNotificationConfigRequest: encode_delete_push_config,
    ListTaskPushNotificationConfigsRequest: encode_list_push_configs,
    ListTaskPushNotificationConfigsResponse: _encode_list_push_configs_response,
    GetExtendedAgentCardRequest: encode_get_extended_card,
}
