"""An Agent Card read as the A2A 1.0 proto ``AgentCard`` and written back as ProtoJSON.

Members the proto does not define are dropped, non-``optional`` scalars at
their default are dropped, ``optional`` ones are kept, and numbers inside
``Struct`` values are doubles: step 2 of :mod:`._card_view`.
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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import CanonicalizationError

__all__ = ["MAX_DEPTH", "bad", "proto_view"]

#: Deepest nesting of ``Struct`` values (extension ``params``) read (the card is 1): a
#: hostile card cannot exhaust the stack of the process that verifies it.
MAX_DEPTH = 128


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


def bad(path: str, what: str) -> CanonicalizationError:
    return CanonicalizationError(f"{path or 'card'} {what}")


def proto_view(value: Any, message: str = "AgentCard", *, keep_required: bool = False,
               path: str = "", depth: int = 1) -> dict[str, Any]:
    """``value`` read as the proto ``message`` and written back as ProtoJSON.

    ``keep_required`` writes REQUIRED members even when absent or at their default.

    :raises CanonicalizationError: a member has the wrong type, or a oneof holds two.
    """
    if not isinstance(value, Mapping):
        raise bad(path, "is not an object")
    out: dict[str, Any] = {}
    for field in _MESSAGES[message]:
        present = [name for name in (field.json, field.proto) if value.get(name) is not None]
        if len(set(present)) > 1:
            raise bad(_join(path, field.json), f"is given twice (also as {field.proto})")
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
        raise bad(path, f"holds more than one of {sorted(out)}")
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
        raise bad(path, f"is not {what}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise bad(path, "is not a list")
    if any(item is None for item in value):
        raise bad(path, "holds a null")
    return value


def _map(value: Any, path: str) -> list[tuple[str, Any]]:
    if not isinstance(value, Mapping):
        raise bad(path, "is not an object")
    return [(k, v) for k, v in value.items() if v is not None]


def _struct(value: Any, path: str, depth: int) -> Any:
    """A Struct/Value as ProtoJSON writes it back: every number a double."""
    if depth > MAX_DEPTH:
        raise bad(path, f"nests deeper than {MAX_DEPTH}")
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
            raise bad(path, "is a number no double holds") from exc
    raise bad(path, f"is not a JSON value ({type(value).__name__})")
