"""Checking a JSON document against a definition of the published 0.3 or 1.0 schema.

- 0.3: the draft-07 schema, definitions by name (``"Task"``, ``"AgentCard"``).
- 1.0: the 2020-12 bundle generated from the proto. Its definitions are keyed by spaced
  titles (``"Task Status"``; ``"TaskStatus"`` works too) and its ``$ref``s
  (``lf.a2a.v1.<Type>.jsonschema.json``, ``google.protobuf.<T>.jsonschema.json``) are
  resolved to the definition whose title without spaces is ``<Type>``. The proto's REQUIRED
  fields and oneofs are checked too (:mod:`._proto`). Timestamps must be RFC 3339 UTC with
  ``Z``, as 1.0 says they MUST.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

try:
    from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker
    from jsonschema.exceptions import ValidationError, best_match
    from jsonschema.protocols import Validator
except ImportError as exc:  # a dependency of the package: only a broken install lacks it
    raise ImportError(
        "a2a_core.schemas checks cards with the 'jsonschema' package, a dependency of "
        "a2a-wsgi that is missing here: pip install 'jsonschema>=4.18'") from exc

from ._proto import proto_findings, proto_messages
from ._resources import SCHEMA_0_3, SCHEMA_1_0, load_json

__all__ = ["SchemaFinding", "check", "definition_names"]

_REF = re.compile(r"^(?:lf\.a2a\.v1|google\.protobuf)\.(\w+)\.jsonschema\.json$")
_UTC_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$")


@dataclass(frozen=True)
class SchemaFinding:
    """One way a document breaks the schema: where (a JSON path from ``$``) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@functools.cache
def _bundle_1_0() -> tuple[dict[str, Any], dict[str, str]]:
    """The 1.0 definitions with every ``$ref`` rewritten to ``#/definitions/<title>``,
    and the titles by their unspaced names."""
    definitions = load_json(SCHEMA_1_0)["definitions"]
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

    return rewrite(definitions), titles


def definition_names(version: str) -> list[str]:
    """The definitions of one version's schema (1.0: by their spaced titles)."""
    if version == "0.3":
        return sorted(load_json(SCHEMA_0_3)["definitions"])
    if version == "1.0":
        return sorted(_bundle_1_0()[0])
    raise ValueError(f"unknown version {version!r}")


_format_checker = FormatChecker()


@_format_checker.checks("date-time", raises=ValueError)
def _is_utc_timestamp(value: object) -> bool:
    return not isinstance(value, str) or bool(_UTC_TIMESTAMP.match(value))


@functools.cache
def _validator(definition_name: str, version: str) -> tuple[Validator, str | None]:
    """The validator of one definition, and (1.0) the proto message it is, if any."""
    if version == "0.3":
        definitions = load_json(SCHEMA_0_3)["definitions"]
        if definition_name not in definitions:
            raise KeyError(f"no 0.3 definition {definition_name!r}")
        root = {"$ref": f"#/definitions/{definition_name}", "definitions": definitions}
        return Draft7Validator(root, format_checker=_format_checker), None
    if version == "1.0":
        definitions, titles = _bundle_1_0()
        title = titles.get(definition_name.replace(" ", ""))
        if title is None:
            raise KeyError(f"no 1.0 definition {definition_name!r}")
        root = {"$ref": f"#/definitions/{title}", "definitions": definitions}
        message = title.replace(" ", "")
        validator = Draft202012Validator(root, format_checker=_format_checker)
        return validator, (message if message in proto_messages() else None)
    raise ValueError(f"unknown version {version!r}")


def _deepest(error: ValidationError) -> ValidationError:
    """For an anyOf/oneOf miss, the branch's error that says most about what is wrong."""
    while error.context:
        inner = best_match(error.context)
        if inner is None:
            break
        error = inner
    return error


def _schema_findings(validator: Validator, value: Any) -> Iterator[SchemaFinding]:
    for error in validator.iter_errors(value):
        error = _deepest(error)
        yield SchemaFinding(error.json_path, error.message)


def check(definition_name: str, value: Any, version: str) -> list[SchemaFinding]:
    """Every way ``value`` breaks ``definition_name`` of ``version`` (``"0.3"``, ``"1.0"``);
    empty when it is valid. Raises KeyError for an unknown definition."""
    validator, message = _validator(definition_name, version)
    found = list(_schema_findings(validator, value))
    if message is not None:
        found += [SchemaFinding(path, text) for path, text in proto_findings(message, value, "$")]
    unique = dict.fromkeys(found)  # a member broken two ways in one branch is listed once
    return sorted(unique, key=lambda f: f.path)
