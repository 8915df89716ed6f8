"""ProtoJSON into a message, quickly, for the shapes our own 1.0 codecs write.

``json_format.ParseDict`` is pure Python and checks every field against every special
case (wrappers, maps, Any, well-known types, name spellings): a blocking SendMessage's
Task took ~100 us of the ~340 us our server spends on the call. :func:`parse` walks the
message's descriptor instead, with a plan per message type made once: plain scalars,
enums by name, nested and repeated messages, Timestamps; a Struct or Value field (metadata,
a data part) is handed to ParseDict alone. Anything else (bytes, maps, 64-bit integers, a
value of an unexpected type, an unknown key) makes it give up, and the caller parses the
whole value with ``ParseDict``, which also says what is wrong. So the
result is always ParseDict's (tests/grpc/test_fast_json.py compares them).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import datetime, timezone

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from .proto import pool

__all__ = ["GiveUp", "parse"]

_F = FieldDescriptor
_STRING = {_F.TYPE_STRING}
_INTS = {_F.TYPE_INT32, _F.TYPE_SINT32, _F.TYPE_SFIXED32, _F.TYPE_UINT32, _F.TYPE_FIXED32}
_FLOATS = {_F.TYPE_DOUBLE, _F.TYPE_FLOAT}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: What :func:`_instant` reads: date, time, at most microseconds (the offset cut off).
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(?:\d{3}|\d{6}))?")


class GiveUp(Exception):
    """The value is not one :func:`parse` handles: parse it with ParseDict."""


#: field's JSON or proto name -> (its name on the message, how its value is set, its oneof)
_Plan = dict[str, tuple[str, Callable[[Message, str, object], None], str | None]]


def parse(value: object, message: Message) -> Message:
    """Fill ``message`` from the ProtoJSON object ``value``; :class:`GiveUp` (``message``
    then half filled: use a fresh one) when it cannot."""
    try:
        return _fill(value, message)
    except (TypeError, ValueError, AttributeError, json_format.ParseError):
        raise GiveUp from None  # an int32 out of range, a bad Struct...: ParseDict says


def _fill(value: object, message: Message) -> Message:
    if not isinstance(value, dict):
        raise GiveUp
    plan = _plan(message.DESCRIPTOR)
    for key, item in value.items():
        if item is None:
            raise GiveUp  # null: unset for most fields, but a Value's null_value
        try:
            name, setter, oneof = plan[key]
        except KeyError:
            raise GiveUp from None
        if oneof is not None and message.WhichOneof(oneof) is not None:
            raise GiveUp  # a second member of a oneof: ParseDict refuses it
        setter(message, name, item)
    return message


@functools.cache
def _plan(descriptor: Descriptor) -> _Plan:
    plan: _Plan = {}
    for field in descriptor.fields:
        # a real oneof, not the synthetic one of a proto3 `optional` (older protobufs: any)
        oneof = getattr(field, "real_containing_oneof", field.containing_oneof)
        plan[field.json_name] = plan[field.name] = (
            field.name, _setter(field), None if oneof is None else oneof.name)
    return plan


def _setter(field: FieldDescriptor) -> Callable[[Message, str, object], None]:
    repeated = _repeated(field)
    if field.type == _F.TYPE_MESSAGE:
        kind = field.message_type
        assert kind is not None
        if kind.GetOptions().map_entry:
            return _give_up
        if kind.full_name == _TIMESTAMP:
            return _timestamps if repeated else _timestamp
        if kind.full_name.startswith("google.protobuf."):  # Struct, Value...: ParseDict's
            return _give_up if repeated else _well_known
        return _messages if repeated else _message
    if field.type == _F.TYPE_ENUM:
        assert field.enum_type is not None
        numbers = {v.name: v.number for v in field.enum_type.values}
        return functools.partial(_enums if repeated else _enum, numbers)
    check = _scalar_check(field)
    if check is None:
        return _give_up
    return functools.partial(_scalars if repeated else _scalar, check)


_TIMESTAMP = "google.protobuf.Timestamp"


def _repeated(field: FieldDescriptor) -> bool:
    """``is_repeated`` (protobuf 6+), else the label (older ones)."""
    flag = getattr(field, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return bool(getattr(field, "label") == _F.LABEL_REPEATED)  # noqa: B009 (gone in 7)


def _scalar_check(field: FieldDescriptor) -> Callable[[object], bool] | None:
    if field.type in _STRING:
        return lambda v: type(v) is str
    if field.type == _F.TYPE_BOOL:
        return lambda v: type(v) is bool
    if field.type in _INTS:
        return lambda v: type(v) is int
    if field.type in _FLOATS:
        return lambda v: type(v) is float or type(v) is int
    return None  # 64-bit integers (strings in ProtoJSON), bytes (base64)


def _give_up(message: Message, name: str, value: object) -> None:
    raise GiveUp


def _scalar(check: Callable[[object], bool], message: Message, name: str, value: object) -> None:
    if not check(value):
        raise GiveUp
    setattr(message, name, value)


def _scalars(check: Callable[[object], bool], message: Message, name: str, value: object) -> None:
    if not isinstance(value, list) or not all(check(v) for v in value):
        raise GiveUp
    getattr(message, name).extend(value)


def _enum(numbers: dict[str, int], message: Message, name: str, value: object) -> None:
    setattr(message, name, _enum_number(numbers, value))


def _enums(numbers: dict[str, int], message: Message, name: str, value: object) -> None:
    if not isinstance(value, list):
        raise GiveUp
    getattr(message, name).extend(_enum_number(numbers, v) for v in value)


def _enum_number(numbers: dict[str, int], value: object) -> int:
    if type(value) is str and value in numbers:
        return numbers[value]
    raise GiveUp


def _message(message: Message, name: str, value: object) -> None:
    _fill(value, getattr(message, name))
    if not value:
        getattr(message, name).SetInParent()  # {} still sets the field, as ParseDict does


def _well_known(message: Message, name: str, value: object) -> None:
    """A Struct or Value field (metadata, a data part): ParseDict's own, for it alone."""
    field = getattr(message, name)
    field.SetInParent()
    json_format.ParseDict(value, field, descriptor_pool=pool())  # type: ignore[arg-type]


def _messages(message: Message, name: str, value: object) -> None:
    if not isinstance(value, list):
        raise GiveUp
    container = getattr(message, name)
    for item in value:
        _fill(item, container.add())


def _timestamp(message: Message, name: str, value: object) -> None:
    seconds, nanos = _instant(value)
    stamp = getattr(message, name)
    stamp.seconds, stamp.nanos = seconds, nanos


def _timestamps(message: Message, name: str, value: object) -> None:
    raise GiveUp  # none in the proto


def _instant(value: object) -> tuple[int, int]:
    """An RFC 3339 UTC time as our codecs write it (``...Z`` or ``+00:00``, at most
    microseconds); other offsets and nanosecond digits: GiveUp."""
    if type(value) is not str:
        raise GiveUp
    body = value[:-1] if value.endswith("Z") else value[:-6] if value.endswith("+00:00") \
        else None
    if body is None or not _RFC3339.fullmatch(body):
        raise GiveUp  # another offset, nanosecond digits, another layout
    try:
        moment = datetime.fromisoformat(body + "+00:00")
    except ValueError:
        raise GiveUp from None
    delta = moment - _EPOCH
    return delta.days * 86400 + delta.seconds, delta.microseconds * 1000
