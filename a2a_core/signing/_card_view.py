"""The content an Agent Card signature covers: the card as an A2A 1.0 reader sees it.

A served card is a wire dict, and which members it carries depends on the
variant served (1.0 only, or 1.0 plus the 0.3 members). A signature has to
cover the same bytes whoever computes them, so signer and verifier both run
the wire dict through one function, :func:`signed_content` (two SDKs once
rejected their own signatures because signing and verifying normalised
differently). It does what the official SDKs do:

1. read 0.3 spellings the way a 1.0 reader does (``url`` and friends become
   ``supportedInterfaces`` when that is absent, ``security`` becomes
   ``securityRequirements``, a ``type``d scheme becomes its 1.0 wrapper), and
   drop ``signatures``;
2. read the result as the 1.0 proto ``AgentCard`` (ProtoJSON): members the
   proto does not define are dropped, non-``optional`` scalars at their
   default (``"required": false``) are dropped, ``optional`` ones are kept,
   numbers inside ``Struct`` values (extension ``params``) are doubles;
3. drop empty strings, lists, objects and nulls, recursively.

Step 3 is what both official SDKs do; the 1.0 spec text says REQUIRED fields
stay even when empty (``"description": ""``). :func:`spec_content` is that
reading, which a verifier also accepts (see :mod:`.card`).
"""

# The tables below are the 1.0 proto's AgentCard messages, by ProtoJSON member
# name, with the proto field name a ProtoJSON parser also accepts. Kinds:
#   str / bool            non-optional scalar: absent when at its default
#   opt_str / opt_bool    `optional` scalar: kept whenever set
#   strs                  repeated string
#   msg / msgs            one message / repeated messages (target table named)
#   map_msg / map_str     map<string, message> / map<string, string>
#   struct                google.protobuf.Struct (any JSON object; numbers are doubles)
# A table marked oneof allows at most one of its members.

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .jcs import MAX_DEPTH, CanonicalizationError

__all__ = [
    "LEGACY_SCHEME_TYPES",
    "drop_empty",
    "from_legacy",
    "legacy_requirements",
    "legacy_scheme",
    "proto_view",
    "signed_content",
    "spec_content",
]


@dataclass(frozen=True, slots=True)
class _Field:
    json: str
    proto: str
    kind: str
    target: str = ""
    required: bool = False


def _f(json: str, proto: str, kind: str, target: str = "", required: bool = False) -> _Field:
    return _Field(json, proto, kind, target, required)


def _scopes(required: bool) -> _Field:
    return _f("scopes", "scopes", "map_str", required=required)


_REFRESH = _f("refreshUrl", "refresh_url", "str")
_FLOWS: dict[str, tuple[_Field, ...]] = {
    "AuthorizationCodeOAuthFlow": (
        _f("authorizationUrl", "authorization_url", "str", required=True),
        _f("tokenUrl", "token_url", "str", required=True),
        _REFRESH, _scopes(True), _f("pkceRequired", "pkce_required", "bool")),
    "ClientCredentialsOAuthFlow": (
        _f("tokenUrl", "token_url", "str", required=True), _REFRESH, _scopes(True)),
    "ImplicitOAuthFlow": (
        _f("authorizationUrl", "authorization_url", "str"), _REFRESH, _scopes(False)),
    "PasswordOAuthFlow": (_f("tokenUrl", "token_url", "str"), _REFRESH, _scopes(False)),
    "DeviceCodeOAuthFlow": (
        _f("deviceAuthorizationUrl", "device_authorization_url", "str", required=True),
        _f("tokenUrl", "token_url", "str", required=True), _REFRESH, _scopes(True)),
}

