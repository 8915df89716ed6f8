"""One table for the JSON-RPC method names of both dialects.

The 0.3 names (``message/send``…) and the 1.0 names (``SendMessage``…) are
disjoint, and both are accepted whatever ``A2A-Version`` was negotiated, so a
peer mixing them is understood; the response *shape* follows the negotiated
version.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from .errors import MethodNotFoundError

__all__ = ["Operation", "METHODS", "STREAMING_OPERATIONS", "PUSH_OPERATIONS", "operation_for"]


class Operation(enum.Enum):
    """An A2A operation, named as in the 1.0 spec."""

    SEND_MESSAGE = "SendMessage"
    SEND_STREAMING_MESSAGE = "SendStreamingMessage"
    GET_TASK = "GetTask"
    LIST_TASKS = "ListTasks"
    CANCEL_TASK = "CancelTask"
    SUBSCRIBE_TO_TASK = "SubscribeToTask"
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG = "CreateTaskPushNotificationConfig"
    GET_TASK_PUSH_NOTIFICATION_CONFIG = "GetTaskPushNotificationConfig"
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS = "ListTaskPushNotificationConfigs"
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG = "DeleteTaskPushNotificationConfig"
    GET_EXTENDED_AGENT_CARD = "GetExtendedAgentCard"

    #: Identity hash (members are singletons): per-request set and dict lookups skip
    #: Enum's Python-level __hash__.
    __hash__ = object.__hash__

    @property
    def method_1_0(self) -> str:
        return self.value

    @property
    def method_0_3(self) -> str:
        return _NAMES_0_3[self]


_NAMES_0_3: Mapping[Operation, str] = {
    Operation.SEND_MESSAGE: "message/send",
    Operation.SEND_STREAMING_MESSAGE: "message/stream",
    Operation.GET_TASK: "tasks/get",
    # Not a 0.3 JSON-RPC method (REST/gRPC only there); accepted as ListTasks' 0.3 alias.
    Operation.LIST_TASKS: "tasks/list",
    Operation.CANCEL_TASK: "tasks/cancel",
    Operation.SUBSCRIBE_TO_TASK: "tasks/resubscribe",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "tasks/pushNotificationConfig/set",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "tasks/pushNotificationConfig/get",
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: "tasks/pushNotificationConfig/list",
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: "tasks/pushNotificationConfig/delete",
    Operation.GET_EXTENDED_AGENT_CARD: "agent/getAuthenticatedExtendedCard",
}

#: Every accepted method name, both dialects, onto its operation.
METHODS: Mapping[str, Operation] = {
    **{op.value: op for op in Operation},
    **{name: op for op, name in _NAMES_0_3.items()},
}

STREAMING_OPERATIONS = frozenset({Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK})
PUSH_OPERATIONS = frozenset(
    {
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    }
)


def operation_for(method: str) -> Operation:
    """Look a method name up in either dialect; unknown names raise MethodNotFoundError."""
    try:
        return METHODS[method]
    except KeyError:
        raise MethodNotFoundError(data={"method": method}) from None
