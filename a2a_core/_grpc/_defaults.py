"""ProtoJSON leaves zero values out; the 1.0 JSON codecs want the proto's REQUIRED ones.

A proto3 field at its default is not written by ProtoJSON (an empty ``skills`` list, a
``nextPageToken`` of ``""``, a ``totalSize`` of 0), while the 1.0 JSON binding writes them and
our decoders, like the spec's schema, insist on the REQUIRED ones. Reading a gRPC answer,
such an absent field is its default, so it is put back before decoding; a REQUIRED message
that is absent stays absent (that is a real omission).
"""

from __future__ import annotations

from .._jsonvalue import JSONValue
from ..schemas._proto import ProtoMessage, proto_messages

__all__ = ["with_required_defaults"]

#: Scalar proto types -> their ProtoJSON default.
_SCALARS: dict[str, JSONValue] = {
    "string": "", "bytes": "", "bool": False,
    "int32": 0, "int64": "0", "uint32": 0, "uint64": "0", "double": 0.0, "float": 0.0,
}


def with_required_defaults(message_name: str, value: JSONValue) -> JSONValue:
    """``value`` (the ProtoJSON of a ``message_name``) with absent REQUIRED fields at their
    defaults, in every nested message too; changed in place and returned."""
    _fill(proto_messages(), message_name, value)
    return value


def _fill(messages: dict[str, ProtoMessage], name: str, value: JSONValue) -> None:
    message = messages.get(name)
    if message is None or not isinstance(value, dict):
        return
    for f in message.fields:
        if f.json_name not in value:
            if not f.required:
                continue
            if f.is_map:
                value[f.json_name] = {}
            elif f.repeated:
                value[f.json_name] = []
            elif f.type in _SCALARS:
                value[f.json_name] = _SCALARS[f.type]
            continue
        if f.type not in messages:
            continue
        member = value[f.json_name]
        if f.is_map and isinstance(member, dict):
            children = list(member.values())
        elif f.repeated and isinstance(member, list):
            children = member
        else:
            children = [member]
        for child in children:
            _fill(messages, f.type, child)
