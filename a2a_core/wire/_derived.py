"""Codec and caps derived from a model's fields, for a model no hand-written codec names.

A new operation's request and result models need no code of their own in ``wire/`` when
their members are plain: strings, integers, booleans, free-form objects (a proto
``Struct``: metadata), lists of strings, and models that have a codec (hand-written, or
derived in turn). Members are written in lowerCamel, the JSON name of both versions, and
read in lowerCamel or snake_case (:class:`~._fields.Fields`); ``tenant`` is written only
where the version has it. The caps of a request whose entry names no
:class:`~._limits.Limits` are derived the same way: every string member at most
``MAX_IDENTIFIER_LENGTH`` characters (``MAX_IDENTIFIER_LENGTH`` each in a list of at most
``MAX_REFERENCE_TASK_IDS``), every object member a metadata object's caps.

Anything else (an enum whose spelling differs by version, a union of models) needs its
codec written by hand in ``wire/`` as before: deriving refuses it with a TypeError when the
codec is first asked for (the table entry names it), never halfway through a request.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import TypeVar, cast

from .._jsonvalue import JSONObject
from ._common import MAX_IDENTIFIER_LENGTH, MAX_REFERENCE_TASK_IDS, invalid
from ._fields import Fields

__all__ = ["derived_decoder", "derived_limits", "derived_writer"]

T = TypeVar("T")


class _Kind(enum.Enum):
    STRING = "string"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    STRUCT = "struct"
    STRINGS = "strings"
    MODEL = "model"
    MODELS = "models"


@dataclasses.dataclass(frozen=True, slots=True)
class _Member:
    """One field of the model: its JSON name, what it holds, and whether it must be sent."""

    field: str
    json: str
    kind: _Kind
    required: bool
    #: The model a MODEL or MODELS member holds.
    model: type | None = None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _is_model(tp: object) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _kind(tp: object, where: str) -> tuple[_Kind, type | None]:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is str:
        return _Kind.STRING, None
    if tp is bool:
        return _Kind.BOOLEAN, None
    if tp is int:
        return _Kind.INTEGER, None
    if origin in (dict, Mapping) or tp is dict:
        return _Kind.STRUCT, None
    if origin in (tuple, list) and args and (args[-1] is Ellipsis or origin is list):
        item = args[0]
        if item is str:
            return _Kind.STRINGS, None
        if _is_model(item):
            return _Kind.MODELS, item
    if isinstance(tp, type) and _is_model(tp):
        return _Kind.MODEL, tp
    raise TypeError(f"{where}: no codec can be derived for {tp!r}; write one in a2a_core/wire")


def _members(cls: type) -> tuple[_Member, ...]:
    """The model's fields as members (kept: a model's fields do not change)."""
    known = _MEMBERS.get(cls)
    if known is not None:
        return known
    if not _is_model(cls):
        raise TypeError(f"no codec can be derived for {cls!r}: it is not a dataclass model")
    try:
        hints = typing.get_type_hints(cls)
    except NameError as exc:  # an annotation names what its module imports for typing only
        raise TypeError(f"no codec can be derived for {cls.__name__}: {exc}") from None
    members = []
    for f in dataclasses.fields(cls):
        tp, optional = hints[f.name], False
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            optional = len(args) < len(typing.get_args(tp))
            if len(args) != 1:
                raise TypeError(f"{cls.__name__}.{f.name}: no codec can be derived for a union")
            tp = args[0]
        kind, model = _kind(tp, f"{cls.__name__}.{f.name}")
        has_default = f.default is not dataclasses.MISSING \
            or f.default_factory is not dataclasses.MISSING
        members.append(_Member(f.name, _camel(f.name), kind, not optional and not has_default,
                               model))
    found = _MEMBERS[cls] = tuple(members)
    return found


class _Writer(typing.Protocol):
    """The dialect a derived writer writes nested models and the tenant with."""

    def encode(self, obj: object) -> JSONObject: ...

    def tenant(self, tenant: str | None) -> str | None: ...


#: What deriving found, per model (decoders and writers are derived once too).
_MEMBERS: dict[type, tuple[_Member, ...]] = {}
_DECODERS: dict[type, Callable[[object, str], object]] = {}
_WRITERS: dict[type, Callable[[object, _Writer], JSONObject]] = {}
_LIMITS: dict[type, Callable[[Fields], None]] = {}


def _model_decoder(model: type) -> Callable[[object, str], object]:
    from ._decode_requests import DECODERS  # (it names this module's fallback)

    return DECODERS.get(model) or derived_decoder(model)


def derived_decoder(cls: type[T]) -> Callable[[object, str], T]:
    """A tolerant decoder of ``cls`` read from its fields: ``(data, path) -> cls``."""
    known = _DECODERS.get(cls)
    if known is not None:
        return cast("Callable[[object, str], T]", known)
    members = _members(cls)
    nested = {m.field: _model_decoder(m.model) for m in members if m.model is not None}

    def decode(data: object, path: str) -> T:
        f = Fields(data, path)
        values: dict[str, object] = {}
        for m in members:
            value: object
            if m.kind is _Kind.STRING:
                value = f.required_string(m.json) if m.required else f.string(m.json)
            elif m.kind is _Kind.INTEGER:
                value = f.integer(m.json)
            elif m.kind is _Kind.BOOLEAN:
                value = f.boolean(m.json)
            elif m.kind is _Kind.STRUCT:
                value = f.struct(m.json)
            elif m.kind is _Kind.STRINGS:
                value = f.strings(m.json)
            elif m.kind is _Kind.MODEL:
                value = f.one(m.json, nested[m.field]) if m.required \
                    else f.optional(m.json, nested[m.field])
            else:
                value = f.objects(m.json, nested[m.field], required=m.required)
            if m.required and value is None:
                raise invalid(f"{path}.{m.json}", "required")
            if value is not None and value != ():
                values[m.field] = value
        return cls(**values)

    _DECODERS[cls] = decode
    return decode


def derived_writer(cls: type) -> Callable[[object, _Writer], JSONObject]:
    """A writer of ``cls`` from its fields: ``(model, dialect) -> JSON``; unset members
    (None, empty lists) are left out."""
    known = _WRITERS.get(cls)
    if known is not None:
        return known
    members = _members(cls)

    def write(obj: object, d: _Writer) -> JSONObject:
        out: JSONObject = {}
        for m in members:
            value = getattr(obj, m.field)
            if m.field == "tenant":
                value = d.tenant(value)
            if value is None or value == ():
                continue
            if m.kind is _Kind.MODEL:
                out[m.json] = d.encode(value)
            elif m.kind is _Kind.MODELS:
                out[m.json] = [d.encode(item) for item in value]
            elif m.kind is _Kind.STRINGS:
                out[m.json] = list(value)
            elif m.kind is _Kind.STRUCT:
                out[m.json] = dict(value)
            else:
                out[m.json] = value
        return out

    _WRITERS[cls] = write
    return write


def derived_limits(cls: type) -> Callable[[Fields], None]:
    """The caps of a ``cls`` request whose entry names no ``Limits``: strings and lists of
    them as identifiers, objects as metadata (nested models are the operation's to cap)."""
    from ._limits import check_metadata  # (it calls this one)

    known = _LIMITS.get(cls)
    if known is not None:
        return known
    members = _members(cls)

    def check(f: Fields) -> None:
        for m in members:
            path, value = f.find(m.json)
            if value is None:
                continue
            if m.kind is _Kind.STRING and isinstance(value, str):
                _identifier(path, value)
            elif m.kind is _Kind.STRINGS and isinstance(value, list):
                if len(value) > MAX_REFERENCE_TASK_IDS:
                    raise invalid(path, f"at most {MAX_REFERENCE_TASK_IDS} items")
                for index, item in enumerate(value):
                    if isinstance(item, str):
                        _identifier(f"{path}[{index}]", item)
            elif m.kind is _Kind.STRUCT and isinstance(value, Mapping):
                check_metadata(value, path)

    _LIMITS[cls] = check
    return check


def _identifier(path: str, value: str) -> None:
    if len(value) > MAX_IDENTIFIER_LENGTH:
        raise invalid(path, f"at most {MAX_IDENTIFIER_LENGTH} characters")
