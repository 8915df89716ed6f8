"""The Agent Card on the wire, in the 0.3 and the 1.0 shape, and both at once.

:func:`encode_card` writes one version; :func:`decode_card` reads either (and
the dual document) without being told which; :func:`encode_card_dual` writes
the one document we publish at ``/.well-known/agent-card.json``.

Decisions (see REFERENCE §6):

* **Endpoints.** :class:`AgentCard` keeps endpoints only in
  ``supported_interfaces``. The 0.3 ``url``/``preferredTransport`` come from the
  first JSONRPC interface among those whose ``protocol_version`` is ``0.x``
  (else among all interfaces; else the first interface of that group).
  ``additionalInterfaces`` is written only when the group has more than one
  (url, binding) pair, and then lists *all* of them, the main one included, as
  the 0.3 schema's best practice asks. Reading a 0.3 card gives the main
  endpoint first, then the additional ones not equal to it, each with the
  major.minor of ``protocolVersion`` (``"0.3"`` when absent or odd).
* **Dual card.** The 1.0 card plus the 0.3 members: top-level ``url``,
  ``preferredTransport``, ``protocolVersion`` (``"0.3.0"``, as 0.3 agents
  write it), ``additionalInterfaces``,
  ``supportsAuthenticatedExtendedCard`` (only when true) and ``security``;
  ``skills[].security``; ``capabilities.stateTransitionHistory``; and, in every
  ``securitySchemes`` entry, the 0.3 members (``type``, ``in``, ``flows``…)
  merged beside the 1.0 wrapper member (``apiKeySecurityScheme``…), as the
  official SDK does. Both readers ignore members they do not know, and no 0.3
  member name collides with a 1.0 one, so each reader sees a whole card. We
  merge because nothing else can serve both: the 0.3 schema requires ``type``
  in each scheme and the strict 1.0 schema forbids it. The price: the dual
  document is *not* valid against the strict 1.0 schema (nor would it be with
  only the top-level legacy members, as the TCK's CARD-STRUCT-001 checks);
  it is valid once the 0.3 members listed here are removed. Serve
  ``encode_card(card, "1.0")`` where a strict 1.0 validator must pass.
* **Lossy spots.** 1.0 has no ``stateTransitionHistory`` and one OAuth flow
  per scheme (we write the first set one, in the order authorizationCode,
  clientCredentials, deviceCode, implicit, password). 0.3 has no tenant, no
  interface protocol version, no ``deviceCode`` flow, no ``pkceRequired`` and
  says nothing when the extended card is unsupported (``False`` reads back as
  ``None``). OAuth flow URLs the schemas require are written as ``""`` when
  unset, and ``""`` reads back as unset. An OAuth2 scheme with no flow at
  all (possible in the model) is written with ``"flows": {}``, which the 1.0
  oneof does not allow; that is the card author's mistake to fix.
* **Leniency on input.** Unknown members are ignored; JSON ``null`` counts as
  absent; ProtoJSON's snake_case member names are accepted; a 1.0 requirement
  ``{"schemes": {...}}`` and a 0.3 requirement ``{"name": [...]}`` are told
  apart by shape; a 0.3 flows object with several flows is kept whole. Only
  ``name``, ``description``, ``version`` and ``skills`` (plus an endpoint) are
  required at the top level, as the seed requires; other required-by-spec
  members fall back to the model defaults. Wrong types raise
  :class:`InvalidParamsError` naming the JSON path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from ..errors import InvalidParamsError
from ..models import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlow,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)

__all__ = ["encode_card", "encode_card_dual", "decode_card", "PROTOCOL_VERSION_0_3"]

#: What a 0.3 card says in its top-level ``protocolVersion``.
PROTOCOL_VERSION_0_3 = "0.3.0"

_T = TypeVar("_T")
_JSON = dict[str, Any]

#: model class -> (1.0 wrapper member, 0.3 ``type``)
_SCHEME_KINDS: Mapping[type, tuple[str, str]] = {
    APIKeySecurityScheme: ("apiKeySecurityScheme", "apiKey"),
    HTTPAuthSecurityScheme: ("httpAuthSecurityScheme", "http"),
    OAuth2SecurityScheme: ("oauth2SecurityScheme", "oauth2"),
    OpenIdConnectSecurityScheme: ("openIdConnectSecurityScheme", "openIdConnect"),
    MutualTLSSecurityScheme: ("mtlsSecurityScheme", "mutualTLS"),
}

#: OAuthFlows attribute -> (wire member, URL members as (attribute, wire, required)).
#: "required" is the union of what the 0.3 schema and the 1.0 proto require.
_FLOW_KINDS: Mapping[str, tuple[str, tuple[tuple[str, str, bool], ...]]] = {
    "authorization_code": (
        "authorizationCode",
        (
            ("authorization_url", "authorizationUrl", True),
            ("token_url", "tokenUrl", True),
            ("refresh_url", "refreshUrl", False),
        ),
    ),
    "client_credentials": (
        "clientCredentials",
        (("token_url", "tokenUrl", True), ("refresh_url", "refreshUrl", False)),
    ),
    "device_code": (
        "deviceCode",
        (
            ("device_authorization_url", "deviceAuthorizationUrl", True),
            ("token_url", "tokenUrl", True),
            ("refresh_url", "refreshUrl", False),
        ),
    ),
    "implicit": (
        "implicit",
        (("authorization_url", "authorizationUrl", True), ("refresh_url", "refreshUrl", False)),
    ),
    "password": (
        "password",
        (("token_url", "tokenUrl", True), ("refresh_url", "refreshUrl", False)),
    ),
}
_FLOW_URLS = (
    ("authorization_url", "authorizationUrl"),
    ("token_url", "tokenUrl"),
    ("refresh_url", "refreshUrl"),
    ("device_authorization_url", "deviceAuthorizationUrl"),
)


# -- encoding: shared pieces ----------------------------------------------------------


def encode_card(card: AgentCard, version: str) -> _JSON:
    """The card as ``version`` ("0.3" or "1.0"; patch levels ignored) expects it."""
    if _major_minor(version) == "1.0":
        return _encode_v1(card)
    if _major_minor(version) == "0.3":
        return _encode_v0_3(card)
    raise ValueError(f"no Agent Card encoding for A2A version {version!r}")


def _major_minor(version: str) -> str | None:
    """``"0.3.0"`` -> ``"0.3"``; None when it is not a dotted version."""
    match = re.match(r"(\d+)\.(\d+)(?:\.\d+)?$", version.strip())
    return f"{int(match[1])}.{int(match[2])}" if match else None


def _put(obj: _JSON, key: str, value: Any) -> None:
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


def _flow(kind: str, flow: OAuthFlow, version: str) -> _JSON:
    """One flow with the members its kind has; required URLs become "" when unset."""
    out: _JSON = {}
    for attr, wire, required in _FLOW_KINDS[kind][1]:
        value = getattr(flow, attr)
        _put(out, wire, "" if value is None and required else value)
    out["scopes"] = dict(flow.scopes)
    if kind == "authorization_code" and version == "1.0":
        _put(out, "pkceRequired", flow.pkce_required)
    return out


def _set_flows(flows: OAuthFlows) -> list[tuple[str, OAuthFlow]]:
    """The flows that are set, in :data:`_FLOW_KINDS` order."""
    pairs = ((kind, getattr(flows, kind)) for kind in _FLOW_KINDS)
    return [(kind, flow) for kind, flow in pairs if flow is not None]


# -- encoding: 1.0 ----------------------------------------------------------------------


def _encode_v1(card: AgentCard) -> _JSON:
    doc = _common(card)
    doc["supportedInterfaces"] = [_interface_v1(i) for i in card.supported_interfaces]
    doc["capabilities"] = _capabilities_v1(card.capabilities)
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


def _capabilities_v1(caps: AgentCapabilities) -> _JSON:
    """1.0 capabilities: ``stateTransitionHistory`` no longer exists and is dropped."""
    out: _JSON = {}
    _put(out, "streaming", caps.streaming)
    _put(out, "pushNotifications", caps.push_notifications)
    _put_list(out, "extensions", [_extension(e) for e in caps.extensions])
    _put(out, "extendedAgentCard", caps.extended_agent_card)
    return out


def _skill_v1(skill: AgentSkill) -> _JSON:
    out = _skill_base(skill)
    _put_list(
        out, "securityRequirements", [_requirement_v1(r) for r in skill.security_requirements]
    )
    return out


def _scheme_v1(scheme: SecurityScheme) -> _JSON:
    """The ProtoJSON oneof: one member named after the scheme's kind."""
    return {_SCHEME_KINDS[type(scheme)][0]: _scheme_body(scheme, "1.0")}


