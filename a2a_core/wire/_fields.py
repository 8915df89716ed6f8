"""The path-tracking reader every tolerant decoder is written with.

Proto3 reading rules apply to every dialect: ``null`` is the same as an absent
field, an empty optional string is the same as unset, unknown fields are
ignored, and both lowerCamel and snake_case member names are accepted.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TypeVar

from .._jsonvalue import JSONObject, JSONValue
from ._common import invalid, json_type, shown
from ._json import parse_timestamp

__all__ = ["Fields", "snake"]

T = TypeVar("T")

_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")
_DECIMAL = re.compile(r"-?\d+")


@functools.lru_cache(maxsize=512)
def snake(name: str) -> str:
    """Proto snake_case of a lowerCamel member name (memoised: a small, fixed vocabulary)."""
    return _CAMEL_HUMP.sub("_", name).lower()


class Fields:
    """One JSON object being decoded, with the path that error messages name.

    Lookups try each given name in lowerCamel and snake_case; ``null`` counts
    as absent. Paths use the member name the peer actually sent.
    """

    __slots__ = ("data", "path")

    def __init__(self, data: object, path: str, what: str = "an object") -> None:
        if data.__class__ is not dict and not isinstance(data, Mapping):  # decoded JSON: dict
            raise invalid(path, f"expected {what}, got {json_type(data)}")
        self.data: Mapping[str, JSONValue] = data
        self.path = path

    def find(self, *names: str) -> tuple[str, JSONValue]:
        """(path, value) of the first name present; value None when none is."""
        data, path = self.data, self.path
        for name in names:
            value = data.get(name)
            key = name
            if value is None:
                key = snake(name)
                value = data.get(key) if key != name else None
            if value is not None:
                return (f"{path}.{key}" if path else key), value
        return (f"{path}.{names[0]}" if path else names[0]), None

    def has(self, *names: str) -> bool:
        return self.find(*names)[1] is not None

    def contains(self, name: str) -> bool:
        """Presence even when the value is null (a 1.0 ``data`` part may hold null)."""
        return name in self.data or snake(name) in self.data

    def required(self, *names: str) -> tuple[str, JSONValue]:
        path, value = self.find(*names)
        if value is None:
            raise invalid(path, "required field is missing")
        return path, value

    def string(self, *names: str) -> str | None:
        """An optional string; "" reads as unset (proto3)."""
        path, value = self.find(*names)
        if value is None:
            return None
        if not isinstance(value, str):
            raise invalid(path, f"expected a string, got {json_type(value)}")
        return value or None

    def required_string(self, *names: str, allow_empty: bool = False) -> str:
        path, value = self.required(*names)
        if not isinstance(value, str):
            raise invalid(path, f"expected a string, got {json_type(value)}")
        if not value and not allow_empty:
            raise invalid(path, "must not be empty")
        return value

    def integer(
        self, name: str, *, minimum: int | None = None, maximum: int | None = None
    ) -> int | None:
        """An optional integer; bool is not one. ProtoJSON also allows decimal strings."""
        path, value = self.find(name)
        if value is None:
            return None
        if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
            value = int(value)
        # (ProtoJSON parsers take an integral number written 5.0 or 5e0 as 5)
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(path, f"expected an integer, got {json_type(value)}")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise invalid(path, _range_text(minimum, maximum))
        return value

    def boolean(self, name: str) -> bool | None:
        path, value = self.find(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise invalid(path, f"expected a boolean, got {json_type(value)}")
        return value

    def strings(self, name: str) -> tuple[str, ...]:
        path, value = self.find(name)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise invalid(path, f"expected an array of strings, got {json_type(value)}")
        strings: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise invalid(f"{path}[{index}]", f"expected a string, got {json_type(item)}")
            strings.append(item)
        return tuple(strings)

    def struct(self, name: str) -> JSONObject | None:
        """A free-form object (metadata): kept as the peer sent it."""
        path, value = self.find(name)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise invalid(path, f"expected an object, got {json_type(value)}")
        return dict(value)

    def timestamp(self, name: str) -> datetime | None:
        path, value = self.find(name)
        return None if value is None else parse_timestamp(value, path)

    def objects(
        self, name: str, decode: Callable[[JSONValue, str], T], *, required: bool = False
    ) -> tuple[T, ...]:
        """A repeated message; ``required`` means present with at least one element."""
        path, value = self.find(name)
        if value is None:
            if required:
                raise invalid(path, "required field is missing")
            return ()
        if not isinstance(value, list):
            raise invalid(path, f"expected an array, got {json_type(value)}")
        if required and not value:
            raise invalid(path, "must hold at least one element")
        return tuple(decode(item, f"{path}[{index}]") for index, item in enumerate(value))

    def optional(self, name: str, decode: Callable[[JSONValue, str], T]) -> T | None:
        path, value = self.find(name)
        return None if value is None else decode(value, path)

    def one(self, name: str, decode: Callable[[JSONValue, str], T]) -> T:
        """A required nested message, decoded at its own path."""
        path, value = self.required(name)
        return decode(value, path)

    def expect_kind(self, *kinds: str) -> str | None:
        """A 0.3 ``kind`` may be missing (spec examples omit it) but must not be wrong."""
        path, value = self.find("kind")
        if value is None:
            return None
        if value not in kinds:
            expected = " or ".join(map(repr, kinds))
            raise invalid(path, f"expected kind {expected}, got {shown(value)}")
        return str(value)


def _range_text(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"must be between {minimum} and {maximum}"
    if minimum is not None:
        return f"must be >= {minimum}"
    return f"must be <= {maximum}"
