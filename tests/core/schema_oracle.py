"""Validate JSON against the published A2A schemas: the test oracle for the wire codecs.

``validate(definition_name, value, version)`` raises ``jsonschema.ValidationError`` with the
first finding of :func:`a2a_core.schemas.check`, which reads the schemas vendored in the
package (0.3: the draft-07 schema; 1.0: the JSON Schema bundle plus the proto's REQUIRED
fields and oneofs; see that module).
"""

from __future__ import annotations

from typing import Any

from jsonschema import ValidationError

from a2a_core.schemas import check, definition_names, proto_messages

__all__ = ["validate", "definition_names", "proto_messages"]


def validate(definition_name: str, value: Any, version: str) -> None:
    """Raise ValidationError unless ``value`` is a valid ``definition_name`` of ``version``."""
    if version not in ("0.3", "1.0"):
        raise ValueError(f"unknown version {version!r}")
    findings = check(definition_name, value, version)
    if findings:
        raise ValidationError(str(findings[0]))
