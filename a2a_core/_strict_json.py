"""Strict JSON reading: the I-JSON rules (RFC 7493) plus a nesting limit, refused in our words.

Invalid UTF-8, a BOM, ``NaN`` and the infinities, numbers a double cannot
hold, overlong integers, duplicate keys, lone surrogates and nesting deeper
than the limit are all refused with a :class:`StrictJSONError` whose message
is safe to show the peer. Depth is checked by a cheap bracket scan before
:func:`json.loads`, which recurses and would otherwise raise ``RecursionError``.
"""

from __future__ import annotations

import json
import math
import re
from typing import NoReturn

from ._jsonvalue import JSONObject, JSONValue

__all__ = ["StrictJSONError", "strict_loads"]

#: Longest integer literal read (Python's own default limit, but refused in our words).
_MAX_INT_DIGITS = 4300

_BOM = b"\xef\xbb\xbf"
_BRACKET_OR_QUOTE = re.compile(r'[\[\]{}"]')
_SURROGATE = re.compile("[\ud800-\udfff]")


def _nesting_depth_exceeds(text: str, max_depth: int) -> bool:
    """Count brackets outside strings; linear, and never recurses.

    An unterminated string ends the scan: the text is malformed anyway and
    json.loads will say so without nesting past what we have counted.
    """
    depth = 0
    pos = 0
    search = _BRACKET_OR_QUOTE.search
    while (match := search(text, pos)) is not None:
        char = match.group()
        pos = match.end()
        if char == '"':
            pos = _string_end(text, pos)
            if pos < 0:
                return False
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False


def _string_end(text: str, start: int) -> int:
    """Index just past the quote closing a string opened before ``start``, or -1."""
    pos = start
    while (pos := text.find('"', pos)) >= 0:
        backslashes = 0
        k = pos - 1
        while k >= start and text[k] == "\\":
            backslashes += 1
            k -= 1
        pos += 1
        if backslashes % 2 == 0:
            return pos
    return -1


class StrictJSONError(ValueError):
    """A JSON text we refuse; its message is ours and safe to show the peer."""


def _reject_constant(name: str) -> NoReturn:
    """NaN and the infinities are not JSON (RFC 8259), whatever Python's json thinks."""
    raise StrictJSONError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    """``1e400`` would become ``inf``; I-JSON forbids numbers a double cannot hold."""
    value = float(text)
    if math.isinf(value):
        raise StrictJSONError(f"number {text[:32]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    """Refuse overlong integer literals ourselves: int() would, with a Python-specific message."""
    if len(text) - text.startswith("-") > _MAX_INT_DIGITS:
        raise StrictJSONError(f"integer literal longer than {_MAX_INT_DIGITS} digits")
    return int(text)


def _unique_object(pairs: list[tuple[str, JSONValue]]) -> JSONObject:
    """Duplicate keys make a message mean different things to different parsers."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key[:64]!r}")
            seen.add(key)
    return obj


def _has_lone_surrogate(value: JSONValue) -> bool:
    """Walk the decoded value iteratively; json.loads joins valid pairs, so any left are lone."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


#: One decoder for every call (json.loads would build one per call); it keeps no state
#: between texts that matters (the C scanner's memo only interns keys).
_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_object,
    parse_constant=_reject_constant,
    parse_float=_finite_float,
    parse_int=_bounded_int,
)


def strict_loads(body: bytes | str, max_depth: int) -> JSONValue:
    """Decode a strict JSON text or raise StrictJSONError saying why not, in our words."""
    if isinstance(body, bytes):
        if body.startswith(_BOM):
            raise StrictJSONError("a byte order mark is not allowed")
        try:
            text = body.decode("utf-8")  # raw surrogates (ED A0 80) fail here too
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"invalid UTF-8 at byte {exc.start}") from None
        # Decoding bytes already refused raw surrogates; escaped ones need a "\\u".
        maybe_surrogate = "\\u" in text
    else:
        text = body
        maybe_surrogate = True
        if text.startswith("\ufeff"):  # what json.loads says of it (the decoder does not look)
            raise StrictJSONError("Unexpected UTF-8 BOM (decode using utf-8-sig) at position 0")
    # Both scans below are in Python; skip them when they cannot find anything
    # (the common case): they are most of the parse cost of a small request.
    brackets = text.count("[") + text.count("{")
    if brackets > max_depth and _nesting_depth_exceeds(text, max_depth):
        raise StrictJSONError(f"nesting deeper than {max_depth}")
    try:
        value: JSONValue = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"{exc.msg} at position {exc.pos}") from None
    except StrictJSONError:
        raise
    except (ValueError, RecursionError):  # not expected; never show Python's text
        raise StrictJSONError("not a JSON text we can read") from None
    if maybe_surrogate and _has_lone_surrogate(value):
        raise StrictJSONError("lone UTF-16 surrogate in a string")
    return value
