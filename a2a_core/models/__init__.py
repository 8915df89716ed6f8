"""Protocol models for A2A 0.3 and 1.0, in Python spelling.

Frozen, slotted, keyword-only dataclasses. Attribute names are snake_case and
enum members are UPPER_CASE; wire spellings (camelCase, ``TASK_STATE_*``,
``kind`` discriminators) exist only in :mod:`a2a_core.wire`.

Sequences are stored as tuples (a list given to a constructor is converted),
so models compare equal after a round trip and cannot be mutated behind the
task lifecycle's back. Metadata mappings are plain dicts: they are opaque to
the protocol.
"""

from __future__ import annotations

from ._base import (
    Role as Role,
)
from ._base import (
    TaskState as TaskState,
)
from .card import (
    AgentCapabilities as AgentCapabilities,
)
from .card import (
    AgentCard as AgentCard,
)
from .card import (
    AgentCardSignature as AgentCardSignature,
)
from .card import (
    AgentExtension as AgentExtension,
)
from .card import (
    AgentInterface as AgentInterface,
)
from .card import (
    AgentProvider as AgentProvider,
)
from .card import (
    AgentSkill as AgentSkill,
)
from .card import (
    APIKeySecurityScheme as APIKeySecurityScheme,
)
from .card import (
    HTTPAuthSecurityScheme as HTTPAuthSecurityScheme,
)
from .card import (
    MutualTLSSecurityScheme as MutualTLSSecurityScheme,
)
from .card import (
    OAuth2SecurityScheme as OAuth2SecurityScheme,
)
from .card import (
    OAuthFlow as OAuthFlow,
)
from .card import (
    OAuthFlows as OAuthFlows,
)
from .card import (
    OpenIdConnectSecurityScheme as OpenIdConnectSecurityScheme,
)
from .card import (
    SecurityRequirement as SecurityRequirement,
)
from .card import (
    SecurityScheme as SecurityScheme,
)
from .content import (
    Artifact as Artifact,
)
from .content import (
    DataPart as DataPart,
)
from .content import (
    FilePart as FilePart,
)
from .content import (
    Message as Message,
)
from .content import (
    Part as Part,
)
from .content import (
    SendResult as SendResult,
)
from .content import (
    StreamEvent as StreamEvent,
)
from .content import (
    Task as Task,
)
from .content import (
    TaskArtifactUpdateEvent as TaskArtifactUpdateEvent,
)
from .content import (
    TaskStatus as TaskStatus,
)
from .content import (
    TaskStatusUpdateEvent as TaskStatusUpdateEvent,
)
from .content import (
    TextPart as TextPart,
)
from .push import (
    AuthenticationInfo as AuthenticationInfo,
)
from .push import (
    PushNotificationConfig as PushNotificationConfig,
)
from .push import (
    TaskPushNotificationConfig as TaskPushNotificationConfig,
)
from .requests import (
    CancelTaskRequest as CancelTaskRequest,
)
from .requests import (
    DeleteTaskPushNotificationConfigRequest as DeleteTaskPushNotificationConfigRequest,
)
from .requests import (
    GetExtendedAgentCardRequest as GetExtendedAgentCardRequest,
)
from .requests import (
    GetTaskPushNotificationConfigRequest as GetTaskPushNotificationConfigRequest,
)
from .requests import (
    GetTaskRequest as GetTaskRequest,
)
from .requests import (
    ListTaskPushNotificationConfigsRequest as ListTaskPushNotificationConfigsRequest,
)
from .requests import (
    ListTaskPushNotificationConfigsResponse as ListTaskPushNotificationConfigsResponse,
)
from .requests import (
    ListTasksRequest as ListTasksRequest,
)
from .requests import (
    ListTasksResponse as ListTasksResponse,
)
from .requests import (
    SendMessageConfiguration as SendMessageConfiguration,
)
from .requests import (
    SendMessageRequest as SendMessageRequest,
)
from .requests import (
    SubscribeToTaskRequest as SubscribeToTaskRequest,
)

__all__ = [
    "TaskState",
    "Role",
    "TextPart",
    "FilePart",
    "DataPart",
    "Part",
    "Message",
    "Artifact",
    "TaskStatus",
    "Task",
    "TaskStatusUpdateEvent",
    "TaskArtifactUpdateEvent",
    "StreamEvent",
    "SendResult",
    "AuthenticationInfo",
    "PushNotificationConfig",
    "TaskPushNotificationConfig",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "GetTaskRequest",
    "CancelTaskRequest",
    "SubscribeToTaskRequest",
    "ListTasksRequest",
    "ListTasksResponse",
    "GetTaskPushNotificationConfigRequest",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCardRequest",
    "AgentProvider",
    "AgentExtension",
    "AgentCapabilities",
    "AgentInterface",
    "AgentSkill",
    "AgentCardSignature",
    "OAuthFlow",
    "OAuthFlows",
    "APIKeySecurityScheme",
    "HTTPAuthSecurityScheme",
    "OAuth2SecurityScheme",
    "OpenIdConnectSecurityScheme",
    "MutualTLSSecurityScheme",
    "SecurityScheme",
    "SecurityRequirement",
    "AgentCard",
]
