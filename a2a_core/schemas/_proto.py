"""The 1.0 proto's REQUIRED fields and oneof groups, which its JSON Schema bundle omits.

The bundle generated from the proto has no ``required`` lists and does not enforce ``oneof``;
the proto (``field_behavior = REQUIRED``, ``oneof`` blocks) says both, so it is parsed here,
line by line (a2a.proto nests no message), and a value is checked against it recursively.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ._resources import PROTO_1_0, load_text

__all__ = ["ProtoField", "ProtoMessage", "proto_messages", "proto_findings"]


@dataclass
class ProtoField:
    name: str
    json_name: str
    type: str
    repeated: bool = False
    is_map: bool = False
    required: bool = False


@dataclass
class ProtoMessage:
    name: str
    fields: list[ProtoField] = field(default_factory=list)
    oneofs: dict[str, list[ProtoField]] = field(default_factory=dict)


_FIELD = re.compile(
    r"^(?P<label>repeated\s+|optional\s+)?"
    r"(?:map<\s*\w+\s*,\s*(?P<mapvalue>[\w.]+)\s*>|(?P<type>[\w.]+))\s+"
    r"(?P<name>\w+)\s*=\s*\d+\s*(?P<options>\[.*\])?\s*;$"
)
_OPENING = re.compile(r"^(message|enum|service|oneof)\s+(\w+)\s*\{$")


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


@functools.cache
def proto_messages() -> dict[str, ProtoMessage]:
    """Top-level messages of the 1.0 proto, with their REQUIRED and oneof facts."""
    messages: dict[str, ProtoMessage] = {}
    current: ProtoMessage | None = None
    oneof: str | None = None
    depth = 0
    for raw in load_text(PROTO_1_0).splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        opening = _OPENING.match(line)
        if opening:
            depth += 1
            kind, name = opening.groups()
            if kind == "message" and depth == 1:
                current = messages[name] = ProtoMessage(name)
            elif kind == "oneof" and current is not None:
                oneof = name
                current.oneofs[name] = []
            continue
        if line.endswith("{"):
            depth += 1
            continue
        if line.startswith("}"):
            depth -= 1
            if oneof is not None:
                oneof = None
            elif depth == 0:
                current = None
            continue
        match = _FIELD.match(line)
        if current is None or match is None or depth > 2:
            continue
        f = ProtoField(
            name=match["name"],
            json_name=_camel(match["name"]),
            type=(match["mapvalue"] or match["type"]),
            repeated=bool(match["label"] and match["label"].strip() == "repeated"),
            is_map=bool(match["mapvalue"]),
            required="REQUIRED" in (match["options"] or ""),
        )
        current.fields.append(f)
        if oneof is not None:
            current.oneofs[oneof].append(f)
    return messages


def _member(value: dict[str, Any], f: ProtoField) -> tuple[bool, Any]:
    for key in (f.json_name, f.name):
        if key in value:
            return True, value[key]
    return False, None


def proto_findings(message_name: str, value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(JSON path, message) for each REQUIRED field missing and each oneof not set once."""
    if not isinstance(value, dict):
        return
    messages = proto_messages()
    message = messages[message_name]
    for f in message.fields:
        present, member = _member(value, f)
        if f.required and not present:
            yield path, f"REQUIRED field {f.json_name!r} of {message_name} missing"
        if not present or f.type not in messages:
            continue
        if f.is_map and isinstance(member, dict):
            children = [(f"{path}.{f.json_name}[{k!r}]", v) for k, v in member.items()]
        elif f.repeated and isinstance(member, list):
            children = [(f"{path}.{f.json_name}[{i}]", v) for i, v in enumerate(member)]
        else:
            children = [(f"{path}.{f.json_name}", member)]
        for child_path, child in children:
            yield from proto_findings(f.type, child, child_path)
    for name, members in message.oneofs.items():
        set_members = [f.json_name for f in members if _member(value, f)[0]]
        if len(set_members) != 1:
            yield path, (f"{message_name}.{name} needs exactly one of "
                         f"{[f.json_name for f in members]}, got {set_members}")
