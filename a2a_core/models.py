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

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Any:
        return lambda f: f


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

_T = TypeVar("_T")


# A plain ``_model = dataclass(...)`` alias hides the dataclass from mypy (no
# keyword constructor, no ``dataclasses.replace``); dataclass_transform tells it.
@dataclass_transform(frozen_default=True, kw_only_default=True)
def _model(cls: type[_T]) -> type[_T]:
    """Frozen, slotted, keyword-only dataclass."""
    return dataclass(frozen=True, slots=True, kw_only=True)(cls)


def _freeze(obj: Any, *names: str) -> None:
    """Turn the named sequence fields into tuples (frozen dataclasses need object.__setattr__)."""
    for name in names:
        value = getattr(obj, name)
        if value is not None and not isinstance(value, tuple):
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise TypeError(f"{type(obj).__name__}.{name} must be a sequence")
            object.__setattr__(obj, name, tuple(value))


def _freeze_requirements(obj: Any) -> None:
    """Scopes as tuples, so a card built with lists equals its decoded form."""
    requirements = tuple(
        {name: tuple(scopes) for name, scopes in requirement.items()}
        for requirement in obj.security_requirements
    )
    object.__setattr__(obj, "security_requirements", requirements)


class TaskState(enum.Enum):
    """Every state of a task. ``UNKNOWN`` is a decoding fallback, never a real state."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    AUTH_REQUIRED = "auth_required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    REJECTED = "rejected"
    UNKNOWN = "unknown"

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL

    @property
    def is_interrupted(self) -> bool:
        return self in _INTERRUPTED


_TERMINAL = frozenset(
    {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}
)
_INTERRUPTED = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})


class Role(enum.Enum):
    USER = "user"
    AGENT = "agent"


# -- content ---------------------------------------------------------------------------


@_model
class TextPart:
    text: str
    media_type: str | None = None
    metadata: Mapping[str, Any] | None = None


@_model
class FilePart:
    """A file given inline (``raw`` bytes) or by ``url``: exactly one of the two."""

    raw: bytes | None = None
    url: str | None = None
    filename: str | None = None
    media_type: str | None = None
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.raw is None) == (self.url is None):
            raise ValueError("FilePart needs exactly one of raw or url")


@_model
class DataPart:
    """Structured data. 1.0 allows any JSON value; 0.3 only an object."""

    data: Any
    media_type: str | None = None
    metadata: Mapping[str, Any] | None = None


Part = TextPart | FilePart | DataPart


@_model
class Message:
    message_id: str
    role: Role
    parts: Sequence[Part]
    context_id: str | None = None
    task_id: str | None = None
    reference_task_ids: Sequence[str] = ()
    extensions: Sequence[str] = ()
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _freeze(self, "parts", "reference_task_ids", "extensions")

    @property
    def text(self) -> str:
        """The text parts joined by newlines ("" when there are none)."""
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))


@_model
class Artifact:
    artifact_id: str
    parts: Sequence[Part]
    name: str | None = None
    description: str | None = None
    extensions: Sequence[str] = ()
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _freeze(self, "parts", "extensions")


@_model
class TaskStatus:
    state: TaskState
    message: Message | None = None
    timestamp: datetime | None = None


@_model
class Task:
    id: str
    context_id: str
    status: TaskStatus
    artifacts: Sequence[Artifact] = ()
    history: Sequence[Message] = ()
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _freeze(self, "artifacts", "history")


@_model
class TaskStatusUpdateEvent:
    """A status change. ``final`` exists only on the 0.3 wire; 1.0 ignores it."""

    task_id: str
    context_id: str
    status: TaskStatus
    final: bool = False
    metadata: Mapping[str, Any] | None = None


@_model
class TaskArtifactUpdateEvent:
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: Mapping[str, Any] | None = None


#: What one stream event carries (1.0 ``StreamResponse``).
StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
#: What SendMessage answers (1.0 ``SendMessageResponse``).
SendResult = Task | Message


# -- push notifications ----------------------------------------------------------------


@_model
class AuthenticationInfo:
    """Credentials the server sends to a webhook as ``Authorization: <scheme> <credentials>``.

    0.3 lists several ``schemes``; 1.0 has one ``scheme``. We keep the list; the
    1.0 codec sends its first entry.
    """

    schemes: Sequence[str]
    credentials: str | None = None

    def __post_init__(self) -> None:
        _freeze(self, "schemes")


@_model
class PushNotificationConfig:
    url: str
    id: str | None = None
    token: str | None = None
    authentication: AuthenticationInfo | None = None


@_model
class TaskPushNotificationConfig:
    """``protocol_version`` is the dialect the config was created in ("0.3"/"1.0"):
    the server sends that dialect's payload to it. Server bookkeeping: never on the
    wire, and not part of equality."""

    task_id: str
    push_notification_config: PushNotificationConfig
    tenant: str | None = None
    protocol_version: str | None = field(default=None, compare=False)


# -- requests and responses ------------------------------------------------------------


@_model
class SendMessageConfiguration:
    """``blocking`` is 0.3's flag; 1.0's ``returnImmediately`` is its negation."""

    accepted_output_modes: Sequence[str] = ()
    history_length: int | None = None
    push_notification_config: PushNotificationConfig | None = None
    blocking: bool = True

    def __post_init__(self) -> None:
        _freeze(self, "accepted_output_modes")


@_model
class SendMessageRequest:
    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: Mapping[str, Any] | None = None
    tenant: str | None = None


@_model
class GetTaskRequest:
    id: str
    history_length: int | None = None
    metadata: Mapping[str, Any] | None = None
    tenant: str | None = None


@_model
class CancelTaskRequest:
    id: str
    metadata: Mapping[str, Any] | None = None
    tenant: str | None = None


@_model
class SubscribeToTaskRequest:
    id: str
    metadata: Mapping[str, Any] | None = None
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

    def __post_init__(self) -> None:
        _freeze(self, "tasks")


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

    def __post_init__(self) -> None:
        _freeze(self, "configs")


@_model
class DeleteTaskPushNotificationConfigRequest:
    task_id: str
    config_id: str
    tenant: str | None = None


@_model
class GetExtendedAgentCardRequest:
    tenant: str | None = None


# -- agent card ------------------------------------------------------------------------


@_model
class AgentProvider:
    organization: str
    url: str


@_model
class AgentExtension:
    uri: str
    description: str | None = None
    required: bool = False
    params: Mapping[str, Any] | None = None


@_model
class AgentCapabilities:
    """``None`` means "not declared", which the protocol reads as false."""

    streaming: bool | None = None
    push_notifications: bool | None = None
    extended_agent_card: bool | None = None
    state_transition_history: bool | None = None
    extensions: Sequence[AgentExtension] = ()

    def __post_init__(self) -> None:
        _freeze(self, "extensions")


@_model
class AgentInterface:
    """One endpoint: a URL speaking one binding in one protocol version."""

    url: str
    protocol_binding: str = "JSONRPC"
    protocol_version: str = "1.0"
    tenant: str | None = None


#: scheme name -> required scopes; a card lists several (OR), each an AND of schemes.
SecurityRequirement = Mapping[str, Sequence[str]]


@_model
class AgentSkill:
    id: str
    name: str
    description: str = ""
    tags: Sequence[str] = ()
    examples: Sequence[str] = ()
    input_modes: Sequence[str] = ()
    output_modes: Sequence[str] = ()
    security_requirements: Sequence[SecurityRequirement] = ()

    def __post_init__(self) -> None:
        _freeze(self, "tags", "examples", "input_modes", "output_modes", "security_requirements")
        _freeze_requirements(self)


@_model
class AgentCardSignature:
    protected: str
    signature: str
    header: Mapping[str, Any] | None = None


@_model
class OAuthFlow:
    """One OAuth 2.0 flow; which URLs apply depends on the flow's kind."""

    scopes: Mapping[str, str] = field(default_factory=dict)
    authorization_url: str | None = None
    token_url: str | None = None
    refresh_url: str | None = None
    device_authorization_url: str | None = None
    pkce_required: bool | None = None


