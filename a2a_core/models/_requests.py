"""The requests and responses of the operations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from .._jsonvalue import JSONValue
from ._base import TaskState, _model
from ._content import Message, Task
from ._push import PushNotificationConfig, TaskPushNotificationConfig


@_model
class SendMessageConfiguration:
    """``blocking`` is 0.3's flag; 1.0's ``returnImmediately`` is its negation."""

    accepted_output_modes: Sequence[str] = ()
    history_length: int | None = None
    push_notification_config: PushNotificationConfig | None = None
    blocking: bool = True
    #: dev-1.1 preview: refuse the send (-32010) unless the task is at this generation.
    if_generation_match: int | None = None


@_model
class SendMessageRequest:
    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: Mapping[str, JSONValue] | None = None
    tenant: str | None = None


@_model
class GetTaskRequest:
    id: str
    history_length: int | None = None
    metadata: Mapping[str, JSONValue] | None = None
    tenant: str | None = None
    #: dev-1.1 preview long-poll: answer once the task's generation differs from this.
    current_generation: int | None = None


@_model
class CancelTaskRequest:
    id: str
    metadata: Mapping[str, JSONValue] | None = None
    tenant: str | None = None


@_model
class SubscribeToTaskRequest:
    id: str
    metadata: Mapping[str, JSONValue] | None = None
    tenant: str | None = None


@_model
class ListTasksRequest:
    context_id: str | None = None
    status: TaskState | None = None
    page_size: int | None = None
    page_token: str | None = None
    history_length: int | None = None
    status_timestamp_after: datetime | None = None
    include_artifacts: bool = False
    tenant: str | None = None


@_model
class ListTasksResponse:
    tasks: Sequence[Task]
    next_page_token: str = ""
    page_size: int = 0
    total_size: int = 0


@_model
class GetTaskPushNotificationConfigRequest:
    task_id: str
    config_id: str | None = None
    tenant: str | None = None


@_model
class ListTaskPushNotificationConfigsRequest:
    task_id: str
    page_size: int | None = None
    page_token: str | None = None
    tenant: str | None = None


@_model
class ListTaskPushNotificationConfigsResponse:
    configs: Sequence[TaskPushNotificationConfig]
    next_page_token: str = ""


@_model
class DeleteTaskPushNotificationConfigRequest:
    task_id: str
    config_id: str
    tenant: str | None = None


@_model
class GetExtendedAgentCardRequest:
    tenant: str | None = None
