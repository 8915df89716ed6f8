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

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ._card_proto import bad, proto_view

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

#: 0.3 security scheme ``type`` -> the 1.0 wrapper member.
LEGACY_SCHEME_TYPES = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}


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
        raise bad("additionalInterfaces", "is not a list")
    interfaces = [{"url": url, "protocolBinding": transport, "protocolVersion": version}]
    for entry in additional:
        if not isinstance(entry, Mapping):
            raise bad("additionalInterfaces", "holds a non-object")
        interfaces.append({"url": entry.get("url"), "protocolBinding": entry.get("transport"),
                           "protocolVersion": version})
    doc["supportedInterfaces"] = interfaces


def legacy_requirements(value: Any, path: str) -> list[dict[str, Any]]:
    """0.3 ``security`` (``[{"name": [scopes]}]``) in the 1.0 ``securityRequirements`` shape."""
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        raise bad(path, "is not a list of objects")
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
