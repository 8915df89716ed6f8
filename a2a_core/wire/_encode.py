"""One set of encoders for both versions, steered by a :class:`Dialect`.

Most models are spelled the same in 0.3 and 1.0 once three things are known:
whether objects carry a ``kind`` tag, which enum spellings to write, and which
part encoder to use. Those, and the few other switches below, are the
:class:`Dialect`; each version module (:mod:`.v0_3`, :mod:`.v1_0`) builds one
from these shared writers plus its own writers for the shapes that really
differ (parts, push configs, send configuration, some request params, errors).
A writer is ``(model, dialect) -> dict``: nested models it does not own go back
through :meth:`Dialect.encode`, so a version's own spelling is used all the way down.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._jsonvalue import JSONObject
from ..errors import RPCError
from ..models import (
    Artifact,
    CancelTaskRequest,
    DataPart,
    FilePart,
    GetExtendedAgentCardRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from ._derived import derived_writer
from ._enums import STATE_1_0
from ._json import compact, format_timestamp, optional_timestamp, struct

__all__ = [
    "Writer",
    "Dialect",
    "SHARED_WRITERS",
    "writers",
    "encode_stream_event",
    "encode_part",
    "encode_message",
    "encode_artifact",
    "encode_status",
    "encode_task",
    "encode_status_update",
    "encode_artifact_update",
    "encode_task_id_params",
]

#: A model's encoder: (model, dialect) -> JSON object.
Writer = Callable[[Any, "Dialect"], JSONObject]


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """What one protocol version writes differently; the shared writers consult it."""

    version: str
    #: 0.3 tags messages, tasks, parts and events with ``kind``; 1.0 instead wraps a
    #: polymorphic result in a member named after its type (``{"task": …}``).
    tagged: bool
    #: 0.3 status updates carry a REQUIRED ``final``; in 1.0 the stream's end says it.
    final: bool
    #: 1.0 requests and push configs carry ``tenant``; 0.3 has no spelling for it.
    tenants: bool
    states: Mapping[TaskState, str]
    roles: Mapping[Role, str]
    #: the one model whose shape differs throughout (0.3 nests files; 1.0 is flat).
    part: Callable[[Part], JSONObject]
    #: the JSON-RPC ``error`` member (0.3 free-form ``data``; 1.0 ErrorInfo details).
    error: Callable[[RPCError], JSONObject]
    #: model type -> writer, for every model this version can encode.
    writers: Mapping[type, Writer]

    def encode(self, obj: object) -> JSONObject:
        """Any model (but the Agent Card) in this version's shape."""
        writer = self.writers.get(type(obj))
        if writer is None:  # a model without a writer of its own: one from its fields
            return derived_writer(type(obj))(obj, self)
        return writer(obj, self)

    def kind(self, name: str) -> dict[str, str]:
        """The ``kind`` member to splice in first: ``{"kind": name}`` in 0.3, nothing in 1.0."""
        return {"kind": name} if self.tagged else {}

    def tenant(self, tenant: str | None) -> str | None:
        """``tenant`` where the version has it; None (so omitted) where it has not."""
        return tenant if self.tenants else None


# -- content -----------------------------------------------------------------------------


def encode_part(part: Part, d: Dialect) -> JSONObject:
    """A part on its own (``encode(TextPart(…))``): the dialect's part encoder."""
    return d.part(part)


def encode_message(message: Message, d: Dialect) -> JSONObject:
    # Members are written one by one, unset ones skipped (what compact() drops), in the
    # order the other writers use: this and the task's writers run on every answer.
    out: JSONObject = {"kind": "message"} if d.tagged else {}
    out["messageId"] = message.message_id
    out["role"] = d.roles[message.role]
    out["parts"] = [d.part(p) for p in message.parts]
    if message.context_id is not None:
        out["contextId"] = message.context_id
    if message.task_id is not None:
        out["taskId"] = message.task_id
    if message.reference_task_ids:
        out["referenceTaskIds"] = list(message.reference_task_ids)
    if message.extensions:
        out["extensions"] = list(message.extensions)
    if message.metadata is not None:
        out["metadata"] = dict(message.metadata)
    return out


def encode_artifact(artifact: Artifact, d: Dialect) -> JSONObject:
    out: JSONObject = {
        "artifactId": artifact.artifact_id,
        "parts": [d.part(p) for p in artifact.parts],
    }
    if artifact.name is not None:
        out["name"] = artifact.name
    if artifact.description is not None:
        out["description"] = artifact.description
    if artifact.extensions:
        out["extensions"] = list(artifact.extensions)
    if artifact.metadata is not None:
        out["metadata"] = dict(artifact.metadata)
    return out


def int64(value: int | None) -> str | None:
    """ProtoJSON spells an int64 as a decimal string (the dev-1.1 generation fields)."""
    return None if value is None else str(value)


def encode_status(status: TaskStatus, d: Dialect) -> JSONObject:
    out: JSONObject = {"state": d.states[status.state]}
    if status.message is not None:
        out["message"] = encode_message(status.message, d)
    if status.timestamp is not None:
        out["timestamp"] = format_timestamp(status.timestamp)
    return out


def encode_task(task: Task, d: Dialect) -> JSONObject:
    """``contextId`` is always sent, even empty (servers always set it)."""
    out: JSONObject = {"kind": "task"} if d.tagged else {}
    out["id"] = task.id
    out["contextId"] = task.context_id
    out["status"] = encode_status(task.status, d)
    if task.artifacts:
        out["artifacts"] = [encode_artifact(a, d) for a in task.artifacts]
    if task.history:
        out["history"] = [encode_message(m, d) for m in task.history]
    if task.metadata is not None:
        out["metadata"] = dict(task.metadata)
    if task.generation is not None:
        out["generation"] = str(task.generation)
    return out


