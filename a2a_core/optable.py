"""One description per operation: everything the bindings, codecs and gates know of it.

Each A2A operation is one :class:`OperationSpec` entry below: its JSON-RPC
names in both dialects, its HTTP+JSON routes, its request and result types and
their codecs, the caps its input is held to, whether it streams, the agent
capability it needs and what it asks ``authorize_task`` about. The rest is
derived from the entries:

* the JSON-RPC router (:meth:`OperationTable.for_method`; the 0.3 names
  ``message/send``… and the 1.0 names ``SendMessage``… are disjoint, and both
  are accepted whatever ``A2A-Version`` was negotiated: the response *shape*
  follows the negotiated version);
* the HTTP+JSON router (:attr:`OperationTable.patterns`, read by
  :func:`a2a_core.rest.route`) and the client's requests
  (:func:`a2a_core.rest.request_target` reads :attr:`OperationSpec.routes`);
* the codecs (:func:`a2a_core.wire.decode_params`, ``encode_result``,
  ``decode_result``: generic in the entry's request and result types, so the
  client's calls are typed without casts);
* the limits (:class:`~a2a_core.wire._limits.Limits`), the capability gate
  (:func:`check_capability`), stream admission and retry safety.

Adding an operation is one entry here (listed in :data:`OPERATIONS`) plus its
handler in :mod:`a2a_core.operations`; a deployment can add one of its own with
:meth:`a2a_core.server.Dispatcher.add_operation`.

HTTP+JSON routes follow the proto's ``google.api.http`` paths, each also below a
``/{tenant}`` prefix. A pattern segment is a literal, a path variable ``{field}``
or a variable with a custom method (``{id}:cancel``); ``field`` is the member's
name in the 1.0 JSON-RPC params. Path variables always come from the path; a
``body`` route takes everything else from the JSON body; GET and DELETE routes
from camelCase query parameters, typed by the route's ``query``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from .auth import AuthorizeOperation
from .errors import (
    ExtendedAgentCardNotConfiguredError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
from .models import (
    AgentCapabilities,
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SendResult,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from .versioning import V0_3
from .wire import _codecs as codecs
from .wire._decode import decode_stream_event, decode_task, decode_task_push_config
from .wire._decode_requests import decode_list_push_configs_response, decode_list_tasks_response
from .wire._limits import Limits

__all__ = [
    "OPERATIONS",
    "AnyOperation",
    "Capability",
    "Operation",
    "OperationSpec",
    "OperationTable",
    "QueryKind",
    "Route",
    "check_capability",
]

Req = TypeVar("Req")
Res = TypeVar("Res")


class Capability(enum.Enum):
    """The card capability an operation needs (the gate refuses it when undeclared)."""

    STREAMING = "streaming"
    PUSH_NOTIFICATIONS = "pushNotifications"
    EXTENDED_AGENT_CARD = "extendedAgentCard"


class QueryKind(enum.Enum):
    """How one query parameter's text becomes a JSON value."""

    STRING = "string"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    TASK_STATE = "task state"


@dataclass(frozen=True, slots=True)
class Route:
    """One HTTP+JSON binding: ``pattern`` segments are literals, ``{field}`` or ``{field}:verb``."""

    method: str
    pattern: tuple[str, ...]
    #: camelCase query parameter -> kind (GET and DELETE routes).
    query: Mapping[str, QueryKind] = field(default_factory=dict)
    #: The body is the request message (proto ``body: "*"``).
    body: bool = False


