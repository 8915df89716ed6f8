"""The HTTP+JSON route table: every 1.0 operation at the proto's ``google.api.http`` path.

Each path also exists below a ``/{tenant}`` prefix. A pattern segment is a
literal, a path variable ``{field}`` or a variable with a custom method
(``{id}:cancel``); ``field`` is the member's name in the 1.0 JSON-RPC params.

Where each member comes from (gRPC transcoding rules):

* path variables (``id``, ``taskId``, ``tenant``) always;
* ``body: "*"`` routes (sends, cancel, push-config create, POST subscribe):
  everything else from the JSON body;
* GET and DELETE routes: everything else from camelCase query parameters,
  typed by the table (integers, ``true``/``false``, TaskState names).

The server reads the table in :mod:`._routes`, the client in :mod:`._target`,
so the two cannot disagree.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..methods import Operation

__all__ = ["QueryKind", "RestRoute", "ROUTES", "PATTERNS", "VERBS", "variable"]


class QueryKind(enum.Enum):
    """How one query parameter's text becomes a JSON value."""

    STRING = "string"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    TASK_STATE = "task state"


@dataclass(frozen=True, slots=True)
class RestRoute:
    """One binding: ``pattern`` segments are literals, ``{field}`` or ``{field}:verb``."""

    operation: Operation
    method: str
    pattern: tuple[str, ...]
    #: camelCase query parameter -> kind (GET and DELETE routes).
    query: Mapping[str, QueryKind] = field(default_factory=dict)
    #: The body is the request message (proto ``body: "*"``).
    body: bool = False


_S, _I, _B = QueryKind.STRING, QueryKind.INTEGER, QueryKind.BOOLEAN
_PUSH = ("tasks", "{taskId}", "pushNotificationConfigs")

#: Every 1.0 operation, in matching order: custom-verb paths before ``tasks/{id}``.
#: Where an operation has two methods, the first is the one the client sends.
ROUTES: tuple[RestRoute, ...] = (
    RestRoute(Operation.SEND_MESSAGE, "POST", ("message:send",), body=True),
    RestRoute(Operation.SEND_STREAMING_MESSAGE, "POST", ("message:stream",), body=True),
    RestRoute(Operation.GET_EXTENDED_AGENT_CARD, "GET", ("extendedAgentCard",)),
    RestRoute(
        Operation.LIST_TASKS,
        "GET",
        ("tasks",),
        query={
            "contextId": _S,
            "status": QueryKind.TASK_STATE,
            "pageSize": _I,
            "pageToken": _S,
            "historyLength": _I,
            "statusTimestampAfter": _S,
            "includeArtifacts": _B,
        },
    ),
    RestRoute(Operation.CANCEL_TASK, "POST", ("tasks", "{id}:cancel"), body=True),
    # The spec's table says POST, the proto's annotation GET: both are served.
    RestRoute(Operation.SUBSCRIBE_TO_TASK, "POST", ("tasks", "{id}:subscribe"), body=True),
    RestRoute(Operation.SUBSCRIBE_TO_TASK, "GET", ("tasks", "{id}:subscribe")),
    # currentGeneration: the dev-1.1 long-poll (served only with the generation preview).
    RestRoute(Operation.GET_TASK, "GET", ("tasks", "{id}"),
              query={"historyLength": _I, "currentGeneration": _I}),
    RestRoute(Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, "POST", _PUSH, body=True),
    RestRoute(
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        "GET",
        _PUSH,
        query={"pageSize": _I, "pageToken": _S},
    ),
    RestRoute(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, "GET", (*_PUSH, "{id}")),
    RestRoute(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, "DELETE", (*_PUSH, "{id}")),
)


def _by_pattern() -> dict[tuple[str, ...], dict[str, RestRoute]]:
    """pattern -> method -> route, patterns in matching order."""
    table: dict[tuple[str, ...], dict[str, RestRoute]] = {}
    for entry in ROUTES:
        table.setdefault(entry.pattern, {})[entry.method] = entry
    return table


#: pattern -> method -> route, in matching order.
PATTERNS = _by_pattern()


def variable(template: str) -> tuple[str, str]:
    """``{id}:cancel`` -> ("id", ":cancel"); ``{taskId}`` -> ("taskId", "")."""
    name, _, verb = template[1:].partition("}")
    return name, verb


#: The custom methods (``:cancel``…): a plain path variable never ends in one.
VERBS: tuple[str, ...] = tuple(
    sorted({variable(t)[1] for r in ROUTES for t in r.pattern if t.startswith("{")} - {""})
)
