"""The Agent Card written in the 0.3 shape, the 1.0 shape, or both at once.

The decisions behind each shape are listed in :mod:`.card`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._jsonvalue import JSONObject, JSONValue
from ..models import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlow,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)
from ._card_shapes import (
    FLOW_KINDS,
    FLOW_URLS,
    OPTIONAL_FLOW_URL,
    PROTOCOL_VERSION_0_3,
    SCHEME_KINDS,
    major_minor,
    set_flows,
    unique,
)

__all__ = ["encode_card", "encode_card_dual"]

_JSON = JSONObject


def encode_card(card: AgentCard, version: str) -> _JSON:
    """The card as ``version`` ("0.3" or "1.0"; patch levels ignored) expects it."""
    if major_minor(version) == "1.0":
        return _encode_v1(card)
    if major_minor(version) == "0.3":
        return _encode_v0_3(card)
    raise ValueError(f"no Agent Card encoding for A2A version {version!r}")


# -- shared pieces -----------------------------------------------------------------------


def _put(obj: _JSON, key: str, value: JSONValue) -> None:
    """Set ``key`` unless ``value`` is None: optional members are omitted, not null."""
    if value is not None:
        obj[key] = value


def _put_list(obj: _JSON, key: str, values: Sequence[Any]) -> None:
    """Set ``key`` to a list unless empty (ProtoJSON omits empty repeated fields)."""
    if values:
        obj[key] = list(values)


def _common(card: AgentCard) -> _JSON:
    """The members both versions spell the same way, in schema order."""
    if not card.supported_interfaces:
        raise ValueError("an Agent Card needs at least one interface to be published")
    return {
        "name": card.name,
        "description": card.description,
        "version": card.version,
    }


def _tail(card: AgentCard, doc: _JSON) -> None:
    """Add the optional members both versions spell the same way."""
    doc["defaultInputModes"] = list(card.default_input_modes)
    doc["defaultOutputModes"] = list(card.default_output_modes)
    if card.provider is not None:
        doc["provider"] = {"organization": card.provider.organization, "url": card.provider.url}
    _put(doc, "iconUrl", card.icon_url)
    _put(doc, "documentationUrl", card.documentation_url)
    _put_list(doc, "signatures", [_signature(s) for s in card.signatures])


def _signature(sig: AgentCardSignature) -> _JSON:
    out: _JSON = {"protected": sig.protected, "signature": sig.signature}
    _put(out, "header", None if sig.header is None else dict(sig.header))
    return out


def _extension(ext: AgentExtension) -> _JSON:
    """``required`` is written only when true: false is the default in both versions."""
    out: _JSON = {"uri": ext.uri}
    _put(out, "description", ext.description)
    if ext.required:
        out["required"] = True
    _put(out, "params", None if ext.params is None else dict(ext.params))
    return out


def _skill_base(skill: AgentSkill) -> _JSON:
    out: _JSON = {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "tags": list(skill.tags),
    }
    _put_list(out, "examples", skill.examples)
    _put_list(out, "inputModes", skill.input_modes)
    _put_list(out, "outputModes", skill.output_modes)
    return out


def _scheme_body(scheme: SecurityScheme, version: str) -> _JSON:
    """A scheme's own members; only the API key location is spelled differently."""
    body: _JSON = {}
    if isinstance(scheme, APIKeySecurityScheme):
        body["location" if version == "1.0" else "in"] = scheme.location
        body["name"] = scheme.name
    elif isinstance(scheme, HTTPAuthSecurityScheme):
        body["scheme"] = scheme.scheme
        _put(body, "bearerFormat", scheme.bearer_format)
    elif isinstance(scheme, OAuth2SecurityScheme):
        body["flows"] = _flows_v1(scheme.flows) if version == "1.0" else _flows_v0_3(scheme.flows)
        _put(body, "oauth2MetadataUrl", scheme.oauth2_metadata_url)
    elif isinstance(scheme, OpenIdConnectSecurityScheme):
        body["openIdConnectUrl"] = scheme.open_id_connect_url
    _put(body, "description", scheme.description)
    return body


def _capabilities(caps: AgentCapabilities, version: str) -> _JSON:
    """1.0 no longer has ``stateTransitionHistory`` (dropped); 0.3 has the extended-card
    flag at the card's top level instead."""
    out: _JSON = {}
    _put(out, "streaming", caps.streaming)
    _put(out, "pushNotifications", caps.push_notifications)
    if version == "0.3":
        _put(out, "stateTransitionHistory", caps.state_transition_history)
    _put_list(out, "extensions", [_extension(e) for e in caps.extensions])
    if version == "1.0":
        _put(out, "extendedAgentCard", caps.extended_agent_card)
    return out


def _flow(kind: str, flow: OAuthFlow, version: str) -> _JSON:
    """One flow with the members its kind has; required URLs become "" when unset."""
    out: _JSON = {}
    for attr in FLOW_KINDS[kind][1]:
        value = getattr(flow, attr)
        if value is None and attr != OPTIONAL_FLOW_URL:
            value = ""
        _put(out, FLOW_URLS[attr], value)
    out["scopes"] = dict(flow.scopes)
    if kind == "authorization_code" and version == "1.0":
        _put(out, "pkceRequired", flow.pkce_required)
    return out


# -- 1.0 -------------------------------------------------------------------------------


