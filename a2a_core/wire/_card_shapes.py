"""The Agent Card's tables, shared by its encoder and its decoder.

Security scheme kinds and OAuth flow kinds are spelled differently in 0.3 and
1.0; these tables name both spellings once, so the writer and the reader
cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

from ..models import (
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlow,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
)

__all__ = [
    "PROTOCOL_VERSION_0_3",
    "SCHEME_KINDS",
    "FLOW_KINDS",
    "FLOW_URLS",
    "OPTIONAL_FLOW_URL",
    "major_minor",
    "unique",
    "set_flows",
    "card_shape",
]

#: What a 0.3 card says in its top-level ``protocolVersion``.
PROTOCOL_VERSION_0_3 = "0.3.0"

_T = TypeVar("_T")

#: model class -> (1.0 wrapper member, 0.3 ``type``)
SCHEME_KINDS: Mapping[type, tuple[str, str]] = {
    APIKeySecurityScheme: ("apiKeySecurityScheme", "apiKey"),
    HTTPAuthSecurityScheme: ("httpAuthSecurityScheme", "http"),
    OAuth2SecurityScheme: ("oauth2SecurityScheme", "oauth2"),
    OpenIdConnectSecurityScheme: ("openIdConnectSecurityScheme", "openIdConnect"),
    MutualTLSSecurityScheme: ("mtlsSecurityScheme", "mutualTLS"),
}

#: OAuthFlows attribute -> (wire member, the URL attributes of that kind of flow).
FLOW_KINDS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "authorization_code": ("authorizationCode", ("authorization_url", "token_url", "refresh_url")),
    "client_credentials": ("clientCredentials", ("token_url", "refresh_url")),
    "device_code": ("deviceCode", ("device_authorization_url", "token_url", "refresh_url")),
    "implicit": ("implicit", ("authorization_url", "refresh_url")),
    "password": ("password", ("token_url", "refresh_url")),
}
#: OAuthFlow URL attribute -> wire member.
FLOW_URLS: Mapping[str, str] = {
    "authorization_url": "authorizationUrl",
    "token_url": "tokenUrl",
    "refresh_url": "refreshUrl",
    "device_authorization_url": "deviceAuthorizationUrl",
}
#: The one URL a flow may leave out. The others are required in every flow that has them
#: (the union of what the 0.3 schema and the 1.0 proto require).
OPTIONAL_FLOW_URL = "refresh_url"


def major_minor(version: str) -> str | None:
    """``"0.3.0"`` -> ``"0.3"``; None when it is not a dotted version."""
    match = re.match(r"(\d+)\.(\d+)(?:\.\d+)?$", version.strip())
    return f"{int(match[1])}.{int(match[2])}" if match else None


def unique(items: Iterable[_T]) -> list[_T]:
    """Items in first-seen order without repeats."""
    seen: list[_T] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def set_flows(flows: OAuthFlows) -> list[tuple[str, OAuthFlow]]:
    """The flows that are set, in :data:`FLOW_KINDS` order."""
    pairs = ((kind, getattr(flows, kind)) for kind in FLOW_KINDS)
    return [(kind, flow) for kind, flow in pairs if flow is not None]


#: Top-level members only a 0.3 card (or our dual card) has.
_MEMBERS_0_3 = ("url", "preferredTransport", "protocolVersion")


def card_shape(doc: object) -> str:
    """Which published schema a card document is written for: ``"0.3"`` when it has a 0.3
    endpoint member (a dual card too, which is valid against 0.3 only), else ``"1.0"``."""
    if isinstance(doc, Mapping) and any(key in doc for key in _MEMBERS_0_3):
        return "0.3"
    return "1.0"
