"""The vendored schema files, read from the package itself (no path outside it).

Reading the package's own data is like importing a module: it needs no path, socket or clock
from the caller, so it is the one read a2a_core does (``importlib.resources`` finds the files
in a checkout, an installed wheel or a zip alike).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

__all__ = ["SCHEMA_0_3", "SCHEMA_1_0", "PROTO_1_0", "load_json", "load_text"]

#: The published files (see README.md beside them for their origin).
SCHEMA_0_3 = "a2a-v0.3.schema.json"
SCHEMA_1_0 = "a2a-v1.0.schema.json"
PROTO_1_0 = "a2a-v1.0.proto"


def load_text(name: str) -> str:
    """The text of one vendored file."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


@functools.cache
def load_json(name: str) -> dict[str, Any]:
    """One vendored JSON Schema, parsed once per process."""
    data: dict[str, Any] = json.loads(load_text(name))
    return data