def _encode_v1(card: AgentCard) -> _JSON:
    doc = _common(card)
    doc["supportedInterfaces"] = [_interface_v1(i) for i in card.supported_interfaces]
    doc["capabilities"] = _capabilities(card.capabilities, "1.0")
    _tail(card, doc)
    doc["skills"] = [_skill_v1(s) for s in card.skills]
    if card.security_schemes is not None:
        doc["securitySchemes"] = {k: _scheme_v1(v) for k, v in card.security_schemes.items()}
    _put_list(doc, "securityRequirements", [_requirement_v1(r) for r in card.security_requirements])
    return doc


def _interface_v1(interface: AgentInterface) -> _JSON:
    out: _JSON = {
        "url": interface.url,
        "protocolBinding": interface.protocol_binding,
        "protocolVersion": interface.protocol_version,
    }
    _put(out, "tenant", interface.tenant)
    return out


def _skill_v1(skill: AgentSkill) -> _JSON:
    out = _skill_base(skill)
    _put_list(
        out, "securityRequirements", [_requirement_v1(r) for r in skill.security_requirements]
    )
    return out


def _scheme_v1(scheme: SecurityScheme) -> _JSON:
    """The ProtoJSON oneof: one member named after the scheme's kind."""
    return {SCHEME_KINDS[type(scheme)][0]: _scheme_body(scheme, "1.0")}


def _flows_v1(flows: OAuthFlows) -> _JSON:
    """1.0 ``OAuthFlows`` is a oneof, so only the first set flow survives."""
    pairs = set_flows(flows)
    if not pairs:
        return {}
    kind, flow = pairs[0]
    return {FLOW_KINDS[kind][0]: _flow(kind, flow, "1.0")}


def _requirement_v1(requirement: SecurityRequirement) -> _JSON:
    return {"schemes": {name: {"list": list(scopes)} for name, scopes in requirement.items()}}


# -- 0.3 -------------------------------------------------------------------------------


def _encode_v0_3(card: AgentCard) -> _JSON:
    doc = _common(card)
    doc["protocolVersion"] = PROTOCOL_VERSION_0_3
    doc.update(_endpoints_v0_3(card.supported_interfaces))
    doc["capabilities"] = _capabilities(card.capabilities, "0.3")
    _tail(card, doc)
    doc["skills"] = [_skill_v0_3(s) for s in card.skills]
    if card.security_schemes is not None:
        doc["securitySchemes"] = {k: _scheme_v0_3(v) for k, v in card.security_schemes.items()}
    _put_list(doc, "security", [_requirement_v0_3(r) for r in card.security_requirements])
    if card.capabilities.extended_agent_card:
        doc["supportsAuthenticatedExtendedCard"] = True
    return doc


def _endpoints_v0_3(interfaces: Sequence[AgentInterface]) -> _JSON:
    """``url``, ``preferredTransport`` and ``additionalInterfaces`` (see module docstring)."""
    group = [i for i in interfaces if i.protocol_version.startswith("0.")] or list(interfaces)
    main = next((i for i in group if i.protocol_binding == "JSONRPC"), group[0])
    out: _JSON = {"url": main.url, "preferredTransport": main.protocol_binding}
    pairs = unique((i.url, i.protocol_binding) for i in [main, *group])
    if len(pairs) > 1:
        out["additionalInterfaces"] = [{"url": u, "transport": t} for u, t in pairs]
    return out


def _skill_v0_3(skill: AgentSkill) -> _JSON:
    out = _skill_base(skill)
    _put_list(out, "security", [_requirement_v0_3(r) for r in skill.security_requirements])
    return out


def _scheme_v0_3(scheme: SecurityScheme) -> _JSON:
    """OpenAPI style: a ``type`` member beside the scheme's own members."""
    return {"type": SCHEME_KINDS[type(scheme)][1], **_scheme_body(scheme, "0.3")}


def _flows_v0_3(flows: OAuthFlows) -> _JSON:
    """0.3 may list several flows but knows no ``deviceCode``, which is dropped."""
    return {
        FLOW_KINDS[kind][0]: _flow(kind, flow, "0.3")
        for kind, flow in set_flows(flows)
        if kind != "device_code"
    }


def _requirement_v0_3(requirement: SecurityRequirement) -> _JSON:
    return {name: list(scopes) for name, scopes in requirement.items()}


# -- dual ------------------------------------------------------------------------------


def _member(doc: _JSON, key: str) -> _JSON:
    """The object member ``key`` of a document this module wrote."""
    value = doc[key]
    if not isinstance(value, dict):
        raise TypeError(f"the encoded card's {key!r} is not an object")
    return value


def encode_card_dual(card: AgentCard) -> _JSON:
    """One document for 0.3 and 1.0 readers alike (the module docstring says how)."""
    doc = _encode_v1(card)
    doc.update(_endpoints_v0_3(card.supported_interfaces))
    doc["protocolVersion"] = PROTOCOL_VERSION_0_3
    if card.capabilities.extended_agent_card:
        doc["supportsAuthenticatedExtendedCard"] = True
    _put(_member(doc, "capabilities"), "stateTransitionHistory",
         card.capabilities.state_transition_history)
    _put_list(doc, "security", [_requirement_v0_3(r) for r in card.security_requirements])
    skills = doc["skills"]
    for skill, out in zip(card.skills, skills if isinstance(skills, list) else (), strict=True):
        if isinstance(out, dict):
            _put_list(out, "security",
                      [_requirement_v0_3(r) for r in skill.security_requirements])
    if card.security_schemes is not None:
        doc["securitySchemes"] = {
            name: {**_scheme_v0_3(scheme), **_scheme_v1(scheme)}
            for name, scheme in card.security_schemes.items()
        }
    return doc
