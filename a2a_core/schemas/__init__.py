"""The published A2A schemas, shipped with the package, and checks against them.

The files beside this module are unmodified copies of the 0.3 JSON Schema, the 1.0 JSON
Schema bundle and the 1.0 proto (``README.md`` here gives their origin and licence). The
checks are pure: a decoded JSON document in, a list of :class:`SchemaFinding` out, so the
server (checking its own card when it starts), ``a2a card --check`` and the inspector all
report the same findings.

``jsonschema`` is imported by this package only, and only when it is imported: nothing in
``a2a_core``'s namespace imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._jsonvalue import JSONValue
from ..wire._card import card_shape
from ._check import SchemaFinding, check, definition_names
from ._proto import ProtoField, ProtoMessage, proto_messages
from ._resources import PROTO_1_0, SCHEMA_0_3, SCHEMA_1_0, load_json, load_text

__all__ = [
    "CardCheck",
    "SchemaFinding",
    "check",
    "check_card",
    "definition_names",
    "proto_messages",
    "ProtoField",
    "ProtoMessage",
    "load_json",
    "load_text",
    "SCHEMA_0_3",
    "SCHEMA_1_0",
    "PROTO_1_0",
]


@dataclass(frozen=True)
class CardCheck:
    """What checking one card found: the schema version it was read as, and the findings."""

    version: str
    findings: tuple[SchemaFinding, ...]

    @property
    def ok(self) -> bool:
        return not self.findings


def check_card(doc: JSONValue, version: str | None = None) -> CardCheck:
    """Check an agent card document against the published schema of ``version``, or of the
    version its shape says (a 0.3 endpoint member: 0.3; else 1.0)."""
    version = version or card_shape(doc)
    return CardCheck(version, tuple(check("AgentCard", doc, version)))