_MESSAGES: dict[str, tuple[_Field, ...]] = {
    "AgentCard": (
        _f("name", "name", "str", required=True),
        _f("description", "description", "str", required=True),
        _f("supportedInterfaces", "supported_interfaces", "msgs", "AgentInterface", True),
        _f("provider", "provider", "msg", "AgentProvider"),
        _f("version", "version", "str", required=True),
        _f("documentationUrl", "documentation_url", "opt_str"),
        _f("capabilities", "capabilities", "msg", "AgentCapabilities", True),
        _f("securitySchemes", "security_schemes", "map_msg", "SecurityScheme"),
        _f("securityRequirements", "security_requirements", "msgs", "SecurityRequirement"),
        _f("defaultInputModes", "default_input_modes", "strs", required=True),
        _f("defaultOutputModes", "default_output_modes", "strs", required=True),
        _f("skills", "skills", "msgs", "AgentSkill", True),
        _f("iconUrl", "icon_url", "opt_str"),
    ),
    "AgentInterface": (
        _f("url", "url", "str", required=True),
        _f("protocolBinding", "protocol_binding", "str", required=True),
        _f("tenant", "tenant", "str"),
        _f("protocolVersion", "protocol_version", "str", required=True),
    ),
    "AgentProvider": (
        _f("url", "url", "str", required=True),
        _f("organization", "organization", "str", required=True),
    ),
    "AgentCapabilities": (
        _f("streaming", "streaming", "opt_bool"),
        _f("pushNotifications", "push_notifications", "opt_bool"),
        _f("extensions", "extensions", "msgs", "AgentExtension"),
        _f("extendedAgentCard", "extended_agent_card", "opt_bool"),
    ),
    "AgentExtension": (
        _f("uri", "uri", "str"),
        _f("description", "description", "str"),
        _f("required", "required", "bool"),
        _f("params", "params", "struct"),
    ),
    "AgentSkill": (
        _f("id", "id", "str", required=True),
        _f("name", "name", "str", required=True),
        _f("description", "description", "str", required=True),
        _f("tags", "tags", "strs", required=True),
        _f("examples", "examples", "strs"),
        _f("inputModes", "input_modes", "strs"),
        _f("outputModes", "output_modes", "strs"),
        _f("securityRequirements", "security_requirements", "msgs", "SecurityRequirement"),
    ),
    "SecurityRequirement": (_f("schemes", "schemes", "map_msg", "StringList"),),
    "StringList": (_f("list", "list", "strs"),),
    "SecurityScheme": (
        _f("apiKeySecurityScheme", "api_key_security_scheme", "msg", "APIKeySecurityScheme"),
        _f("httpAuthSecurityScheme", "http_auth_security_scheme", "msg",
           "HTTPAuthSecurityScheme"),
        _f("oauth2SecurityScheme", "oauth2_security_scheme", "msg", "OAuth2SecurityScheme"),
        _f("openIdConnectSecurityScheme", "open_id_connect_security_scheme", "msg",
           "OpenIdConnectSecurityScheme"),
        _f("mtlsSecurityScheme", "mtls_security_scheme", "msg", "MutualTlsSecurityScheme"),
    ),
    "APIKeySecurityScheme": (
        _f("description", "description", "str"),
        _f("location", "location", "str", required=True),
        _f("name", "name", "str", required=True),
    ),
    "HTTPAuthSecurityScheme": (
        _f("description", "description", "str"),
        _f("scheme", "scheme", "str", required=True),
        _f("bearerFormat", "bearer_format", "str"),
    ),
    "OAuth2SecurityScheme": (
        _f("description", "description", "str"),
        _f("flows", "flows", "msg", "OAuthFlows", True),
        _f("oauth2MetadataUrl", "oauth2_metadata_url", "str"),
    ),
    "OpenIdConnectSecurityScheme": (
        _f("description", "description", "str"),
        _f("openIdConnectUrl", "open_id_connect_url", "str", required=True),
    ),
    "MutualTlsSecurityScheme": (_f("description", "description", "str"),),
    "OAuthFlows": (
        _f("authorizationCode", "authorization_code", "msg", "AuthorizationCodeOAuthFlow"),
        _f("clientCredentials", "client_credentials", "msg", "ClientCredentialsOAuthFlow"),
        _f("implicit", "implicit", "msg", "ImplicitOAuthFlow"),
        _f("password", "password", "msg", "PasswordOAuthFlow"),
        _f("deviceCode", "device_code", "msg", "DeviceCodeOAuthFlow"),
    ),
    **_FLOWS,
}
_ONEOF = {"SecurityScheme", "OAuthFlows"}

#: 0.3 security scheme ``type`` -> the 1.0 wrapper member.
LEGACY_SCHEME_TYPES = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}