def _flows_v1(flows: OAuthFlows) -> _JSON:
    """1.0 ``OAuthFlows`` is a oneof, so only the first set flow survives."""
    pairs = _set_flows(flows)
    if not pairs:
        return {}
    kind, flow = pairs[0]
    return {_FLOW_KINDS[kind][0]: _flow(kind, flow, "1.0")}


def _requirement_v1(requirement: SecurityRequirement) -> _JSON:
    return {"schemes": {name: {"list": list(scopes)} for name, scopes in requirement.items()}}


# -- encoding: 0.3 ----------------------------------------------------------------------


def _encode_v0_3(card: AgentCard) -> _JSON:
    doc = _common(card)
    doc["protocolVersion"] = PROTOCOL_VERSION_0_3
    doc.update(_endpoints_v0_3(card.supported_interfaces))
    doc["capabilities"] = _capabilities_v0_3(card.capabilities)
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
    pairs = _unique((i.url, i.protocol_binding) for i in [main, *group])
    if len(pairs) > 1:
        out["additionalInterfaces"] = [{"url": u, "transport": t} for u, t in pairs]
    return out


def _unique(items: Iterable[_T]) -> list[_T]:
    """Items in first-seen order without repeats."""
    seen: list[_T] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _capabilities_v0_3(caps: AgentCapabilities) -> _JSON:
    """0.3 capabilities; the extended-card flag lives at the card's top level."""
    out: _JSON = {}
    _put(out, "streaming", caps.streaming)
    _put(out, "pushNotifications", caps.push_notifications)
    _put(out, "stateTransitionHistory", caps.state_transition_history)
    _put_list(out, "extensions", [_extension(e) for e in caps.extensions])
    return out