@dataclass(frozen=True, eq=False, kw_only=True)
class OperationSpec(Generic[Req, Res]):
    """One operation: ``Req`` is what its params decode to, ``Res`` what its result is.

    Compared and hashed by identity: each entry is the operation.
    """

    #: The 1.0 name (its JSON-RPC method, and the name in logs and metrics).
    name: str
    #: The 0.3 JSON-RPC method (None: the operation has no 0.3 name).
    name_0_3: str | None
    request: type[Req]
    #: What the handler may answer (checked before encoding).
    results: tuple[type, ...]
    decode_request: codecs.RequestDecoder[Req]
    encode_result: codecs.ResultEncoder[Res]
    decode_result: codecs.ResultDecoder[Res]
    #: The caps the params are held to.
    limits: Limits
    #: HTTP+JSON routes; where there are two methods, the first is the one the client sends.
    routes: tuple[Route, ...] = ()
    #: The answer is an SSE stream (stream admission applies).
    streams: bool = False
    #: The card capability the agent must declare (None: none).
    needs: Capability | None = None
    #: What ``authorize_task`` is asked about the task the call names (None: it names
    #: none). A message continuing a task is asked GET: the answer holds the task.
    authorize: AuthorizeOperation | None = None
    #: A repeat cannot harm: the client sends it once more when the server dropped it
    #: unanswered (a send only when its message names no task).
    repeatable: bool = False
    #: The params may be omitted (read as ``{}``).
    params_optional: bool = False

    @property
    def method_1_0(self) -> str:
        return self.name

    @property
    def method_0_3(self) -> str:
        return self.name_0_3 if self.name_0_3 is not None else self.name

    def method(self, version: str) -> str:
        """The JSON-RPC method a client of ``version`` sends."""
        return self.method_0_3 if version == V0_3 else self.name

    def __repr__(self) -> str:
        return f"<operation {self.name}>"


#: An operation whatever its request and result types (what a router hands on).
AnyOperation = OperationSpec[Any, Any]

_S, _I, _B = QueryKind.STRING, QueryKind.INTEGER, QueryKind.BOOLEAN
_PUSH = ("tasks", "{taskId}", "pushNotificationConfigs")
_EVENTS = (Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)


