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
  :func:`a2a_core._rest.route`) and the client's requests
  (:func:`a2a_core._rest.request_target` reads :attr:`OperationSpec.routes`);
* the codecs (:func:`a2a_core.wire.decode_params`, ``encode_result``,
  ``decode_result``: generic in the entry's request and result types, so the
  client's calls are typed without casts; a model with no hand-written codec gets
  one derived from its fields, :mod:`a2a_core.wire._derived`) and the task-id check;
* the limits (the entry's :class:`Limits` key, or none: derived from the request
  model), the capability gate (:func:`check_capability`), the authorization kind
  (an :class:`~a2a_core.auth.AuthorizeOperation`, or a string of the entry's own),
  stream admission and retry safety;
* the gRPC method (:func:`a2a_core._grpc.grpc_method`: the rpc of the entry's name in
  the service it names, ``lf.a2a.v1.A2AService`` unless it is a deployment's own).

Adding an operation is its model, one entry in :class:`Operation` below, its
handler in :mod:`a2a_core._operations`, and the service, runtime and client methods
it needs (docs/architecture.md, "Adding an operation"); a deployment can add one of
its own with :meth:`a2a_core._server.Dispatcher.add_operation`.

HTTP+JSON routes follow the proto's ``google.api.http`` paths, each also below a
``/{tenant}`` prefix. A pattern segment is a literal, a path variable ``{field}``
or a variable with a custom method (``{id}:cancel``); ``field`` is the member's
name in the 1.0 JSON-RPC params. Path variables always come from the path; a
``body`` route takes everything else from the JSON body; GET and DELETE routes
from camelCase query parameters, typed by the route's ``query``.
"""

from __future__ import annotations

from typing import Final

from . import models as m
from ._opspec import AnyOperation as AnyOperation
from ._opspec import Capability as Capability
from ._opspec import OperationSpec as OperationSpec
from ._opspec import OperationTable as OperationTable
from ._opspec import QueryKind as QueryKind
from ._opspec import Route as Route
from ._opspec import check_capability as check_capability
from .auth import AuthorizeOperation
from .wire import _codecs as codecs
from .wire._decode import decode_stream_event, decode_task, decode_task_push_config
from .wire._decode_requests import decode_list_push_configs_response, decode_list_tasks_response
from .wire._limits import Limits as Limits
from .wire._quick import quick_send_request

__all__ = [
    "OPERATIONS",
    "AnyOperation",
    "Capability",
    "Limits",
    "Operation",
    "OperationSpec",
    "OperationTable",
    "QueryKind",
    "Route",
    "check_capability",
]

_S, _I, _B = QueryKind.STRING, QueryKind.INTEGER, QueryKind.BOOLEAN
_PUSH = ("tasks", "{taskId}", "pushNotificationConfigs")
_EVENTS = (m.Task, m.Message, m.TaskStatusUpdateEvent, m.TaskArtifactUpdateEvent)


class Operation:
    """The A2A operations, named as in the 1.0 spec: each attribute is its entry, and
    :data:`OPERATIONS` serves them all in this order."""

    SEND_MESSAGE: Final[OperationSpec[m.SendMessageRequest, m.SendResult]] = OperationSpec(
        name="SendMessage", name_0_3="message/send",
        request=m.SendMessageRequest, results=(m.Task, m.Message),
        quick_decode=quick_send_request,
        encode_result=codecs.encode_event, decode_result=codecs.decode_send_result,
        limits=Limits.SEND, routes=(Route("POST", ("message:send",), body=True),),
        authorize=AuthorizeOperation.GET, repeatable=True,
    )
    SEND_STREAMING_MESSAGE: Final[OperationSpec[m.SendMessageRequest, m.StreamEvent]] = (
        OperationSpec(
            name="SendStreamingMessage", name_0_3="message/stream",
            request=m.SendMessageRequest, results=_EVENTS,
            quick_decode=quick_send_request,
            encode_result=codecs.encode_event, decode_result=decode_stream_event,
            limits=Limits.SEND, routes=(Route("POST", ("message:stream",), body=True),),
            streams=True, needs=Capability.STREAMING,
            authorize=AuthorizeOperation.GET, repeatable=True,
        )
    )
    GET_EXTENDED_AGENT_CARD: Final[OperationSpec[m.GetExtendedAgentCardRequest, m.AgentCard]] = (
        OperationSpec(
            name="GetExtendedAgentCard", name_0_3="agent/getAuthenticatedExtendedCard",
            request=m.GetExtendedAgentCardRequest, results=(m.AgentCard,),
            encode_result=codecs.encode_model, decode_result=codecs.decode_card_result,
            limits=Limits.TENANT_ONLY, routes=(Route("GET", ("extendedAgentCard",)),),
            needs=Capability.EXTENDED_AGENT_CARD, authenticated=True, repeatable=True,
            params_optional=True,
        )
    )
    LIST_TASKS: Final[OperationSpec[m.ListTasksRequest, m.ListTasksResponse]] = OperationSpec(
        # tasks/list is not a 0.3 JSON-RPC method (REST/gRPC only there); accepted as an alias.
        name="ListTasks", name_0_3="tasks/list",
        request=m.ListTasksRequest, results=(m.ListTasksResponse,),
        encode_result=codecs.encode_model, decode_result=decode_list_tasks_response,
        limits=Limits.LIST_TASKS,
        routes=(Route("GET", ("tasks",), query={
            "contextId": _S, "status": QueryKind.TASK_STATE, "pageSize": _I, "pageToken": _S,
            "historyLength": _I, "statusTimestampAfter": _S, "includeArtifacts": _B}),),
        authorize=AuthorizeOperation.LIST, repeatable=True,
    )
    CANCEL_TASK: Final[OperationSpec[m.CancelTaskRequest, m.Task]] = OperationSpec(
        name="CancelTask", name_0_3="tasks/cancel",
        request=m.CancelTaskRequest, results=(m.Task,),
        encode_result=codecs.encode_model, decode_result=decode_task,
        limits=Limits.TASK_ID, routes=(Route("POST", ("tasks", "{id}:cancel"), body=True),),
        authorize=AuthorizeOperation.CANCEL, task_in_id=True,
    )
    SUBSCRIBE_TO_TASK: Final[OperationSpec[m.SubscribeToTaskRequest, m.StreamEvent]] = (
        OperationSpec(
            name="SubscribeToTask", name_0_3="tasks/resubscribe",
            request=m.SubscribeToTaskRequest, results=_EVENTS,
            encode_result=codecs.encode_event, decode_result=decode_stream_event,
            limits=Limits.TASK_ID,
            # The spec's table says POST, the proto's annotation GET: both are served.
            routes=(Route("POST", ("tasks", "{id}:subscribe"), body=True),
                    Route("GET", ("tasks", "{id}:subscribe"))),
            streams=True, needs=Capability.STREAMING,
            authorize=AuthorizeOperation.RESUBSCRIBE, repeatable=True, task_in_id=True,
        )
    )
    GET_TASK: Final[OperationSpec[m.GetTaskRequest, m.Task]] = OperationSpec(
        name="GetTask", name_0_3="tasks/get",
        request=m.GetTaskRequest, results=(m.Task,),
        encode_result=codecs.encode_model, decode_result=decode_task,
        limits=Limits.TASK_ID,
        # currentGeneration: the dev-1.1 long-poll (served only with the generation preview).
        routes=(Route("GET", ("tasks", "{id}"),
                      query={"historyLength": _I, "currentGeneration": _I}),),
        authorize=AuthorizeOperation.GET, repeatable=True, task_in_id=True,
    )
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG: Final[
        OperationSpec[m.TaskPushNotificationConfig, m.TaskPushNotificationConfig]
    ] = OperationSpec(
        name="CreateTaskPushNotificationConfig", name_0_3="tasks/pushNotificationConfig/set",
        request=m.TaskPushNotificationConfig, results=(m.TaskPushNotificationConfig,),
        encode_result=codecs.encode_model, decode_result=decode_task_push_config,
        limits=Limits.PUSH_CONFIG, routes=(Route("POST", _PUSH, body=True),),
        needs=Capability.PUSH_NOTIFICATIONS, authorize=AuthorizeOperation.PUSH_SET,
    )
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS: Final[
        OperationSpec[m.ListTaskPushNotificationConfigsRequest,
                      m.ListTaskPushNotificationConfigsResponse]
    ] = OperationSpec(
        name="ListTaskPushNotificationConfigs", name_0_3="tasks/pushNotificationConfig/list",
        request=m.ListTaskPushNotificationConfigsRequest,
        results=(m.ListTaskPushNotificationConfigsResponse,),
        encode_result=codecs.encode_push_configs,
        decode_result=decode_list_push_configs_response,
        limits=Limits.LIST_PUSH_CONFIGS,
        routes=(Route("GET", _PUSH, query={"pageSize": _I, "pageToken": _S}),),
        needs=Capability.PUSH_NOTIFICATIONS, authorize=AuthorizeOperation.PUSH_LIST,
        repeatable=True, task_in_id=True,
    )
    GET_TASK_PUSH_NOTIFICATION_CONFIG: Final[
        OperationSpec[m.GetTaskPushNotificationConfigRequest, m.TaskPushNotificationConfig]
    ] = OperationSpec(
        name="GetTaskPushNotificationConfig", name_0_3="tasks/pushNotificationConfig/get",
        request=m.GetTaskPushNotificationConfigRequest, results=(m.TaskPushNotificationConfig,),
        params_decoder=codecs.decode_get_push_request,
        encode_result=codecs.encode_model, decode_result=decode_task_push_config,
        limits=Limits.PUSH_CONFIG_TARGET, routes=(Route("GET", (*_PUSH, "{id}")),),
        needs=Capability.PUSH_NOTIFICATIONS, authorize=AuthorizeOperation.PUSH_GET,
        repeatable=True, task_in_id=True,
    )
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG: Final[
        OperationSpec[m.DeleteTaskPushNotificationConfigRequest, None]
    ] = OperationSpec(
        name="DeleteTaskPushNotificationConfig",
        name_0_3="tasks/pushNotificationConfig/delete",
        request=m.DeleteTaskPushNotificationConfigRequest, results=(type(None),),
        params_decoder=codecs.decode_delete_request,
        encode_result=codecs.encode_null, decode_result=codecs.decode_empty,
        limits=Limits.PUSH_CONFIG_TARGET, routes=(Route("DELETE", (*_PUSH, "{id}")),),
        needs=Capability.PUSH_NOTIFICATIONS, authorize=AuthorizeOperation.PUSH_DELETE,
        repeatable=True, task_in_id=True,
    )


#: Every entry of :class:`Operation`, in the order written there (HTTP+JSON matching
#: order: custom-verb paths before ``tasks/{id}``).
OPERATIONS: Final = OperationTable(
    entry for entry in vars(Operation).values() if isinstance(entry, OperationSpec))


