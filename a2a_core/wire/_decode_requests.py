"""The tolerant decoder of method params and results, and the type -> decoder table.

Like :mod:`._decode`, each reads either dialect's members; where a member
means different things (the push-config ``id``) the negotiated version decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .._jsonvalue import JSONValue
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
    PushNotificationConfig,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from ._common import MAX_HISTORY_LENGTH, MAX_INT64, invalid, join
from ._decode import (
    decode_artifact,
    decode_artifact_update,
    decode_authentication,
    decode_message,
    decode_part,
    decode_push_config,
    decode_status,
    decode_status_update,
    decode_task,
    decode_task_push_config,
)
from ._enums import parse_state
from ._fields import Fields

__all__ = [
    "DECODERS",
    "decode_send_configuration",
    "decode_send_request",
    "decode_get_task",
    "decode_task_id_request",
    "decode_list_tasks",
    "decode_list_tasks_response",
    "decode_get_push_config",
    "decode_list_push_configs",
    "decode_list_push_configs_response",
    "decode_delete_push_config",
    "decode_get_extended_card",
]

T = TypeVar("T")
#: The requests that are a task id and nothing more (plus metadata and tenant).
IdRequest = TypeVar("IdRequest", CancelTaskRequest, SubscribeToTaskRequest)

# -- requests and responses --------------------------------------------------------------


def decode_send_configuration(data: object, path: str) -> SendMessageConfiguration:
    """Either dialect: ``blocking`` (0.3) wins over ``returnImmediately`` (1.0); default blocks."""
    f = Fields(data, path, "a configuration object")
    blocking = f.boolean("blocking")
    if blocking is None:
        blocking = not f.boolean("returnImmediately")
    return SendMessageConfiguration(
        accepted_output_modes=f.strings("acceptedOutputModes"),
        history_length=f.integer("historyLength", minimum=0, maximum=MAX_HISTORY_LENGTH),
        push_notification_config=(
            f.optional("pushNotificationConfig", decode_push_config)
            or f.optional("taskPushNotificationConfig", decode_push_config)
        ),
        blocking=blocking,
        if_generation_match=f.integer("ifGenerationMatch", minimum=0, maximum=MAX_INT64),
    )


def decode_send_request(data: object, path: str) -> SendMessageRequest:
    f = Fields(data, path)
    return SendMessageRequest(
        message=f.one("message", decode_message),
        configuration=f.optional("configuration", decode_send_configuration),
        metadata=f.struct("metadata"),
        tenant=f.string("tenant"),
    )


def decode_get_task(data: object, path: str) -> GetTaskRequest:
    f = Fields(data, path)
    return GetTaskRequest(
        id=f.required_string("id"),
        history_length=f.integer("historyLength", minimum=0, maximum=MAX_HISTORY_LENGTH),
        metadata=f.struct("metadata"),
        tenant=f.string("tenant"),
        current_generation=f.integer("currentGeneration", minimum=0, maximum=MAX_INT64),
    )


def decode_task_id_request(cls: type[IdRequest], data: object, path: str) -> IdRequest:
    """CancelTask and SubscribeToTask: the same members in both dialects."""
    f = Fields(data, path)
    return cls(id=f.required_string("id"), metadata=f.struct("metadata"), tenant=f.string("tenant"))


def decode_list_tasks(data: object, path: str) -> ListTasksRequest:
    """Filters are strict: an unknown status would silently match nothing."""
    f = Fields(data, path)
    status_path, status = f.find("status")
    state = None if status is None else parse_state(status, status_path, strict=True)
    return ListTasksRequest(
        context_id=f.string("contextId"),
        status=None if state is TaskState.UNKNOWN else state,
        page_size=f.integer("pageSize", minimum=1, maximum=100),
        page_token=f.string("pageToken"),
        history_length=f.integer("historyLength", minimum=0, maximum=MAX_HISTORY_LENGTH),
        status_timestamp_after=f.timestamp("statusTimestampAfter"),
        include_artifacts=bool(f.boolean("includeArtifacts")),
        tenant=f.string("tenant"),
    )


def decode_list_tasks_response(data: object, path: str) -> ListTasksResponse:
    f = Fields(data, path)
    return ListTasksResponse(
        tasks=f.objects("tasks", decode_task),
        next_page_token=f.string("nextPageToken") or "",
        page_size=f.integer("pageSize") or 0,
        total_size=f.integer("totalSize") or 0,
    )


def _push_target(
    f: Fields, version: str | None, *, config_required: bool
) -> tuple[str, str | None]:
    """(task id, config id) of a push-config Get/Delete, whose ``id`` means different things.

    ``taskId`` present: 1.0 shape, ``id`` is the config. ``pushNotificationConfigId``
    present: 0.3 shape, ``id`` is the task. Neither: the version decides (0.3,
    or unknown, reads ``id`` as the task; 1.0 then lacks its required taskId).
    """
    if f.has("taskId") or (version == "1.0" and not f.has("pushNotificationConfigId")):
        task_id = f.required_string("taskId")
        config_id = f.string("id") or f.string("pushNotificationConfigId")
        missing = join(f.path, "id")
    else:
        task_id = f.required_string("id")
        config_id = f.string("pushNotificationConfigId")
        missing = join(f.path, "pushNotificationConfigId")
    if config_required and config_id is None:
        raise invalid(missing, "required field is missing")
    return task_id, config_id


def decode_get_push_config(
    data: object, path: str, version: str | None = None
) -> GetTaskPushNotificationConfigRequest:
    f = Fields(data, path)
    task_id, config_id = _push_target(f, version, config_required=False)
    return GetTaskPushNotificationConfigRequest(
        task_id=task_id, config_id=config_id, tenant=f.string("tenant")
    )


def decode_delete_push_config(
    data: object, path: str, version: str | None = None
) -> DeleteTaskPushNotificationConfigRequest:
    f = Fields(data, path)
    task_id, config_id = _push_target(f, version, config_required=True)
    assert config_id is not None
    return DeleteTaskPushNotificationConfigRequest(
        task_id=task_id, config_id=config_id, tenant=f.string("tenant")
    )


def decode_list_push_configs(data: object, path: str) -> ListTaskPushNotificationConfigsRequest:
    """1.0 ``taskId`` or 0.3 ``id`` (there ``id`` can only mean the task)."""
    f = Fields(data, path)
    task_id = f.required_string("taskId") if f.has("taskId") else f.required_string("id")
    return ListTaskPushNotificationConfigsRequest(
        task_id=task_id,
        # (an int32 in the proto: a larger number is refused, as for the other int32s)
        page_size=f.integer("pageSize", minimum=0, maximum=2**31 - 1),
        page_token=f.string("pageToken"),
        tenant=f.string("tenant"),
    )


def decode_list_push_configs_response(
    data: object, path: str
) -> ListTaskPushNotificationConfigsResponse:
    """A 0.3 bare array or a 1.0 ``{configs, nextPageToken}``."""
    if isinstance(data, list):
        data = {"configs": data}
    f = Fields(data, path, "an array or object")
    return ListTaskPushNotificationConfigsResponse(
        configs=f.objects("configs", decode_task_push_config),
        next_page_token=f.string("nextPageToken") or "",
    )


def decode_get_extended_card(data: object, path: str) -> GetExtendedAgentCardRequest:
    return GetExtendedAgentCardRequest(tenant=Fields(data, path).string("tenant"))


# -- the table ---------------------------------------------------------------------------


def _only(cls: type[T]) -> Callable[[JSONValue, str], T]:
    """Decode a part and insist on one variant (``decode(TextPart, …)``)."""

    def decode_variant(data: object, path: str) -> T:
        part = decode_part(data, path)
        if not isinstance(part, cls):
            raise invalid(path, f"expected a {cls.__name__}, got a {type(part).__name__}")
        return part

    return decode_variant


def _id_request(cls: type[IdRequest]) -> Callable[[Any, str], IdRequest]:
    """:func:`decode_task_id_request` bound to one request type."""
    return lambda data, path: decode_task_id_request(cls, data, path)


#: model type -> tolerant decoder (data, path); the Agent Card is :mod:`.card`'s.
DECODERS: Mapping[type, Callable[[Any, str], Any]] = {
    TextPart: _only(TextPart),
    FilePart: _only(FilePart),
    DataPart: _only(DataPart),
    Message: decode_message,
    Artifact: decode_artifact,
    TaskStatus: decode_status,
    Task: decode_task,
    TaskStatusUpdateEvent: decode_status_update,
    TaskArtifactUpdateEvent: decode_artifact_update,
    AuthenticationInfo: decode_authentication,
    PushNotificationConfig: decode_push_config,
    TaskPushNotificationConfig: decode_task_push_config,
    SendMessageConfiguration: decode_send_configuration,
    SendMessageRequest: decode_send_request,
    GetTaskRequest: decode_get_task,
    CancelTaskRequest: _id_request(CancelTaskRequest),
    SubscribeToTaskRequest: _id_request(SubscribeToTaskRequest),
    ListTasksRequest: decode_list_tasks,
    ListTasksResponse: decode_list_tasks_response,
    GetTaskPushNotificationConfigRequest: decode_get_push_config,
    DeleteTaskPushNotificationConfigRequest: decode_delete_push_config,
    ListTaskPushNotificationConfigsRequest: decode_list_push_configs,
    ListTaskPushNotificationConfigsResponse: decode_list_push_configs_response,
    GetExtendedAgentCardRequest: decode_get_extended_card,
}