def _bad(path: str, what: str) -> CanonicalizationError:
    return CanonicalizationError(f"{path or 'card'} {what}")


# -- step 1: 0.3 spellings read as 1.0 -----------------------------------------------


def from_legacy(card: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``card`` with the 0.3 members turned into 1.0 ones, as a 1.0 reader does.

    The 0.3 top-level members are removed either way; they fill the 1.0 ones
    only where those are absent.
    """
    doc = copy.deepcopy(dict(card))
    doc.pop("signatures", None)
    _legacy_extended_card(doc)
    _legacy_interfaces(doc)
    _legacy_security(doc)
    return doc


def _legacy_extended_card(doc: dict[str, Any]) -> None:
    if doc.pop("supportsAuthenticatedExtendedCard", None):
        capabilities = doc.setdefault("capabilities", {})
        if isinstance(capabilities, dict) and "extendedAgentCard" not in capabilities:
            capabilities["extendedAgentCard"] = True


def _legacy_interfaces(doc: dict[str, Any]) -> None:
    url = doc.pop("url", None)
    transport = doc.pop("preferredTransport", "JSONRPC")
    version = doc.pop("protocolVersion", "0.3.0")
    additional = doc.pop("additionalInterfaces", None) or []
    if "supportedInterfaces" in doc or not url:
        return
    if not isinstance(additional, list):
        raise _bad("additionalInterfaces", "is not a list")
    interfaces = [{"url": url, "protocolBinding": transport, "protocolVersion": version}]
    for entry in additional:
        if not isinstance(entry, Mapping):
            raise _bad("additionalInterfaces", "holds a non-object")
        interfaces.append({"url": entry.get("url"), "protocolBinding": entry.get("transport"),
                           "protocolVersion": version})
    doc["supportedInterfaces"] = interfaces


def legacy_requirements(value: Any, path: str) -> list[dict[str, Any]]:
    """0.3 ``security`` (``[{"name": [scopes]}]``) in the 1.0 ``securityRequirements`` shape."""
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        raise _bad(path, "is not a list of objects")
    return [{"schemes": {name: {"list": scopes} for name, scopes in r.items()}} for r in value]


def _legacy_security(doc: dict[str, Any]) -> None:
    security = doc.pop("security", None)
    if "securityRequirements" not in doc and security is not None:
        doc["securityRequirements"] = legacy_requirements(security, "security")
    skills = doc.get("skills")
    for skill in skills if isinstance(skills, list) else ():
        if isinstance(skill, dict):
            legacy = skill.pop("security", None)
            if "securityRequirements" not in skill and legacy is not None:
                skill["securityRequirements"] = legacy_requirements(legacy, "skills.security")
    schemes = doc.get("securitySchemes")
    if isinstance(schemes, dict):
        for name, scheme in schemes.items():
            if isinstance(scheme, dict) and "type" in scheme:
                schemes[name] = legacy_scheme(scheme)


def legacy_scheme(scheme: Mapping[str, Any]) -> dict[str, Any]:
    """A 0.3 scheme (``{"type": "apiKey", "in": …}``) as its 1.0 wrapper.

    Its other members (a dual card's 1.0 wrapper among them) go inside the
    wrapper, where a 1.0 reader ignores what it does not define: the 0.3
    members are what a 1.0 reader takes from such a scheme.
    """
    body = dict(scheme)
    kind = body.pop("type", None)
    wrapper = LEGACY_SCHEME_TYPES.get(kind) if isinstance(kind, str) else None
    if wrapper is None:
        return body
    if kind == "apiKey" and "in" in body:
        body["location"] = body.pop("in")
    return {wrapper: body}


# -- step 2: the proto reading -----------------------------------------------------------


def proto_view(value: Any, message: str = "AgentCard", *, keep_required: bool = False,
               path: str = "", depth: int = 1) -> dict[str, Any]:
    """``value`` read as the proto ``message`` and written back as ProtoJSON.

    ``keep_required`` writes REQUIRED members even when absent or at their default.

    :raises CanonicalizationError: a member has the wrong type, or a oneof holds two.
    """
    if not isinstance(value, Mapping):
        raise _bad(path, "is not an object")
    out: dict[str, Any] = {}
    for field in _MESSAGES[message]:
        present = [name for name in (field.json, field.proto) if value.get(name) is not None]
        if len(set(present)) > 1:
            raise _bad(_join(path, field.json), f"is given twice (also as {field.proto})")
        where = _join(path, field.json)
        if present:
            read = _read(field, value[present[0]], keep_required, where, depth)
            if keep_required and field.required:
                out[field.json] = read
            else:
                _put(out, field, read)
        elif keep_required and field.required:
            out[field.json] = _default(field)
    if message in _ONEOF and len(out) > 1:
        raise _bad(path, f"holds more than one of {sorted(out)}")
    return out


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _default(field: _Field) -> Any:
    return {"strs": [], "msgs": [], "msg": {}, "map_str": {}, "map_msg": {}}.get(field.kind, "")


def _put(out: dict[str, Any], field: _Field, value: Any) -> None:
    """Omit what ProtoJSON omits: non-optional defaults, empty repeated fields and maps."""
    if field.kind in ("str", "bool") and not value:
        return
    if field.kind in ("strs", "msgs", "map_msg", "map_str") and not value:
        return
    out[field.json] = value


def _read(field: _Field, value: Any, keep: bool, path: str, depth: int) -> Any:
    kind = field.kind
    if kind in ("str", "opt_str"):
        return _typed(value, str, path, "a string")
    if kind in ("bool", "opt_bool"):
        return _typed(value, bool, path, "a boolean")
    if kind == "strs":
        return [_typed(v, str, f"{path}[]", "a string") for v in _list(value, path)]
    if kind == "msg":
        return proto_view(value, field.target, keep_required=keep, path=path, depth=depth + 1)
    if kind == "msgs":
        return [proto_view(v, field.target, keep_required=keep, path=f"{path}[{i}]",
                           depth=depth + 2) for i, v in enumerate(_list(value, path))]
    if kind == "map_str":
        return {k: _typed(v, str, f"{path}[{k}]", "a string") for k, v in _map(value, path)}
    if kind == "map_msg":
        return {k: proto_view(v, field.target, keep_required=keep, path=f"{path}[{k}]",
                              depth=depth + 2) for k, v in _map(value, path)}
    return _struct(_typed(value, Mapping, path, "an object"), path, depth + 1)


def _typed(value: Any, kind: type, path: str, what: str) -> Any:
    if not isinstance(value, kind):
        raise _bad(path, f"is not {what}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(path, "is not a list")
    if any(item is None for item in value):
        raise _bad(path, "holds a null")
    return value


def _map(value: Any, path: str) -> list[tuple[str, Any]]:
    if not isinstance(value, Mapping):
        raise _bad(path, "is not an object")
    return [(k, v) for k, v in value.items() if v is not None]


def _struct(value: Any, path: str, depth: int) -> Any:
    """A Struct/Value as ProtoJSON writes it back: every number a double."""
    if depth > MAX_DEPTH:
        raise _bad(path, f"nests deeper than {MAX_DEPTH}")
    if isinstance(value, Mapping):
        return {_typed(k, str, path, "an object with string keys"):
                _struct(v, f"{path}.{k}", depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_struct(v, f"{path}[]", depth + 1) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError as exc:
            raise _bad(path, "is a number no double holds") from exc
    raise _bad(path, f"is not a JSON value ({type(value).__name__})")


# -- step 3: the SDKs' empty-value rule -------------------------------------------------


def drop_empty(value: Any) -> Any:
    """Remove empty strings, lists, objects and nulls, recursively (None if nothing is left)."""
    if isinstance(value, dict):
        kept = {k: c for k, v in value.items() if (c := drop_empty(v)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [c for v in value if (c := drop_empty(v)) is not None]
        return items or None
    if value == "" and isinstance(value, str):
        return None
    return value


def signed_content(card: Mapping[str, Any]) -> Any:
    """What a card signature covers, as the official SDKs compute it (steps 1-3)."""
    return drop_empty(proto_view(from_legacy(card)))


def spec_content(card: Mapping[str, Any]) -> Any:
    """The 1.0 spec text's reading: REQUIRED members kept even when empty (steps 1-2)."""
    return proto_view(from_legacy(card), keep_required=True)