def _skill_v0_3(skill: AgentSkill) -> _JSON:
    out = _skill_base(skill)
    _put_list(out, "security", [_requirement_v0_3(r) for r in skill.security_requirements])
    return out


def _scheme_v0_3(scheme: SecurityScheme) -> _JSON:
    """OpenAPI style: a ``type`` member beside the scheme's own members."""
    return {"type": _SCHEME_KINDS[type(scheme)][1], **_scheme_body(scheme, "0.3")}


def _flows_v0_3(flows: OAuthFlows) -> _JSON:
    """0.3 may list several flows but knows no ``deviceCode``, which is dropped."""
    return {
        _FLOW_KINDS[kind][0]: _flow(kind, flow, "0.3")
        for kind, flow in _set_flows(flows)
        if kind != "device_code"
    }


def _requirement_v0_3(requirement: SecurityRequirement) -> _JSON:
    return {name: list(scopes) for name, scopes in requirement.items()}


# -- encoding: dual ---------------------------------------------------------------------


def encode_card_dual(card: AgentCard) -> _JSON:
    """One document for 0.3 and 1.0 readers alike (the module docstring says how)."""
    doc = _encode_v1(card)
    doc.update(_endpoints_v0_3(card.supported_interfaces))
    doc["protocolVersion"] = PROTOCOL_VERSION_0_3
    if card.capabilities.extended_agent_card:
        doc["supportsAuthenticatedExtendedCard"] = True
    _put(doc["capabilities"], "stateTransitionHistory", card.capabilities.state_transition_history)
    _put_list(doc, "security", [_requirement_v0_3(r) for r in card.security_requirements])
    for skill, out in zip(card.skills, doc["skills"], strict=True):
        _put_list(out, "security", [_requirement_v0_3(r) for r in skill.security_requirements])
    if card.security_schemes is not None:
        doc["securitySchemes"] = {
            name: {**_scheme_v0_3(scheme), **_scheme_v1(scheme)}
            for name, scheme in card.security_schemes.items()
        }
    return doc


# -- decoding: typed access with JSON paths ---------------------------------------------


def _invalid(path: str, problem: str) -> InvalidParamsError:
    """The error for a malformed card; the path goes into the message and field_violations."""
    where = path or "agent card"
    return InvalidParamsError(
        f"Invalid agent card: {where} {problem}", field_violations={path: problem}
    )


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _snake(name: str) -> str:
    """ProtoJSON readers must also accept the proto field name: ``iconUrl`` -> ``icon_url``."""
    return re.sub(r"([A-Z])", r"_\1", name).lower()


