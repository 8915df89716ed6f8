"""The Agent Card read from the 0.3 shape, the 1.0 shape, or the dual document.

The reader is told nothing about the version: each member is looked for under
both spellings (see "Leniency on input" in :mod:`.card`). Errors name the
JSON path, prefixed by the caller's ``path``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from .. import models as m
from .._jsonvalue import JSONObject, JSONValue
from ..errors import InvalidParamsError
from ._card_shapes import FLOW_KINDS, FLOW_URLS, SCHEME_KINDS, major_minor, set_flows, unique
from ._common import join
from ._fields import snake

__all__ = ["decode_card"]

_T = TypeVar("_T")


# -- decoding: typed access with JSON paths ---------------------------------------------


def _invalid(path: str, problem: str) -> InvalidParamsError:
    """The error for a malformed card; the path goes into the message and field_violations."""
    where = path or "agent card"
    return InvalidParamsError(
        f"Invalid agent card: {where} {problem}", field_violations={path: problem}
    )


def _get(obj: Mapping[str, JSONValue], key: str) -> object:
    """The member ``key`` (or its snake_case name); None when absent or null."""
    value = obj.get(key)
    return obj.get(snake(key)) if value is None else value


def _object(value: object, path: str) -> Mapping[str, JSONValue]:
    if not isinstance(value, Mapping):
        raise _invalid(path, "must be an object")
    return value


def _items(obj: Mapping[str, JSONValue], key: str, path: str) -> list[tuple[str, object]]:
    """(path, item) for each element of the array member ``key`` (absent -> none)."""
    value = _get(obj, key)
    where = join(path, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _invalid(where, "must be an array")
    return [(f"{where}[{n}]", item) for n, item in enumerate(value)]


def _decode_list(
    obj: Mapping[str, JSONValue], key: str, path: str, decode: Callable[[object, str], _T]
) -> tuple[_T, ...]:
    return tuple(decode(item, where) for where, item in _items(obj, key, path))


def _string(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise _invalid(path, "must be a string")
    return value


def _str(obj: Mapping[str, JSONValue], key: str, path: str) -> str | None:
    value = _get(obj, key)
    return None if value is None else _string(value, join(path, key))


def _required(obj: Mapping[str, JSONValue], key: str, path: str) -> str:
    value = _str(obj, key, path)
    if value is None:
        raise _invalid(join(path, key), "is required")
    return value


def _strings(obj: Mapping[str, JSONValue], key: str, path: str) -> tuple[str, ...]:
    return _decode_list(obj, key, path, _string)


def _maybe_strings(obj: Mapping[str, JSONValue], key: str, path: str) -> tuple[str, ...] | None:
    """Like :func:`_strings`, but None when absent, so that ``[]`` and absent differ."""
    return None if _get(obj, key) is None else _strings(obj, key, path)


def _bool(obj: Mapping[str, JSONValue], key: str, path: str) -> bool | None:
    value = _get(obj, key)
    if value is not None and not isinstance(value, bool):
        raise _invalid(join(path, key), "must be a boolean")
    return value


def _struct(obj: Mapping[str, JSONValue], key: str, path: str) -> JSONObject | None:
    value = _get(obj, key)
    return None if value is None else dict(_object(value, join(path, key)))


def _kwargs(**values: Any) -> dict[str, Any]:
    """Only the values that were present, so the model's defaults fill the rest."""
    return {k: v for k, v in values.items() if v is not None}


# -- decoding: the card -----------------------------------------------------------------


