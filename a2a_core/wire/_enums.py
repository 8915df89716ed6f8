"""Enum spellings: each dialect's output tables, and one reader for every spelling.

0.3 writes ``"input-required"`` and ``"user"``; 1.0 writes ProtoJSON enum names
(``"TASK_STATE_INPUT_REQUIRED"``, ``"ROLE_USER"``). Readers also take the proto
numbers, as ProtoJSON parsers must.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..models import Role, TaskState
from ._common import invalid, json_type, shown

__all__ = ["STATE_0_3", "STATE_1_0", "ROLE_0_3", "ROLE_1_0", "parse_state", "parse_role"]

#: 0.3 wire spelling of each state (lower-case kebab).
STATE_0_3: Mapping[TaskState, str] = {state: state.value.replace("_", "-") for state in TaskState}
#: 1.0 ProtoJSON enum names; UNKNOWN is the proto's zero value.
STATE_1_0: Mapping[TaskState, str] = {
    state: "TASK_STATE_UNSPECIFIED" if state is TaskState.UNKNOWN else f"TASK_STATE_{state.name}"
    for state in TaskState
}
_STATE_NUMBERS: Mapping[int, TaskState] = {
    0: TaskState.UNKNOWN,
    1: TaskState.SUBMITTED,
    2: TaskState.WORKING,
    3: TaskState.COMPLETED,
    4: TaskState.FAILED,
    5: TaskState.CANCELED,
    6: TaskState.INPUT_REQUIRED,
    7: TaskState.REJECTED,
    8: TaskState.AUTH_REQUIRED,
}
ROLE_0_3: Mapping[Role, str] = {Role.USER: "user", Role.AGENT: "agent"}
ROLE_1_0: Mapping[Role, str] = {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT"}
_ROLE_NUMBERS: Mapping[int, Role] = {1: Role.USER, 2: Role.AGENT}


def parse_state(value: object, path: str, *, strict: bool = False) -> TaskState:
    """Any spelling of a state: "input-required", "TASK_STATE_INPUT_REQUIRED", 6.

    Unknown values become ``TaskState.UNKNOWN`` (a newer peer must not crash
    us, as h2 treats unknown error codes); ``strict`` refuses them instead,
    for filters where a typo would silently match nothing.
    """
    state: TaskState | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        state = _STATE_NUMBERS.get(value)
    elif isinstance(value, str):
        name = value.strip().upper().replace("-", "_").removeprefix("TASK_STATE_")
        name = {"CANCELLED": "CANCELED", "UNSPECIFIED": "UNKNOWN"}.get(name, name)
        state = TaskState.__members__.get(name)
    else:
        raise invalid(path, f"expected a task state, got {json_type(value)}")
    if state is None:
        if strict:
            raise invalid(path, f"unknown task state {shown(value)}")
        return TaskState.UNKNOWN
    return state


def parse_role(value: object, path: str) -> Role:
    """A role as "user", "ROLE_USER" or 1. An unknown role is an error: nobody can act on it."""
    role: Role | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        role = _ROLE_NUMBERS.get(value)
    elif isinstance(value, str):
        name = value.strip().upper().removeprefix("ROLE_")
        role = Role.__members__.get(name)
    if role is None:
        raise invalid(path, f"expected role user or agent, got {shown(value)}")
    return role