class Operation:
    """The A2A operations, named as in the 1.0 spec: each attribute is its entry."""

    SEND_MESSAGE: Final[OperationSpec[SendMessageRequest, SendResult]] = OperationSpec(
        name="SendMessage", name_0_3="message/send",
        request=SendMessageRequest, results=(Task, Message),
        decode_request=codecs.request_decoder(SendMessageRequest),
        encode_result=codecs.encode_event, decode_result=codecs.decode_send_result,
        limits=Limits.SEND, routes=(Route("POST", ("message:send",), body=True),),
        authorize=AuthorizeOperation.GET, repeatable=True,
    )
    SEND_STREAMING_MESSAGE: Final[OperationSpec[SendMessageRequest, StreamEvent]] = (
        OperationSpec(
            name="SendStreamingMessage", name_0_3="message/stream",
            request=SendMessageRequest, results=_EVENTS,
            decode_request=codecs.request_decoder(SendMessageRequest),
            encode_result=codecs.encode_event, decode_result=decode_stream_event,
            limits=Limits.SEND, routes=(Route("POST", ("message:stream",), body=True),),
            streams=True, needs=Capability.STREAMING,
            authorize=AuthorizeOperation.GET, repeatable=True,
        )
    )
    GET_EXTENDED_AGENT_CARD: Final[OperationSpec[GetExtendedAgentCardRequest, AgentCard]] = (
        OperationSpec(
            name="GetExtendedAgentCard", name_0_3="agent/getAuthenticatedExtendedCard",
            request=GetExtendedAgentCardRequest, results=(AgentCard,),
            decode_request=codecs.request_decoder(GetExtendedAgentCardRequest),
            encode_result=codecs.encode_model, decode_result=codecs.decode_card_result,
            limits=Limits.TENANT_ONLY, routes=(Route("GET", ("extendedAgentCard",)),),
            needs=Capability.EXTENDED_AGENT_CARD, repeatable=True, params_optional=True,
        )
    )
    LIST_TASKS: Final[OperationSpec[ListTasksRequest, ListTasksResponse]] = OperationSpec(
        # tasks/list is not a 0.3 JSON-RPC method (REST/gRPC only there); accepted as an alias.
        name="ListTasks", name_0_3="tasks/list",
        request=ListTasksRequest, results=(ListTasksResponse,),
        decode_request=codecs.request_decoder(ListTasksRequest),
        encode_result=codecs.encode_model, decode_result=decode_list_tasks_response,
        limits=Limits.LIST_TASKS,
        routes=(Route("GET", ("tasks",), query={
            "contextId": _S, "status": QueryKind.TASK_STATE, "pageSize": _I, "pageToken": _S,
            "historyLength": _I, "statusTimestampAfter": _S, "includeArtifacts": _B}),),
        authorize=AuthorizeOperation.LIST, repeatable=True,
    )
    CANCEL_TASK: Final[OperationSpec[CancelTaskRequest, Task]] = OperationSpec(
        name="CancelTask", name_0_3="tasks/cancel",
        request=CancelTaskRequest, results=(Task,),
        decode_request=codecs.request_decoder(CancelTaskRequest),
        encode_result=codecs.encode_model, decode_result=decode_task,
        limits=Limits.TASK_ID, routes=(Route("POST", ("tasks", "{id}:cancel"), body=True),),
        authorize=AuthorizeOperation.CANCEL,
    )
    SUBSCRIBE_TO_TASK: Final[OperationSpec[SubscribeToTaskRequest, StreamEvent]] = (
        OperationSpec(
            name="SubscribeToTask", name_0_3="tasks/resubscribe",
            request=SubscribeToTaskRequest, results=_EVENTS,
            decode_request=codecs.request_decoder(SubscribeToTaskRequest),
            encode_result=codecs.encode_event, decode_result=decode_stream_event,
            limits=Limits.TASK_ID,
            # The spec's table says POST, the proto's annotation GET: both are served.
            routes=(Route("POST", ("tasks", "{id}:subscribe"), body=True),
                    Route("GET", ("tasks", "{id}:subscribe"))),
            streams=True, needs=Capability.STREAMING,
            authorize=AuthorizeOperation.RESUBSCRIBE, repeatable=True,
        )
    )
    GET_TASK: Final[OperationSpec[GetTaskRequest, Task]] = OperationSpec(
        name="GetTask", name_0_3="tasks/get",
        request=GetTaskRequest, results=(Task,),
        decode_request=codecs.request_decoder(GetTaskRequest),
        encode_result=codecs.encode_model, decode_result=decode_task,
        limits=Limits.TASK_ID,
        # currentGeneration: the dev-1.1 long-poll (served only with the generation preview).
        routes=(Route("GET", ("tasks", "{id}"),
                      query={"historyLength": _I, "currentGeneration": _I}),),
        authorize=AuthorizeOperation.GET, repeatable=True,
    )
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG: Final[
        OperationSpec[TaskPushNotificationConfig, TaskPushNotificationConfig]
    ] = OperationSpec(
        name="CreateTaskPushNotificationConfig", name_0_3="tasks/pushNotificationConfig/set",
        request=TaskPushNotificationConfig, results=(TaskPushNotificationConfig,),
        decode_request=codecs.request_decoder(TaskPushNotificationConfig),
        encode_result=codecs.encode_model, decode_result=decode_task_push_config,
        limits=Limits.PUSH_CONFIG, routes=(Route("POST", _PUSH, body=True),),
        needs=Capability.PUSH_NOTIFICATIONS, authorize=AuthorizeOperation.PUSH_SET,
    )
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS: Final[
        OperationSpec[ListTaskPushNotificationConfigsRequest,
                      ListTaskPushNotificationConfigsResponse]
    ] = OperationSpec(
        name="ListTaskPushNotificationConfigs", name_0_3="tasks/pushNotificationConfig/list",
        request=ListTaskPushNotificationConfigsRequest,
        results=(ListTaskPushNotificationConfigsResponse,),
        decode_request=codecs.request_decoder(ListTaskPushNotificationConfigsRequest),
        encode_result=codecs.encode_push_configs,
        decode_result=decode_list_push_configs_response,
        limits=Limits.LIST_PUSH_CONFIGS,
        routes=(Route("GET", _PUSH, query={"pageSize": _I, "pageToken": _S}),),
        needs=Capability.PUSH_NOTIFICATIONS, authorize=AuthorizeOperation.PUSH_LIST,
        repeatable=True,
    )
    GET_TASK_PUSH_NOTIFICATION_CONFIG: Final[
        OperationSpec[GetTaskPushNotificationConfigRequest, TaskPushNotificationConfig]
    ] = OperationSpec(
        name="GetTaskPushNotificationConfig", name_0_3="tasks/pushNotificationConfig/get",
        request=GetTaskPushNotificationConfigRequest, results=(TaskPushNotificationConfig,),
        decode_request=codecs.decode_get_push_request,
        encode_result=codecs.encode_model, decode_result=decode_task_push_config,
        limits=Limits.PUSH_CONFIG_TARGET, routes=(Route("GET", (*_PUSH, "{id}")),),
        needs=Capability.PUSH_NOTIFICATIONS, authorize=AuthorizeOperation.PUSH_GET,
        repeatable=True,
    )
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG: Final[
        OperationSpec[DeleteTaskPushNotificationConfigRequest, None]
    ] = OperationSpec(
        name="DeleteTaskPushNotificationConfig",
        name_0_3="tasks/pushNotificationConfig/delete",
        request=DeleteTaskPushNotificationConfigRequest, results=(type(None),),
        decode_request=codecs.decode_delete_request,
        encode_result=codecs.encode_null, decode_result=codecs.decode_empty,
        limits=Limits.PUSH_CONFIG_TARGET, routes=(Route("DELETE", (*_PUSH, "{id}")),),
        needs=Capability.PUSH_NOTIFICATIONS, authorize=AuthorizeOperation.PUSH_DELETE,
        repeatable=True,
    )


