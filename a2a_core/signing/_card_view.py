"""The content an Agent Card signature covers: the card as an A2A 1.0 reader sees it.

A served card is a wire dict, and which members it carries depends on the
variant served (1.0 only, or 1.0 plus the 0.3 members). A signature has to
cover the same bytes whoever computes them, so signer and verifier both run
the wire dict through one function, :func:`signed_content` (two SDKs once
rejected their own signatures because signing and verifying normalised
differently). It does what the official SDKs do:

1. read 0.3 spellings the way their 1.0 reader does (``url`` and friends become
   ``supportedInterfaces`` when that is absent, ``security`` becomes
   ``securityRequirements``, a ``type``d scheme becomes its 1.0 wrapper), and
   drop ``signatures``;
2. read the result as a 1.0 ``AgentCard`` and write it back in the 1.0 shape:
   our card codec (:mod:`a2a_core.wire._card`) does both, and only the members
   the document had are kept (the codec's defaults are not content); numbers
   (extension ``params``) are doubles, as in a proto ``Struct``;
3. drop empty strings, lists, objects and nulls, recursively.

Step 3 is what both official SDKs do; the 1.0 spec text says REQUIRED fields
stay even when empty (``"description": ""``). :func:`spec_content` is that
reading (steps 1-2), which a verifier also accepts (see :mod:`._card`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from .._jsonvalue import JSONObject, JSONValue
from ..errors import InvalidParamsError
from ..models import AgentCard
from ..wire._card import decode_card, encode_card
from ..wire._card_shapes import SCHEME_KINDS
from ..wire._common import join
from ..wire._fields import snake
from ._errors import CanonicalizationError

__all__ = ["MAX_DEPTH", "decode", "drop_empty", "from_legacy", "signed_content", "spec_content"]

#: Deepest nesting read (the card is 1): a hostile card cannot exhaust the verifier's stack.
MAX_DEPTH = 128
#: 0.3 security scheme ``type`` -> the 1.0 wrapper member (the codec's table).
_WRAPPERS = {legacy: wrapper for wrapper, legacy in SCHEME_KINDS.values()}
#: Members the codec requires that ProtoJSON omits when empty.
_REQUIRED = {"name": "", "description": "", "version": "", "skills": []}


def decode(doc: Mapping[str, JSONValue]) -> AgentCard:
    """The codec's reading of a card document (CanonicalizationError when it has none)."""
    try:
        return decode_card({**_REQUIRED, **{k: v for k, v in doc.items() if v is not None}})
    except InvalidParamsError as exc:
        raise CanonicalizationError(exc.message) from None


# -- step 1: 0.3 spellings read as 1.0, as the SDKs read them -------------------------


def from_legacy(card: Mapping[str, JSONValue]) -> JSONObject:
    """A copy of ``card`` with the 0.3 members turned into 1.0 ones.

    The 0.3 top-level members are removed either way; they fill the 1.0 ones
    only where those are absent. In a scheme the 0.3 members win over a 1.0
    wrapper beside them. Requirements and schemes are converted by the card codec.
    """
    doc = copy.deepcopy(dict(card))
    doc.pop("signatures", None)
    if doc.pop("supportsAuthenticatedExtendedCard", None):
        capabilities = doc.setdefault("capabilities", {})
        if isinstance(capabilities, dict):
            capabilities.setdefault("extendedAgentCard", True)
    url, transport = doc.pop("url", None), doc.pop("preferredTransport", "JSONRPC")
    version = doc.pop("protocolVersion", "0.3.0")
    additional = doc.pop("additionalInterfaces", None) or []
    if "supportedInterfaces" not in doc and url:
        others = [i for i in additional if isinstance(i, Mapping)] if isinstance(
            additional, list) else []
        if not isinstance(additional, list) or len(others) != len(additional):
            raise CanonicalizationError("additionalInterfaces is not a list of objects")
        pairs = [(url, transport), *((i.get("url"), i.get("transport")) for i in others)]
        doc["supportedInterfaces"] = [{"url": u, "protocolBinding": t, "protocolVersion": version}
                                      for u, t in pairs]
    skills = doc.get("skills")
    for holder in [doc, *(s for s in (skills if isinstance(skills, list) else ())
                          if isinstance(s, dict))]:
        legacy = holder.pop("security", None)
        if "securityRequirements" not in holder and legacy is not None:
            holder["securityRequirements"] = _as_1_0({"security": legacy})["securityRequirements"]
    schemes = doc.get("securitySchemes")
    if isinstance(schemes, dict):
        for name, scheme in schemes.items():
            if isinstance(scheme, dict) and "type" in scheme:
                legacy = {k: v for k, v in scheme.items() if k not in _WRAPPERS.values()}
                written = _as_1_0({"securitySchemes": {name: legacy}})["securitySchemes"]
                if isinstance(written, dict):
                    schemes[name] = written[name]
    return doc


