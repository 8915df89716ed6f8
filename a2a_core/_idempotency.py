"""Request fingerprints: when a reused messageId names the same request, and when not.

A client that retries a send re-sends the same request with the same
``messageId``; a client that reuses a ``messageId`` for a different request
(the 1.0 conformance kit does) means a new one. A server that records the
fingerprint of each task's creating request beside its ``messageId`` tells the
two apart: only the same id *and* the same fingerprint is a retry.

The fingerprint covers the decoded :class:`~a2a_core.models.SendMessageRequest`
except the message id itself (it is the key the fingerprint sits beside) and the
tenant (it is part of the caller's scope, checked beside the key):

* the message: role, parts (every field of every part, inline bytes
  included), ``contextId`` and ``taskId`` as sent, ``referenceTaskIds``,
  ``extensions`` and metadata;
* the configuration: push notification config (url, id, token,
  authentication), accepted output modes, blocking (``returnImmediately``)
  and history length;
* the request's metadata.

It is computed from the models, never from wire bytes, so the same request
sent over 0.3 and 1.0 has the same fingerprint. A field at its default value
counts as absent (no configuration is the default configuration, empty
metadata is no metadata, an empty list is no list), so spelling a default out
is no change. Sans-IO: a pure function of the request.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import hashlib
import json
import operator
from collections.abc import Callable, Mapping
from typing import Any

from .models import SendMessageConfiguration, SendMessageRequest

__all__ = ["FINGERPRINT_SCHEME", "request_fingerprint"]

#: Names the canonical encoding below; part of the hashed text, so a future change of
#: the encoding cannot make two different requests collide with today's fingerprints.
FINGERPRINT_SCHEME = "a2a-send-request/1"

#: The tag of a model object in the canonical form (no model field can be spelled so).
_TYPE = "@type"


def request_fingerprint(request: SendMessageRequest) -> str:
    """The sha256 (64 hex digits) of ``request``'s canonical encoding (module docstring)."""
    message = _canonical(request.message)
    del message["message_id"]
    configuration = request.configuration
    canonical = {
        "message": message,
        "configuration": (_canonical(configuration) if configuration is not None
                          else _default_configuration()),
        "metadata": _json_value(request.metadata) if request.metadata else None,
    }
    text = _ENCODER.encode(canonical)
    return hashlib.sha256(f"{FINGERPRINT_SCHEME}\n{text}".encode("ascii")).hexdigest()


#: The canonical text's encoder (json.dumps would build this one on every call).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                            allow_nan=True)
#: Absent means "no default": the field is required and always encoded.
_REQUIRED = object()
#: Model type -> a getter of its compared fields' values (one tuple), and the (name,
#: default) of each of those fields: worked out once per type.
_FIELDS: dict[type, tuple[Callable[[Any], tuple[Any, ...]], tuple[tuple[str, Any], ...]]] = {}
#: The canonical form of "no configuration" (the default one), worked out once.
_DEFAULT_CANONICAL: list[dict[str, Any]] = []


def _default_configuration() -> dict[str, Any]:
    if not _DEFAULT_CANONICAL:
        _DEFAULT_CANONICAL.append(_canonical(SendMessageConfiguration()))
    return _DEFAULT_CANONICAL[0]


def _fields_of(kind: type) -> tuple[Callable[[Any], tuple[Any, ...]], tuple[tuple[str, Any], ...]]:
    compared = tuple(
        (field.name, _default(field)) for field in dataclasses.fields(kind)
        if field.compare)  # compare=False: server bookkeeping, not part of what was asked
    getter = operator.attrgetter(*(name for name, _ in compared))  # (models have fields)
    read: Callable[[Any], tuple[Any, ...]] = getter
    if len(compared) == 1:  # attrgetter of one name gives the value, not a 1-tuple
        def read(model: Any) -> tuple[Any, ...]:
            return (getter(model),)
    return read, compared


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return _REQUIRED


def _canonical(model: Any) -> dict[str, Any]:
    """A model object as a JSON object: its type, and each field not at its default
    (an empty mapping where the default is None, i.e. empty metadata, counts as default)."""
    kind = model.__class__
    if kind not in _FIELDS:
        _FIELDS[kind] = _fields_of(kind)
    read, compared = _FIELDS[kind]
    out: dict[str, Any] = {_TYPE: kind.__name__}
    for (name, default), value in zip(compared, read(model), strict=True):
        if default is not _REQUIRED and (
                value == default
                or (default is None and isinstance(value, Mapping) and not value)):
            continue
        out[name] = value if value.__class__ in _SCALARS else _value(value)
    return out


def _value(value: Any) -> Any:
    """A field's value: models by :func:`_canonical`, bytes as base64, the rest as JSON."""
    kind = value.__class__
    if kind in _SCALARS:  # what _json_value would give back as it is
        return value
    if kind in _FIELDS:
        return _canonical(value)
    if kind in _ENUMS:  # (met below before: not a dataclass)
        return value._value_
    if kind is tuple or kind is list:  # (exactly: a dataclass may subclass one)
        return [_value(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _canonical(value)
    if isinstance(value, enum.Enum):
        _ENUMS.add(kind)
        return value._value_
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (list, tuple)):
        return [_value(item) for item in value]
    return _json_value(value)


#: Enum types met so far (an isinstance check against Enum is a slow path).
_ENUMS: set[type] = set()
#: Exact types that are JSON as they are (subclasses such as IntEnum take the long way).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _json_value(value: Any) -> Any:
    """An opaque JSON value (metadata, data): mappings with string keys, lists, scalars.

    Anything that is not JSON (only a program calling the runtime directly can
    pass it) is represented by its repr: at worst a retry is taken for a new send.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(item) for item in value]
    return repr(value)
