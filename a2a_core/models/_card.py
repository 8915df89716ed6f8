"""The agent card and what it declares (interfaces, skills, security schemes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field

from .._jsonvalue import JSONValue
from ._base import _freeze_requirements, _model


@_model
class AgentProvider:
    organization: str
    url: str


@_model
class AgentExtension:
    uri: str
    description: str | None = None
    required: bool = False
    params: Mapping[str, JSONValue] | None = None


@_model
class AgentCapabilities:
    """``None`` means "not declared", which the protocol reads as false."""

    streaming: bool | None = None
    push_notifications: bool | None = None
    extended_agent_card: bool | None = None
    state_transition_history: bool | None = None
    extensions: Sequence[AgentExtension] = ()


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
        _freeze_requirements(self)


@_model
class AgentCardSignature:
    protected: str
    signature: str
    header: Mapping[str, JSONValue] | None = None


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
        _freeze_requirements(self)

    @property
    def url(self) -> str | None:
        """The preferred endpoint: the first interface's URL."""
        return self.supported_interfaces[0].url if self.supported_interfaces else None