def _as_1_0(members: Mapping[str, JSONValue]) -> JSONObject:
    """0.3 members, read and written back in the 1.0 shape by the card codec."""
    return {"securityRequirements": [], **encode_card(decode({"url": "-", **members}), "1.0")}


# -- step 2: the codec's 1.0 form, without its defaults -----------------------------------


def _only_given(out: JSONValue, given: JSONValue, path: str = "", depth: int = 1) -> JSONValue:
    """``out`` (written by the codec) keeping only the members ``given`` (what it read) had.

    A member given under both its camelCase and its snake_case name is refused, as a
    ProtoJSON reader refuses it; numbers become doubles.
    """
    if depth > MAX_DEPTH:
        raise CanonicalizationError(f"{path or 'card'} nests deeper than {MAX_DEPTH}")
    if isinstance(out, dict) and isinstance(given, Mapping):
        kept: JSONObject = {}
        for key, value in out.items():
            names = [n for n in dict.fromkeys((key, snake(key))) if given.get(n) is not None]
            if len(names) > 1 and names[1] not in out:
                raise CanonicalizationError(f"{join(path, key)} is given twice (as {names[1]})")
            if names:
                kept[key] = _only_given(value, given[names[0]], join(path, key), depth + 1)
        return kept
    if isinstance(out, list) and isinstance(given, list):
        return [_only_given(v, g, f"{path}[{i}]", depth + 1)
                for i, (v, g) in enumerate(zip(out, given, strict=False))]
    if isinstance(out, (int, float)) and not isinstance(out, bool):
        try:
            return float(out)
        except OverflowError:
            raise CanonicalizationError(f"{path} is a number no double holds") from None
    return out


# -- step 3: the SDKs' empty-value rule -------------------------------------------------


def drop_empty(value: JSONValue) -> JSONValue:
    """Remove empty strings, lists, objects and nulls, recursively (None if nothing is left)."""
    if isinstance(value, dict):
        kept: JSONObject = {k: c for k, v in value.items() if (c := drop_empty(v)) is not None}
        return kept or None
    if isinstance(value, list):
        items: list[JSONValue] = [c for v in value if (c := drop_empty(v)) is not None]
        return items or None
    if value == "" and isinstance(value, str):
        return None
    return value


def spec_content(card: Mapping[str, JSONValue]) -> JSONValue:
    """The 1.0 spec text's reading: REQUIRED members kept even when empty (steps 1-2)."""
    if not isinstance(card, Mapping):
        raise CanonicalizationError("the card is not an object")
    try:
        doc = from_legacy(card)
        return _only_given(encode_card(decode(doc), "1.0"), doc)
    except (ValueError, RecursionError) as exc:  # no interface to write; nesting past the stack
        raise CanonicalizationError(str(exc) or type(exc).__name__) from None


def signed_content(card: Mapping[str, JSONValue]) -> JSONValue:
    """What a card signature covers, as the official SDKs compute it (steps 1-3)."""
    return drop_empty(spec_content(card))
