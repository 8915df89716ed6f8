"""JSON primitives both dialects share: timestamps, bytes, omitted members.

ProtoJSON rules, which the 0.3 JSON shapes happen to tolerate: timestamps are
UTC with ``Z``, ``bytes`` are standard base64, and unset members are left out
rather than sent as ``null``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from datetime import datetime, timezone

from .._jsonvalue import JSONObject, JSONValue
from ._common import invalid, shown

__all__ = [
    "format_timestamp",
    "parse_timestamp",
    "encode_bytes",
    "decode_bytes",
    "compact",
    "optional_timestamp",
    "struct",
]


def format_timestamp(moment: datetime) -> str:
    """UTC, ``Z``, milliseconds: 1.0 MUST, and harmless for 0.3 readers. Naive means UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    m = moment.astimezone(timezone.utc)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        f".{m.microsecond // 1000:03d}Z"
    )


_FRACTION = re.compile(r"[.,](\d+)")
#: A UTC offset after a time of day, ``+HH``, ``+HHMM`` or ``+HH:MM``: written ``+HH:MM``
#: before :meth:`datetime.fromisoformat` reads it, which takes only that form on Python 3.10.
_OFFSET = re.compile(r"(?<=[Tt ]\d\d)(?P<time>(?::?\d\d){0,2}(?:\.\d+)?)"
                     r"(?P<sign>[+-])(?P<hours>\d\d):?(?P<minutes>\d\d)?$")
#: The forms read, once the fraction and the offset are normalized: ISO 8601's extended
#: format (RFC 3339's, with the time or its parts optional), the same on every Python
#: (3.11's fromisoformat alone would also take the basic format and week dates).
_EXTENDED = re.compile(r"\d{4}-\d\d-\d\d(?:[Tt ]\d\d(?::\d\d(?::\d\d(?:\.\d{6})?)?)?"
                       r"(?:[+-]\d\d:\d\d)?)?")


def parse_timestamp(value: object, path: str) -> datetime:
    """Read ISO 8601 leniently (0.3 examples omit ``Z``; proto emits nanoseconds); naive is UTC."""
    if not isinstance(value, str):
        raise invalid(path, "expected an ISO 8601 timestamp string")
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text, count=1)
    text = _OFFSET.sub(lambda m: f"{m['time']}{m['sign']}{m['hours']}:{m['minutes'] or '00'}",
                       text, count=1)
    try:
        moment = datetime.fromisoformat(text) if _EXTENDED.fullmatch(text) else None
    except ValueError:  # the right form, a wrong number: month 13, hour 25
        moment = None
    if moment is None:
        raise invalid(path, f"not an ISO 8601 timestamp: {shown(value)}")
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def encode_bytes(raw: bytes) -> str:
    """Standard base64 with padding, as ProtoJSON writes ``bytes``."""
    return base64.b64encode(raw).decode("ascii")


def decode_bytes(value: object, path: str) -> bytes:
    """Accept standard or URL-safe base64, padded or not (ProtoJSON parsers do)."""
    if not isinstance(value, str):
        raise invalid(path, "expected a base64 string")
    text = "".join(value.split()).replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(path, "not valid base64") from None


def compact(members: Mapping[str, JSONValue]) -> JSONObject:
    """Drop unset members: None and empty sequences (ProtoJSON omits them; so do we)."""
    return {k: v for k, v in members.items() if v is not None and v != []}


def optional_timestamp(moment: datetime | None) -> str | None:
    """An optional timestamp member: None stays None, so :func:`compact` drops it."""
    return None if moment is None else format_timestamp(moment)


def struct(metadata: Mapping[str, JSONValue] | None) -> JSONObject | None:
    """A free-form object as a plain dict (models hold read-only mappings)."""
    return None if metadata is None else dict(metadata)
