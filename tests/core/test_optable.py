"""The operation table: one entry per operation, and what is derived from the entries."""

from __future__ import annotations

import dataclasses

import pytest

from a2a_core._operations import Operations
from a2a_core.errors import (
    ExtendedAgentCardNotConfiguredError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
from a2a_core.models import AgentCapabilities
from a2a_core.optable import (
    OPERATIONS,
    Capability,
    Operation,
    OperationTable,
    Route,
    check_capability,
)

ENTRIES = [value for name, value in vars(Operation).items() if name.isupper()]


def test_every_entry_is_served_and_named_once_in_each_dialect() -> None:
    assert set(OPERATIONS) == set(ENTRIES) and len(OPERATIONS) == 11
    for op in OPERATIONS:
        assert OPERATIONS.for_method(op.name) is op
        assert OPERATIONS.for_method(op.method_0_3) is op
        assert op.method("0.3") == op.method_0_3 and op.method("1.0") == op.name
        assert op.routes, op  # every 1.0 operation has an HTTP+JSON route
    assert OPERATIONS.named("message/send") is Operation.SEND_MESSAGE
    assert OPERATIONS.named("nope") is None
    with pytest.raises(MethodNotFoundError):
        OPERATIONS.for_method("tasks/nope")


def test_streams_capabilities_and_verbs_come_from_the_entries() -> None:
    assert {op for op in OPERATIONS if op.streams} == {
        Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK}
    assert {op for op in OPERATIONS if op.needs is Capability.PUSH_NOTIFICATIONS} == {
        op for op in OPERATIONS if "PushNotificationConfig" in op.name}
    assert OPERATIONS.verbs == (":cancel", ":subscribe")
    assert set(OPERATIONS.patterns[("tasks", "{id}:subscribe")]) == {"POST", "GET"}


def test_a_table_refuses_a_second_entry_with_the_same_name_or_route() -> None:
    renamed = dataclasses.replace(Operation.GET_TASK, name="GetTaskAgain", name_0_3=None)
    with pytest.raises(ValueError, match="GET"):
        OPERATIONS.with_operation(renamed)  # same route as GetTask
    same_name = dataclasses.replace(Operation.GET_TASK, name_0_3="x/y",
                                    routes=(Route("GET", ("other",)),))
    with pytest.raises(ValueError, match="GetTask"):
        OPERATIONS.with_operation(same_name)
    fresh = dataclasses.replace(renamed, routes=(Route("GET", ("tasks", "{id}:again")),))
    table = OPERATIONS.with_operation(fresh)
    assert table.for_method("GetTaskAgain") is fresh and fresh not in OPERATIONS
    assert table.verbs == (":again", ":cancel", ":subscribe")


def test_operations_refuse_an_entry_without_a_handler() -> None:
    orphan = dataclasses.replace(Operation.GET_TASK, name="Orphan", name_0_3=None,
                                 routes=(Route("GET", ("orphan",)),))
    with pytest.raises(ValueError, match="no handler for Orphan"):
        Operations(object(), card_document=lambda *a: {}, max_parts=1,  # type: ignore[arg-type]
                   table=OperationTable((*OPERATIONS, orphan)))


@pytest.mark.parametrize(("op", "declared", "version", "error"), [
    (Operation.SEND_STREAMING_MESSAGE, "streaming", "1.0", UnsupportedOperationError),
    (Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, "push_notifications", "1.0",
     PushNotificationNotSupportedError),
    (Operation.GET_EXTENDED_AGENT_CARD, "extended_agent_card", "1.0", UnsupportedOperationError),
    (Operation.GET_EXTENDED_AGENT_CARD, "extended_agent_card", "0.3",
     ExtendedAgentCardNotConfiguredError),
])
def test_the_capability_gate_asks_what_the_entry_needs(
        op: object, declared: str, version: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        check_capability(op, AgentCapabilities(), version)  # type: ignore[arg-type]
    check_capability(op, AgentCapabilities(**{declared: True}), version)  # type: ignore[arg-type]
    check_capability(Operation.GET_TASK, AgentCapabilities(), version)