@_model
class OAuthFlows:
    """0.3 allows several flows at once; 1.0 exactly one (its codec emits the first set)."""

    authorization_code: OAuthFlow | None = None
    client_credentials: OAuthFlow | None = None
    device_code: OAuthFlow | None = None
    implicit: OAuthFlow | None = None
    password: OAuthFlow | None = None


@_model
class APIKeySecurityScheme:
    name: str
    location: str  # "query" | "header" | "cookie"
    description: str | None = None


@_model
class HTTPAuthSecurityScheme:
    scheme: str
    bearer_format: str | None = None
    description: str | None = None


@_model
class OAuth2SecurityScheme:
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None
    description: str | None = None


@_model
class OpenIdConnectSecurityScheme:
    open_id_connect_url: str
    description: str | None = None


@_model
class MutualTLSSecurityScheme:
    description: str | None = None


SecurityScheme = (
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTLSSecurityScheme
)


@_model
class AgentCard:
    """The agent's self-description.

    ``supported_interfaces`` is the one place endpoints live; the 0.3 codec
    derives ``url``, ``preferredTransport``, ``protocolVersion`` and
    ``additionalInterfaces`` from it.
    """

    name: str
    description: str = ""
    version: str = "0.1.0"
    supported_interfaces: Sequence[AgentInterface] = ()
    capabilities: AgentCapabilities = field(default_factory=AgentCapabilities)
    default_input_modes: Sequence[str] = ("text/plain",)
    default_output_modes: Sequence[str] = ("text/plain",)
    skills: Sequence[AgentSkill] = ()
    provider: AgentProvider | None = None
    icon_url: str | None = None
    documentation_url: str | None = None
    security_schemes: Mapping[str, SecurityScheme] | None = None
    security_requirements: Sequence[SecurityRequirement] = ()
    signatures: Sequence[AgentCardSignature] = ()

    def __post_init__(self) -> None:
        _freeze(
            self,
            "supported_interfaces",
            "default_input_modes",
            "default_output_modes",
            "skills",
            "security_requirements",
            "signatures",
        )
        _freeze_requirements(self)

    @property
    def url(self) -> str | None:
        """The preferred endpoint: the first interface's URL."""
        return self.supported_interfaces[0].url if self.supported_interfaces else None
