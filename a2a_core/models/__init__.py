"""Protocol models for A2A 0.3 and 1.0, in Python spelling.

Frozen, slotted, keyword-only dataclasses. Attribute names are snake_case and
enum members are UPPER_CASE; wire spellings (camelCase, ``TASK_STATE_*``,
``kind`` discriminators) exist only in :mod:`a2a_core.wire`.

Sequences are stored as tuples (a list given to a constructor is converted),
so models compare equal after a round trip and cannot be mutated behind the
task lifecycle's back. Metadata mappings are plain dicts: they are opaque to
the protocol. :func:`evolve` is ``dataclasses.replace`` for them, in one call of
code generated per class (the runtime rebuilds tasks on every update).
"""

from __future__ import annotations

from ._base import (
    Role as Role,
)
from ._base import (
    TaskState as TaskState,
)
from ._base import (
    evolve as evolve,
)
from ._card import (
    AgentCapabilities as AgentCapabilities,
)
from ._card import (
    AgentCard as AgentCard,
)
from ._card import (
    AgentCardSignature as AgentCardSignature,
)
from ._card import (
    AgentExtension as AgentExtension,
)
from ._card import (
    AgentInterface as AgentInterface,
)
from ._card import (
    AgentProvider as AgentProvider,
)
from ._card import (
    AgentSkill as AgentSkill,
)
from ._card import (
    APIKeySecurityScheme as APIKeySecurityScheme,
)
from ._card import (
    HTTPAuthSecurityScheme as HTTPAuthSecurityScheme,
)
from ._card import (
    MutualTLSSecurityScheme as MutualTLSSecurityScheme,
)
from ._card import (
    OAuth2SecurityScheme as OAuth2SecurityScheme,
)
from ._card import (
    OAuthFlow as OAuthFlow,
)
from ._card import (
    OAuthFlows as OAuthFlows,
)
from ._card import (
    OpenIdConnectSecurityScheme as OpenIdConnectSecurityScheme,
)
from ._card import (
    SecurityRequirement as SecurityRequirement,
)
from ._card import (
    SecurityScheme as SecurityScheme,
)
from ._content import (
    Artifact as Artifact,
)
from ._content import (
    DataPart as DataPart,
)
from ._content import (
    FilePart as FilePart,
)
from ._content import (
    Message as Message,
)
from ._content import (
    Part as Part,
)
from ._content import (
    SendResult as SendResult,
)
from ._content import (
    StreamEvent as StreamEvent,
)
from ._content import (
    Task as Task,
)
from ._content import (
    TaskArtifactUpdateEvent as TaskArtifactUpdateEvent,
)
from ._content import (
    TaskStatus as TaskStatus,
)
from ._content import (
    TaskStatusUpdateEvent as TaskStatusUpdateEvent,
)
from ._content import (
    TextPart as TextPart,
)
from ._push import (
    AuthenticationInfo as AuthenticationInfo,
)
from ._push import (
    PushNotificationConfig as PushNotificationConfig,
)
from ._push import (
    TaskPushNotificationConfig as TaskPushNotificationConfig,
)
from ._requests import (
    CancelTaskRequest as CancelTaskRequest,
)
from ._requests import (
    DeleteTaskPushNotificationConfigRequest as DeleteTaskPushNotificationConfigRequest,
)
from ._requests import (
    GetExtendedAgentCardRequest as GetExtendedAgentCardRequest,
)
from ._requests import (
    GetTaskPushNotificationConfigRequest as GetTaskPushNotificationConfigRequest,
)
from ._requests import (
    GetTaskRequest as GetTaskRequest,
)
from ._requests import (
    ListTaskPushNotificationConfigsRequest as ListTaskPushNotificationConfigsRequest,
)
from ._requests import (
    ListTaskPushNotificationConfigsResponse as ListTaskPushNotificationConfigsResponse,
)
from ._requests import (
    ListTasksRequest as ListTasksRequest,
)
from ._requests import (
    ListTasksResponse as ListTasksResponse,
)
from ._requests import (
    SendMessageConfiguration as SendMessageConfiguration,
)
from ._requests import (
    SendMessageRequest as SendMessageRequest,
)
from ._requests import (
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
    "evolve",
]