def decode_card(data: object, *, path: str = "") -> m.AgentCard:
    """Read a 0.3, 1.0 or dual card; ``path`` prefixes the JSON paths in errors."""
    obj = _object(data, path)
    if _get(obj, "skills") is None:
        raise _invalid(join(path, "skills"), "is required")
    return m.AgentCard(
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


def _interfaces(obj: Mapping[str, JSONValue], path: str) -> tuple[m.AgentInterface, ...]:
    """1.0 ``supportedInterfaces`` when non-empty, else the 0.3 endpoint members."""
    interfaces = _decode_list(obj, "supportedInterfaces", path, _interface)
    return interfaces or _interfaces_v0_3(obj, path)


def _interface(value: object, path: str) -> m.AgentInterface:
    obj = _object(value, path)
    return m.AgentInterface(
        url=_required(obj, "url", path),
        **_kwargs(
            protocol_binding=_str(obj, "protocolBinding", path),
            protocol_version=_str(obj, "protocolVersion", path),
            tenant=_str(obj, "tenant", path),
        ),
    )


def _interfaces_v0_3(obj: Mapping[str, JSONValue], path: str) -> tuple[m.AgentInterface, ...]:
    """``url`` + ``preferredTransport`` first, then ``additionalInterfaces`` not equal to it."""
    declared = _str(obj, "protocolVersion", path)
    version = (major_minor(declared) if declared else None) or "0.3"
    pairs = [(_required(obj, "url", path), _str(obj, "preferredTransport", path) or "JSONRPC")]
    for where, item in _items(obj, "additionalInterfaces", path):
        extra = _object(item, where)
        pairs.append((_required(extra, "url", where), _required(extra, "transport", where)))
    return tuple(
        m.AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for url, binding in unique(pairs)
    )


def _capabilities(card: Mapping[str, JSONValue], path: str) -> m.AgentCapabilities:
    """Either version's capabilities; the 0.3 top-level extended-card flag is a fallback."""
    where = join(path, "capabilities")
    value = _get(card, "capabilities")
    obj = _object({} if value is None else value, where)
    extended = _bool(obj, "extendedAgentCard", where)
    if extended is None:
        extended = _bool(card, "supportsAuthenticatedExtendedCard", path)
    return m.AgentCapabilities(
        streaming=_bool(obj, "streaming", where),
        push_notifications=_bool(obj, "pushNotifications", where),
        extended_agent_card=extended,
        state_transition_history=_bool(obj, "stateTransitionHistory", where),
        extensions=_decode_list(obj, "extensions", where, _extension_in),
    )


def _extension_in(value: object, path: str) -> m.AgentExtension:
    obj = _object(value, path)
    return m.AgentExtension(
        uri=_required(obj, "uri", path),
        description=_str(obj, "description", path),
        required=bool(_bool(obj, "required", path)),
        params=_struct(obj, "params", path),
    )


def _provider(card: Mapping[str, JSONValue], path: str) -> m.AgentProvider | None:
    value = _get(card, "provider")
    if value is None:
        return None
    where = join(path, "provider")
    obj = _object(value, where)
    return m.AgentProvider(
        organization=_required(obj, "organization", where), url=_required(obj, "url", where)
    )


def _signature_in(value: object, path: str) -> m.AgentCardSignature:
    obj = _object(value, path)
    return m.AgentCardSignature(
        protected=_required(obj, "protected", path),
        signature=_required(obj, "signature", path),
        header=_struct(obj, "header", path),
    )


def _skill(value: object, path: str) -> m.AgentSkill:
    obj = _object(value, path)
    # Some servers' cards carry name-only skills; the name then serves as the id.
    name = _required(obj, "name", path)
    return m.AgentSkill(
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


def _requirements(obj: Mapping[str, JSONValue], path: str) -> tuple[m.SecurityRequirement, ...]:
    """1.0 ``securityRequirements`` if present, else 0.3 ``security``; each in either shape."""
    key = "securityRequirements" if _get(obj, "securityRequirements") is not None else "security"
    return _decode_list(obj, key, path, _requirement)


def _requirement(value: object, path: str) -> m.SecurityRequirement:
    """``{"schemes": {name: {"list": [...]}}}`` (1.0) or ``{name: [...]}`` (0.3)."""
    obj = _object(value, path)
    schemes = obj.get("schemes")
    if isinstance(schemes, Mapping):
        where = join(path, "schemes")
        return {
            name: _strings(_object(scopes, join(where, name)), "list", join(where, name))
            for name, scopes in schemes.items()
        }
    return {name: _scopes(scopes, join(path, name)) for name, scopes in obj.items()}


def _scopes(value: object, path: str) -> tuple[str, ...]:
    """A 0.3 requirement's scope list."""
    if not isinstance(value, list):
        raise _invalid(path, "must be an array")
    return tuple(_string(scope, f"{path}[{n}]") for n, scope in enumerate(value))


def _schemes(card: Mapping[str, JSONValue], path: str) -> dict[str, m.SecurityScheme] | None:
    value = _get(card, "securitySchemes")
    if value is None:
        return None
    where = join(path, "securitySchemes")
    return {name: _scheme(item, join(where, name)) for name, item in _object(value, where).items()}


def _scheme(value: object, path: str) -> m.SecurityScheme:
    """A 1.0 wrapper, a 0.3 ``type`` object, or both merged (the dual card)."""
    obj = _object(value, path)
    wrapped = [(cls, w) for cls, (w, _) in SCHEME_KINDS.items() if _get(obj, w) is not None]
    if len(wrapped) > 1:
        raise _invalid(path, "must hold exactly one kind of security scheme")
    if wrapped:
        cls, member = wrapped[0]
        scheme = _scheme_body_in(cls, _get(obj, member), join(path, member))
        if isinstance(scheme, m.OAuth2SecurityScheme) and obj.get("type") == "oauth2":
            scheme = _with_v0_3_flows(scheme, obj, path)
        return scheme
    kind = _str(obj, "type", path)
    for cls, (_, type_) in SCHEME_KINDS.items():
        if kind == type_:
            return _scheme_body_in(cls, obj, path)
    raise _invalid(join(path, "type"), f"is not a known security scheme type: {kind!r}")


def _scheme_body_in(cls: type, value: object, path: str) -> m.SecurityScheme:
    """The scheme's own members; an API key's location may be ``location`` or ``in``."""
    obj = _object(value, path)
    description = _str(obj, "description", path)
    if cls is m.APIKeySecurityScheme:
        location = _str(obj, "location", path) or _required(obj, "in", path)
        name = _required(obj, "name", path)
        return m.APIKeySecurityScheme(name=name, location=location, description=description)
    if cls is m.HTTPAuthSecurityScheme:
        return m.HTTPAuthSecurityScheme(
            scheme=_required(obj, "scheme", path),
            bearer_format=_str(obj, "bearerFormat", path),
            description=description,
        )
    if cls is m.OAuth2SecurityScheme:
        if _get(obj, "flows") is None:
            raise _invalid(join(path, "flows"), "is required")
        return m.OAuth2SecurityScheme(
            flows=_flows(_get(obj, "flows"), join(path, "flows")),
            oauth2_metadata_url=_str(obj, "oauth2MetadataUrl", path),
            description=description,
        )
    if cls is m.OpenIdConnectSecurityScheme:
        url = _required(obj, "openIdConnectUrl", path)
        return m.OpenIdConnectSecurityScheme(open_id_connect_url=url, description=description)
    return m.MutualTLSSecurityScheme(description=description)


def _with_v0_3_flows(
    scheme: m.OAuth2SecurityScheme, obj: Mapping[str, JSONValue], path: str
) -> m.OAuth2SecurityScheme:
    """In a dual card, the 0.3 ``flows`` may carry flows the 1.0 oneof had to drop."""
    if _get(obj, "flows") is None:
        return scheme
    legacy = _flows(_get(obj, "flows"), join(path, "flows"))
    kept = {kind: flow for kind, flow in set_flows(scheme.flows)}
    return replace(scheme, flows=replace(legacy, **kept))


def _flows(value: object, path: str) -> m.OAuthFlows:
    """Every flow present (0.3 allows several; 1.0 sends one)."""
    obj = _object(value, path)
    found = {}
    for kind, (wire, _) in FLOW_KINDS.items():
        if _get(obj, wire) is not None:
            found[kind] = _flow_in(_get(obj, wire), join(path, wire))
    return m.OAuthFlows(**found)


def _flow_in(value: object, path: str) -> m.OAuthFlow:
    """A flow of any kind; "" URLs (our placeholders, or ProtoJSON defaults) read as unset."""
    obj = _object(value, path)
    urls = {attr: _str(obj, wire, path) or None for attr, wire in FLOW_URLS.items()}
    return m.OAuthFlow(
        scopes=_scope_map(obj, path), pkce_required=_bool(obj, "pkceRequired", path), **urls
    )


def _scope_map(flow: Mapping[str, JSONValue], path: str) -> dict[str, str]:
    """Scope name -> description (the map may be empty or absent)."""
    value = _get(flow, "scopes")
    where = join(path, "scopes")
    scopes = _object({} if value is None else value, where)
    return {name: _string(text, join(where, name)) for name, text in scopes.items()}
