"""RFC 8785 JSON Canonicalization Scheme (JCS): the exact bytes a card signature covers.

``json.dumps`` is not JCS on three counts, each of which has broken cross-SDK
card verification in the wild: it escapes non-ASCII text (JCS writes it as
literal UTF-8), ``sort_keys`` orders names by code point (JCS orders them by
UTF-16 code unit, which differs for characters above U+FFFF against U+E000 to
U+FFFF), and it writes floats with ``repr`` (``1e-06``, ``1.0``) where JCS uses
ECMAScript's ``Number::toString`` (``0.000001``, ``1``).
"""

# Numbers. JCS treats every JSON number as an IEEE 754 double. Python's repr()
# of a float already yields the shortest digit string that reads back as the
# same double, which is the digit string ECMAScript picks; only the layout
# (where the point goes, when to switch to exponent form) differs, and
# _format_float applies ECMA-262 7.1.12.1 to those digits. Integers are
# accepted only while a double holds them exactly (|n| < 2**53): a larger one
# would be rounded, and two different values would then share one canonical
# form (and one signature).
#
# Depth. Nesting is bounded (MAX_DEPTH) so a hostile card cannot exhaust the
# stack of the process that verifies it.

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["CanonicalizationError", "MAX_DEPTH", "canonicalize"]

#: Deepest nesting of objects and arrays accepted (the outermost container is 1).
MAX_DEPTH = 128

_SAFE_INTEGER = 2**53 - 1
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t"}
_MUST_ESCAPE = re.compile(r'["\\\x00-\x1f]')


class CanonicalizationError(ValueError):
    """The value has no RFC 8785 form (NaN, a lone surrogate, a non-string key, too deep)."""


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of a JSON value.

    Accepts None, bool, int, float, str, lists/tuples and mappings with string keys.

    :raises CanonicalizationError: the value has no canonical form.
    """
    out: list[str] = []
    _write(value, out, 1)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate has no UTF-8 form
        raise CanonicalizationError("text is not valid Unicode (a lone surrogate)") from exc


def _write(value: Any, out: list[str], depth: int) -> None:
    if isinstance(value, Mapping):
        _check_depth(depth)
        out.append("{")
        for index, (key, item) in enumerate(_sorted_members(value)):
            if index:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(item, out, depth + 1)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        _check_depth(depth)
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out, depth + 1)
        out.append("]")
    else:
        out.append(_scalar(value))


def _check_depth(depth: int) -> None:
    if depth > MAX_DEPTH:
        raise CanonicalizationError(f"nesting deeper than {MAX_DEPTH}")


def _sorted_members(obj: Mapping[Any, Any]) -> list[tuple[str, Any]]:
    """Members ordered by their names' UTF-16 code units (RFC 8785 §3.2.3).

    Big-endian UTF-16 bytes compare like the code unit sequences they encode.
    """
    for key in obj:
        if not isinstance(key, str):
            raise CanonicalizationError(f"object member names must be strings, not {key!r}")
    try:
        return sorted(obj.items(), key=lambda item: item[0].encode("utf-16-be"))
    except UnicodeEncodeError as exc:
        raise CanonicalizationError("a member name is not valid Unicode") from exc


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        if abs(value) > _SAFE_INTEGER:
            raise CanonicalizationError(
                f"the integer {value} is outside what a JSON number holds exactly (2**53)"
            )
        return str(value)
    if isinstance(value, float):
        return format_number(value)
    raise CanonicalizationError(f"{type(value).__name__} is not a JSON value")


def _string(text: str) -> str:
    """Quote with the minimal escapes: the quote, the backslash and U+0000..U+001F."""
    return '"' + _MUST_ESCAPE.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def format_number(value: float) -> str:
    """ECMAScript ``Number::toString`` of a finite double (ECMA-262 7.1.12.1)."""
    if math.isnan(value) or math.isinf(value):
        raise CanonicalizationError(f"{value} is not a JSON number")
    if value == 0:
        return "0"  # also -0
    if value < 0:
        return "-" + format_number(-value)
    digits, point = _shortest_digits(value)
    return _layout(digits, point)


def _shortest_digits(value: float) -> tuple[str, int]:
    """(digits, n) with value = 0.digits × 10**n, digits as short as round-tripping allows."""
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    shift = int(exponent) if exponent else 0
    if whole.strip("0"):
        return digits.rstrip("0"), len(whole) + shift
    # 0.00123: the fraction's leading zeros move the point left
    return digits.rstrip("0"), shift - (len(fraction) - len(fraction.lstrip("0")))


def _layout(digits: str, n: int) -> str:
    """Place the point as ECMA-262 7.1.12.1 steps 6-10 say (k digits, value = s × 10**(n-k))."""
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    exponent = n - 1
    sign = "+" if exponent >= 0 else "-"
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{sign}{abs(exponent)}"