def _get(obj: Mapping[str, Any], key: str) -> Any:
    """The member ``key`` (or its snake_case name); None when absent or null."""
    value = obj.get(key)
    return obj.get(_snake(key)) if value is None else value


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _invalid(path, "must be an object")
    return value


def _items(obj: Mapping[str, Any], key: str, path: str) -> list[tuple[str, Any]]:
    """(path, item) for each element of the array member ``key`` (absent -> none)."""
    value = _get(obj, key)
    where = _at(path, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _invalid(where, "must be an array")
    return [(f"{where}[{n}]", item) for n, item in enumerate(value)]


def _decode_list(
    obj: Mapping[str, Any], key: str, path: str, decode: Callable[[Any, str], _T]
) -> tuple[_T, ...]:
    return tuple(decode(item, where) for where, item in _items(obj, key, path))


def _string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _invalid(path, "must be a string")
    return value


def _str(obj: Mapping[str, Any], key: str, path: str) -> str | None:
    value = _get(obj, key)
    return None if value is None else _string(value, _at(path, key))


def _required(obj: Mapping[str, Any], key: str, path: str) -> str:
    value = _str(obj, key, path)
    if value is None:
        raise _invalid(_at(path, key), "is required")
    return value


def _strings(obj: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
    return _decode_list(obj, key, path, _string)


def _maybe_strings(obj: Mapping[str, Any], key: str, path: str) -> tuple[str, ...] | None:
    """Like :func:`_strings`, but None when absent, so that ``[]`` and absent differ."""
    return None if _get(obj, key) is None else _strings(obj, key, path)


def _bool(obj: Mapping[str, Any], key: str, path: str) -> bool | None:
    value = _get(obj, key)
    if value is not None and not isinstance(value, bool):
        raise _invalid(_at(path, key), "must be a boolean")
    return value


def _struct(obj: Mapping[str, Any], key: str, path: str) -> dict[str, Any] | None:
    value = _get(obj, key)
    return None if value is None else dict(_object(value, _at(path, key)))


def _kwargs(**values: Any) -> dict[str, Any]:
    """Only the values that were present, so the model's defaults fill the rest."""
    return {k: v for k, v in values.items() if v is not None}


# -- decoding: the card -----------------------------------------------------------------


def decode_card(data: Any, *, path: str = "") -> AgentCard:
    """Read a 0.3, 1.0 or dual card; ``path`` prefixes the JSON paths in errors."""
    obj = _object(data, path)
    if _get(obj, "skills") is None:
        raise _invalid(_at(path, "skills"), "is required")
    return AgentCard(
        name=_required(obj, "name", path),
        description=_required(obj, "description", path),
        version=_required(obj, "version", path),
        supported_interfaces=_interfaces(obj, path),
        capabilities=_capabilities(obj, path),
        skills=_decode_list(obj, "skills", path, _skill),
        security_schemes=_schemes(obj, path),
        security_requirements=_requirements(obj, path),
        signatures=_decode_list(obj, "signatures", path, _signature_in),
        **_kwargs(
            default_input_modes=_maybe_strings(obj, "defaultInputModes", path),
            default_output_modes=_maybe_strings(obj, "defaultOutputModes", path),
            provider=_provider(obj, path),
            icon_url=_str(obj, "iconUrl", path),
            documentation_url=_str(obj, "documentationUrl", path),
        ),
    )


def _interfaces(obj: Mapping[str, Any], path: str) -> tuple[AgentInterface, ...]:
    """1.0 ``supportedInterfaces`` when non-empty, else the 0.3 endpoint members."""
    interfaces = _decode_list(obj, "supportedInterfaces", path, _interface)
    return interfaces or _interfaces_v0_3(obj, path)


def _interface(value: Any, path: str) -> AgentInterface:
    obj = _object(value, path)
    return AgentInterface(
        url=_required(obj, "url", path),
        **_kwargs(
            protocol_binding=_str(obj, "protocolBinding", path),
            protocol_version=_str(obj, "protocolVersion", path),
            tenant=_str(obj, "tenant", path),
        ),
    )


def _interfaces_v0_3(obj: Mapping[str, Any], path: str) -> tuple[AgentInterface, ...]:
    """``url`` + ``preferredTransport`` first, then ``additionalInterfaces`` not equal to it."""
    declared = _str(obj, "protocolVersion", path)
    version = (_major_minor(declared) if declared else None) or "0.3"
    pairs = [(_required(obj, "url", path), _str(obj, "preferredTransport", path) or "JSONRPC")]
    for where, item in _items(obj, "additionalInterfaces", path):
        extra = _object(item, where)
        pairs.append((_required(extra, "url", where), _required(extra, "transport", where)))
    return tuple(
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for url, binding in _unique(pairs)
    )


def _capabilities(card: Mapping[str, Any], path: str) -> AgentCapabilities:
    """Either version's capabilities; the 0.3 top-level extended-card flag is a fallback."""
    where = _at(path, "capabilities")
    value = _get(card, "capabilities")
    obj = _object({} if value is None else value, where)
    extended = _bool(obj, "extendedAgentCard", where)
    if extended is None:
        extended = _bool(card, "supportsAuthenticatedExtendedCard", path)
    return AgentCapabilities(
        streaming=_bool(obj, "streaming", where),
        push_notifications=_bool(obj, "pushNotifications", where),
        extended_agent_card=extended,
        state_transition_history=_bool(obj, "stateTransitionHistory", where),
        extensions=_decode_list(obj, "extensions", where, _extension_in),
    )


def _extension_in(value: Any, path: str) -> AgentExtension:
    obj = _object(value, path)
    return AgentExtension(
        uri=_required(obj, "uri", path),
        description=_str(obj, "description", path),
        required=bool(_bool(obj, "required", path)),
        params=_struct(obj, "params", path),
    )


def _provider(card: Mapping[str, Any], path: str) -> AgentProvider | None:
    value = _get(card, "provider")
    if value is None:
        return None
    where = _at(path, "provider")
    obj = _object(value, where)
    return AgentProvider(
        organization=_required(obj, "organization", where), url=_required(obj, "url", where)
    )


def _signature_in(value: Any, path: str) -> AgentCardSignature:
    obj = _object(value, path)
    return AgentCardSignature(
        protected=_required(obj, "protected", path),
        signature=_required(obj, "signature", path),
        header=_struct(obj, "header", path),
    )


def _skill(value: Any, path: str) -> AgentSkill:
    obj = _object(value, path)
    # Seed cards may carry name-only skills; the name then serves as the id.
    name = _required(obj, "name", path)
    return AgentSkill(
        id=_str(obj, "id", path) or name,
        name=name,
        security_requirements=_requirements(obj, path),
        **_kwargs(
            description=_str(obj, "description", path),
            tags=_strings(obj, "tags", path),
            examples=_strings(obj, "examples", path),
            input_modes=_strings(obj, "inputModes", path),
            output_modes=_strings(obj, "outputModes", path),
        ),
    )


# -- decoding: security -----------------------------------------------------------------


def _requirements(obj: Mapping[str, Any], path: str) -> tuple[SecurityRequirement, ...]:
    """1.0 ``securityRequirements`` if present, else 0.3 ``security``; each in either shape."""
    key = "securityRequirements" if _get(obj, "securityRequirements") is not None else "security"
    return _decode_list(obj, key, path, _requirement)


def _requirement(value: Any, path: str) -> SecurityRequirement:
    """``{"schemes": {name: {"list": [...]}}}`` (1.0) or ``{name: [...]}`` (0.3)."""
    obj = _object(value, path)
    schemes = obj.get("schemes")
    if isinstance(schemes, Mapping):
        where = _at(path, "schemes")
        return {
            name: _strings(_object(scopes, _at(where, name)), "list", _at(where, name))
            for name, scopes in schemes.items()
        }
    return {name: _scopes(scopes, _at(path, name)) for name, scopes in obj.items()}


def _scopes(value: Any, path: str) -> tuple[str, ...]:
    """A 0.3 requirement's scope list."""
    if not isinstance(value, list):
        raise _invalid(path, "must be an array")
    return tuple(_string(scope, f"{path}[{n}]") for n, scope in enumerate(value))


def _schemes(card: Mapping[str, Any], path: str) -> dict[str, SecurityScheme] | None:
    value = _get(card, "securitySchemes")
    if value is None:
        return None
    where = _at(path, "securitySchemes")
    return {name: _scheme(item, _at(where, name)) for name, item in _object(value, where).items()}


def _scheme(value: Any, path: str) -> SecurityScheme:
    """A 1.0 wrapper, a 0.3 ``type`` object, or both merged (the dual card)."""
    obj = _object(value, path)
    wrapped = [(cls, w) for cls, (w, _) in _SCHEME_KINDS.items() if _get(obj, w) is not None]
    if len(wrapped) > 1:
        raise _invalid(path, "must hold exactly one kind of security scheme")
    if wrapped:
        cls, member = wrapped[0]
        scheme = _scheme_body_in(cls, _get(obj, member), _at(path, member))
        if isinstance(scheme, OAuth2SecurityScheme) and obj.get("type") == "oauth2":
            scheme = _with_v0_3_flows(scheme, obj, path)
        return scheme
    kind = _str(obj, "type", path)
    for cls, (_, type_) in _SCHEME_KINDS.items():
        if kind == type_:
            return _scheme_body_in(cls, obj, path)
    raise _invalid(_at(path, "type"), f"is not a known security scheme type: {kind!r}")


def _scheme_body_in(cls: type, value: Any, path: str) -> SecurityScheme:
    """The scheme's own members; an API key's location may be ``location`` or ``in``."""
    obj = _object(value, path)
    description = _str(obj, "description", path)
    if cls is APIKeySecurityScheme:
        location = _str(obj, "location", path) or _required(obj, "in", path)
        name = _required(obj, "name", path)
        return APIKeySecurityScheme(name=name, location=location, description=description)
    if cls is HTTPAuthSecurityScheme:
        return HTTPAuthSecurityScheme(
            scheme=_required(obj, "scheme", path),
            bearer_format=_str(obj, "bearerFormat", path),
            description=description,
        )
    if cls is OAuth2SecurityScheme:
        if _get(obj, "flows") is None:
            raise _invalid(_at(path, "flows"), "is required")
        return OAuth2SecurityScheme(
            flows=_flows(_get(obj, "flows"), _at(path, "flows")),
            oauth2_metadata_url=_str(obj, "oauth2MetadataUrl", path),
            description=description,
        )
    if cls is OpenIdConnectSecurityScheme:
        url = _required(obj, "openIdConnectUrl", path)
        return OpenIdConnectSecurityScheme(open_id_connect_url=url, description=description)
    return MutualTLSSecurityScheme(description=description)


def _with_v0_3_flows(
    scheme: OAuth2SecurityScheme, obj: Mapping[str, Any], path: str
) -> OAuth2SecurityScheme:
    """In a dual card, the 0.3 ``flows`` may carry flows the 1.0 oneof had to drop."""
    if _get(obj, "flows") is None:
        return scheme
    legacy = _flows(_get(obj, "flows"), _at(path, "flows"))
    kept = {kind: flow for kind, flow in _set_flows(scheme.flows)}
    return replace(scheme, flows=replace(legacy, **kept))


def _flows(value: Any, path: str) -> OAuthFlows:
    """Every flow present (0.3 allows several; 1.0 sends one)."""
    obj = _object(value, path)
    found = {}
    for kind, (wire, _) in _FLOW_KINDS.items():
        if _get(obj, wire) is not None:
            found[kind] = _flow_in(_get(obj, wire), _at(path, wire))
    return OAuthFlows(**found)


def _flow_in(value: Any, path: str) -> OAuthFlow:
    """A flow of any kind; "" URLs (our placeholders, or ProtoJSON defaults) read as unset."""
    obj = _object(value, path)
    urls = {attr: _str(obj, wire, path) or None for attr, wire in _FLOW_URLS}
    return OAuthFlow(
        scopes=_scope_map(obj, path), pkce_required=_bool(obj, "pkceRequired", path), **urls
    )


def _scope_map(flow: Mapping[str, Any], path: str) -> dict[str, str]:
    """Scope name -> description (the map may be empty or absent)."""
    value = _get(flow, "scopes")
    where = _at(path, "scopes")
    scopes = _object({} if value is None else value, where)
    return {name: _string(text, _at(where, name)) for name, text in scopes.items()}
