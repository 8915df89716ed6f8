"""Validate JSON against the official A2A schemas: the test oracle for the wire codecs.

``validate(definition_name, value, version)`` raises ``jsonschema.ValidationError``.

- 0.3: the draft-07 schema, definitions by name (``"Task"``, ``"MessageSendParams"``).
- 1.0: the TCK's 2020-12 bundle. Its definitions are keyed by spaced titles
  (``"Task Status"``); ``"TaskStatus"`` works too. Its ``$ref``s
  (``lf.a2a.v1.<Type>.jsonschema.json``, ``google.protobuf.<T>.jsonschema.json``)
  are resolved to the definition whose title without spaces is ``<Type>``.
  That bundle has no ``required`` lists and does not enforce ``oneof``, so the
  proto itself is parsed and every message in the value is checked for its
  REQUIRED fields and for exactly one member of each ``oneof``. Timestamps
  must be RFC 3339 UTC with ``Z`` (1.0 MUST).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker, ValidationError

__all__ = ["SPEC_DIR", "validate", "definition_names", "proto_messages"]

SPEC_DIR = Path(__file__).resolve().parents[3] / "shared" / "spec"

_REF = re.compile(r"^(?:lf\.a2a\.v1|google\.protobuf)\.(\w+)\.jsonschema\.json$")
_UTC_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$")


def _load(name: str) -> dict[str, Any]:
    with (SPEC_DIR / name).open(encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


@functools.cache
def _schema_0_3() -> dict[str, Any]:
    return _load("a2a-v0.3.schema.json")


@functools.cache
def _schema_1_0() -> dict[str, Any]:
    """The 1.0 bundle with every ``$ref`` rewritten to ``#/definitions/<title>``."""
    definitions = _load("a2a-v1.0.schema.json")["definitions"]
    titles = {title.replace(" ", ""): title for title in definitions}

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: rewrite(v) for k, v in node.items() if k != "$schema"}
            ref = node.get("$ref")
            if isinstance(ref, str):
                match = _REF.match(ref)
                if match is None or match.group(1) not in titles:
                    raise LookupError(f"unresolvable $ref {ref!r}")
                out["$ref"] = f"#/definitions/{titles[match.group(1)]}"
            return out
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    return {"definitions": rewrite(definitions), "titles": titles}


def definition_names(version: str) -> list[str]:
    if version == "0.3":
        return sorted(_schema_0_3()["definitions"])
    return sorted(_schema_1_0()["definitions"])


_format_checker = FormatChecker()


@_format_checker.checks("date-time", raises=ValueError)
def _is_utc_timestamp(value: object) -> bool:
    return not isinstance(value, str) or bool(_UTC_TIMESTAMP.match(value))


def validate(definition_name: str, value: Any, version: str) -> None:
    """Raise ValidationError unless ``value`` is a valid ``definition_name`` of ``version``."""
    if version == "0.3":
        schema = _schema_0_3()
        if definition_name not in schema["definitions"]:
            raise KeyError(f"no 0.3 definition {definition_name!r}")
        root = {"$ref": f"#/definitions/{definition_name}", "definitions": schema["definitions"]}
        _raise_best(Draft7Validator(root, format_checker=_format_checker), value)
    elif version == "1.0":
        bundle = _schema_1_0()
        title = bundle["titles"].get(definition_name.replace(" ", ""))
        if title is None:
            raise KeyError(f"no 1.0 definition {definition_name!r}")
        root = {"$ref": f"#/definitions/{title}", "definitions": bundle["definitions"]}
        _raise_best(Draft202012Validator(root, format_checker=_format_checker), value)
        message = title.replace(" ", "")
        if message in proto_messages():
            _check_proto(message, value, "$")
    else:
        raise ValueError(f"unknown version {version!r}")


def _raise_best(validator: jsonschema.protocols.Validator, value: Any) -> None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        raise error


# -- the proto's REQUIRED fields and oneofs ----------------------------------------------


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


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


@functools.cache
def proto_messages() -> dict[str, ProtoMessage]:
    """Top-level messages of a2a.proto (it nests none), with REQUIRED and oneof facts."""
    messages: dict[str, ProtoMessage] = {}
    current: ProtoMessage | None = None
    oneof: str | None = None
    depth = 0
    for raw in (SPEC_DIR / "a2a-v1.0.proto").read_text(encoding="utf-8").splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        opening = re.match(r"^(message|enum|service|oneof)\s+(\w+)\s*\{$", line)
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


def _check_proto(message_name: str, value: Any, path: str) -> None:
    """REQUIRED fields present, exactly one member per oneof, recursively."""
    if not isinstance(value, dict):
        return
    message = proto_messages()[message_name]
    for f in message.fields:
        present, member = _member(value, f)
        if f.required and not present:
            raise ValidationError(
                f"{path}: REQUIRED field {f.json_name!r} of {message_name} missing"
            )
        if not present or f.type not in proto_messages():
            continue
        if f.is_map and isinstance(member, dict):
            children = [(f"{path}.{f.json_name}[{k!r}]", v) for k, v in member.items()]
        elif f.repeated and isinstance(member, list):
            children = [(f"{path}.{f.json_name}[{i}]", v) for i, v in enumerate(member)]
        else:
            children = [(f"{path}.{f.json_name}", member)]
        for child_path, child in children:
            _check_proto(f.type, child, child_path)
    for name, members in message.oneofs.items():
        set_members = [f.json_name for f in members if _member(value, f)[0]]
        if len(set_members) != 1:
            raise ValidationError(
                f"{path}: {message_name}.{name} needs exactly one of "
                f"{[f.json_name for f in members]}, got {set_members}"
            )
