"""The stores' own encoding of models: versioned JSON, independent of both wire versions.

A stored task must outlive protocol changes: were rows written in a wire
shape, a change to that wire codec would be a schema migration. So the stores
encode models themselves, generically: a model is an object tagged with its
class name (``{"@": "Task", "id": …}``, fields by their Python names, fields at
their default left out), an enum member is ``{"@e": "TaskState", "v": "working"}``,
a datetime ``{"@t": "<ISO 8601 with microseconds>"}``, bytes ``{"@b": "<base64>"}``,
a tuple (how models hold sequences) a list, and any other mapping or list
(metadata, part data: the client's JSON, never reinterpreted) ``{"@j": …}``.
Every document is ``{"v": 1, "m": …}``.

Documents without ``"v"`` are rows written before this encoding (the 0.3 wire
shape): :mod:`a2a_wsgi.stores._codec` reads them with the wire decoder, and the
next save of the task writes it in this encoding, so stores migrate as they go.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from a2a_core import models

__all__ = ["ENCODING_VERSION", "StorageFormatError", "to_document", "from_document",
           "is_document"]

#: The version written in every document's ``"v"``.
ENCODING_VERSION = 1

_MODELS: dict[str, type] = {
    name: value for name, value in vars(models).items()
    if isinstance(value, type) and dataclasses.is_dataclass(value)
}
_ENUMS: dict[str, type[enum.Enum]] = {
    name: value for name, value in vars(models).items()
    if isinstance(value, type) and issubclass(value, enum.Enum)
}


class StorageFormatError(ValueError):
    """A stored document this library cannot read (written by a newer one, or damaged)."""


def is_document(data: object) -> bool:
    """Whether ``data`` (parsed JSON) is in this encoding rather than a legacy wire shape."""
    return isinstance(data, dict) and "v" in data and "m" in data


def to_document(value: object) -> dict[str, Any]:
    """``{"v": 1, "m": <value encoded>}`` for a model (or anything the models hold)."""
    return {"v": ENCODING_VERSION, "m": _encode(value)}


def from_document(data: Mapping[str, Any]) -> Any:
    """The value :func:`to_document` encoded; :class:`StorageFormatError` for an unknown one."""
    version = data.get("v")
    if version != ENCODING_VERSION:
        raise StorageFormatError(f"stored document of encoding version {version!r}; this "
                                 f"a2a-wsgi reads version {ENCODING_VERSION}: upgrade it")
    return _decode(data["m"])


def _encode(value: object) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return {"@e": type(value).__name__, "v": value.value}
    if isinstance(value, datetime):
        return {"@t": value.isoformat()}
    if isinstance(value, bytes):
        return {"@b": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    if isinstance(value, list):
        return {"@j": value}  # models hold tuples: a list is the client's JSON
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"@": type(value).__name__}
        for spec in dataclasses.fields(value):
            item = getattr(value, spec.name)
            if not _is_default(spec, item):
                out[spec.name] = _encode(item)
        return out
    if isinstance(value, Mapping):
        return {"@j": dict(value)}  # the client's JSON, kept as it came
    raise TypeError(f"cannot store a {type(value).__name__}")


def _is_default(spec: dataclasses.Field[Any], value: object) -> bool:
    if spec.default is not dataclasses.MISSING:
        return bool(value == spec.default)
    if spec.default_factory is not dataclasses.MISSING:
        return bool(value == spec.default_factory())
    return False


def _decode(data: Any) -> Any:
    if isinstance(data, list):
        return tuple(_decode(item) for item in data)
    if not isinstance(data, dict):
        return data
    if "@" in data:
        cls = _MODELS.get(data["@"])
        if cls is None:
            raise StorageFormatError(f"stored model {data['@']!r} is unknown to this library")
        fields = {name: _decode(item) for name, item in data.items() if name != "@"}
        return cls(**fields)
    if "@e" in data:
        enum_cls = _ENUMS.get(data["@e"])
        if enum_cls is None:
            raise StorageFormatError(f"stored enum {data['@e']!r} is unknown to this library")
        return enum_cls(data["v"])
    if "@t" in data:
        return datetime.fromisoformat(data["@t"])
    if "@b" in data:
        return base64.b64decode(data["@b"])
    if "@j" in data:
        return data["@j"]
    raise StorageFormatError(f"stored value with members {sorted(data)[:5]} has no tag")
