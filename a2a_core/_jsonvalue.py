"""The type of a decoded JSON value, for the signatures that carry JSON no model describes.

JSON-RPC params, wire-form results and free-form members are what
:func:`json.loads` returns; a signature says so with :data:`JSONValue` instead
of ``Any``, so mypy checks what is done with them.
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JSONObject", "JSONValue"]

#: Any JSON value, as :func:`json.loads` returns it and :func:`json.dumps` takes it.
JSONValue: TypeAlias = (
    None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]
)

#: A JSON object.
JSONObject: TypeAlias = dict[str, JSONValue]