def _variable(template: str) -> tuple[str, str]:
    """``{id}:cancel`` -> ("id", ":cancel"); ``{taskId}`` -> ("taskId", "")."""
    name, _, verb = template[1:].partition("}")
    return name, verb


class OperationTable:
    """The operations one endpoint serves, and the routers derived from their entries."""

    def __init__(self, operations: Iterable[AnyOperation]) -> None:
        self._operations = tuple(operations)
        methods: dict[str, AnyOperation] = {}
        for op in self._operations:
            for name in dict.fromkeys((op.name, op.method_0_3)):
                if name in methods:
                    raise ValueError(f"two operations are named {name!r}")
                methods[name] = op
        self._methods: Mapping[str, AnyOperation] = methods
        patterns: dict[tuple[str, ...], dict[str, tuple[AnyOperation, Route]]] = {}
        for op in self._operations:
            for route in op.routes:
                by_method = patterns.setdefault(route.pattern, {})
                if route.method in by_method:
                    raise ValueError(f"two operations at {route.method} {route.pattern}")
                by_method[route.method] = (op, route)
        #: HTTP+JSON: pattern -> method -> (operation, route), in the entries' order. A
        #: request tries every pattern un-prefixed first, then below one tenant segment.
        self.patterns: Mapping[
            tuple[str, ...], Mapping[str, tuple[AnyOperation, Route]]] = patterns
        #: The custom methods (``:cancel``…): a plain path variable never ends in one.
        self.verbs: tuple[str, ...] = tuple(sorted(
            {_variable(t)[1] for p in patterns for t in p if t.startswith("{")} - {""}))

    def __iter__(self) -> Iterator[AnyOperation]:
        return iter(self._operations)

    def __len__(self) -> int:
        return len(self._operations)

    def __contains__(self, op: object) -> bool:
        return op in self._operations

    def with_operation(self, op: AnyOperation) -> OperationTable:
        """This table and one more entry (its names and routes must be new)."""
        return OperationTable((*self._operations, op))

    def named(self, method: str) -> AnyOperation | None:
        """The operation a JSON-RPC method names, in either dialect; None when none does."""
        return self._methods.get(method)

    def for_method(self, method: str) -> AnyOperation:
        """As :meth:`named`; an unknown name raises MethodNotFoundError."""
        op = self._methods.get(method)
        if op is None:
            raise MethodNotFoundError(data={"method": method})
        return op


#: Every A2A operation, in HTTP+JSON matching order (custom-verb paths before ``tasks/{id}``).
OPERATIONS: Final = OperationTable((
    Operation.SEND_MESSAGE,
    Operation.SEND_STREAMING_MESSAGE,
    Operation.GET_EXTENDED_AGENT_CARD,
    Operation.LIST_TASKS,
    Operation.CANCEL_TASK,
    Operation.SUBSCRIBE_TO_TASK,
    Operation.GET_TASK,
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
))


def check_capability(
    op: AnyOperation, capabilities: AgentCapabilities, version: str
) -> None:
    """Refuse ``op`` when the card does not declare the capability its entry needs."""
    need = op.needs
    if need is None:
        return
    if need is Capability.STREAMING and not capabilities.streaming:
        raise UnsupportedOperationError("Streaming is not supported by this agent")
    if need is Capability.PUSH_NOTIFICATIONS and not capabilities.push_notifications:
        raise PushNotificationNotSupportedError()
    if need is Capability.EXTENDED_AGENT_CARD and not capabilities.extended_agent_card:
        if version == V0_3:
            raise ExtendedAgentCardNotConfiguredError()
        raise UnsupportedOperationError("This agent declares no extended agent card")