def encode_status_update(event: TaskStatusUpdateEvent, d: Dialect) -> JSONObject:
    """``final`` is REQUIRED in 0.3 (always sent) and absent from 1.0."""
    out: JSONObject = {"kind": "status-update"} if d.tagged else {}
    out["taskId"] = event.task_id
    out["contextId"] = event.context_id
    out["status"] = encode_status(event.status, d)
    if d.final:
        out["final"] = event.final
    if event.metadata is not None:
        out["metadata"] = dict(event.metadata)
    if event.generation is not None:
        out["generation"] = str(event.generation)
    return out


def encode_artifact_update(event: TaskArtifactUpdateEvent, d: Dialect) -> JSONObject:
    out: JSONObject = {"kind": "artifact-update"} if d.tagged else {}
    out["taskId"] = event.task_id
    out["contextId"] = event.context_id
    out["artifact"] = encode_artifact(event.artifact, d)
    if event.append:
        out["append"] = True
    if event.last_chunk:
        out["lastChunk"] = True
    if event.metadata is not None:
        out["metadata"] = dict(event.metadata)
    if event.generation is not None:
        out["generation"] = str(event.generation)
    return out


#: 1.0 StreamResponse / SendMessageResponse member of each event type.
_STREAM_MEMBERS: Mapping[type, str] = {
    Task: "task",
    Message: "message",
    TaskStatusUpdateEvent: "statusUpdate",
    TaskArtifactUpdateEvent: "artifactUpdate",
}


def encode_stream_event(event: StreamEvent, d: Dialect) -> JSONObject:
    """0.3: the bare object, told apart by its ``kind``; 1.0: the member name tells."""
    encoded = d.encode(event)
    return encoded if d.tagged else {_STREAM_MEMBERS[type(event)]: encoded}


# -- requests and responses --------------------------------------------------------------


def encode_send_request(request: SendMessageRequest, d: Dialect) -> JSONObject:
    config = request.configuration
    return {
        "message": encode_message(request.message, d),
        **compact(
            {
                "configuration": None if config is None else d.encode(config),
                "metadata": struct(request.metadata),
                "tenant": d.tenant(request.tenant),
            }
        ),
    }


def encode_task_id_params(
    request: CancelTaskRequest | SubscribeToTaskRequest, d: Dialect
) -> JSONObject:
    """CancelTask in both versions, and 0.3's SubscribeToTask (1.0's has no metadata)."""
    return {
        "id": request.id,
        **compact({"metadata": struct(request.metadata), "tenant": d.tenant(request.tenant)}),
    }


def encode_list_tasks(request: ListTasksRequest, d: Dialect) -> JSONObject:
    """1.0 names and ``TASK_STATE_*`` status in both versions: ListTasks is not a 0.3
    JSON-RPC method, so servers offering its ``tasks/list`` alias read the 1.0 params."""
    return compact(
        {
            "tenant": d.tenant(request.tenant),
            "contextId": request.context_id,
            "status": None if request.status is None else STATE_1_0[request.status],
            "pageSize": request.page_size,
            "pageToken": request.page_token,
            "historyLength": request.history_length,
            "statusTimestampAfter": optional_timestamp(request.status_timestamp_after),
            "includeArtifacts": request.include_artifacts or None,
        }
    )


def encode_list_tasks_response(response: ListTasksResponse, d: Dialect) -> JSONObject:
    """All four members are REQUIRED: ``nextPageToken`` is "" on the last page."""
    return {
        "tasks": [encode_task(t, d) for t in response.tasks],
        "nextPageToken": response.next_page_token,
        "pageSize": response.page_size,
        "totalSize": response.total_size,
    }


def encode_list_push_configs_response(
    response: ListTaskPushNotificationConfigsResponse, d: Dialect
) -> JSONObject:
    """1.0 member names; the configs inside in the dialect's own shape.

    (As a 0.3 *result* this is a bare array instead: see ``v0_3``.)
    """
    return {
        "configs": [d.encode(c) for c in response.configs],
        "nextPageToken": response.next_page_token,
    }


def encode_get_extended_card(request: GetExtendedAgentCardRequest, d: Dialect) -> JSONObject:
    """0.3 ``agent/getAuthenticatedExtendedCard`` takes no params at all."""
    return compact({"tenant": d.tenant(request.tenant)})


#: The writers both versions share; each version adds its own (see the module docstring).
SHARED_WRITERS: Mapping[type, Writer] = {
    TextPart: encode_part,
    FilePart: encode_part,
    DataPart: encode_part,
    Message: encode_message,
    Artifact: encode_artifact,
    TaskStatus: encode_status,
    Task: encode_task,
    TaskStatusUpdateEvent: encode_status_update,
    TaskArtifactUpdateEvent: encode_artifact_update,
    SendMessageRequest: encode_send_request,
    CancelTaskRequest: encode_task_id_params,
    ListTasksRequest: encode_list_tasks,
    ListTasksResponse: encode_list_tasks_response,
    ListTaskPushNotificationConfigsResponse: encode_list_push_configs_response,
    GetExtendedAgentCardRequest: encode_get_extended_card,
}


def writers(own: Mapping[type, Callable[[Any], JSONObject]]) -> dict[type, Writer]:
    """The shared writers plus a version's own encoders (which need nothing from a dialect)."""
    table = dict(SHARED_WRITERS)
    table.update({cls: _dialect_free(encoder) for cls, encoder in own.items()})
    return table


def _dialect_free(encoder: Callable[[Any], JSONObject]) -> Writer:
    return lambda obj, d: encoder(obj)
