"""The shape of an operation's entry, and the table of entries (:mod:`a2a_core.optable`)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ._versioning import V0_3
from .auth import AuthorizeOperation
from .errors import (
    ExtendedAgentCardNotConfiguredError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
from .models import AgentCapabilities
from .wire import _codecs as codecs
from .wire._limits import Limits

__all__ = [
    "AnyOperation",
    "Capability",
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
    encode_result: codecs.ResultEncoder[Res]
    decode_result: codecs.ResultDecoder[Res]
    #: The caps the params are held to (None: derived from the request model's fields,
    #: :func:`a2a_core.wire._derived.derived_limits`).
    limits: Limits | None = None
    #: A one-pass decoder for the common shape of the params (None: none), tried first.
    quick_decode: codecs.QuickDecoder[Req] | None = None
    #: HTTP+JSON routes; where there are two methods, the first is the one the client sends.
    routes: tuple[Route, ...] = ()
    #: The answer is an SSE stream (stream admission applies).
    streams: bool = False
    #: The card capability the agent must declare (None: none).
    needs: Capability | None = None
    #: What ``authorize_task`` is asked about the task the call names (None: it names
    #: none). A message continuing a task is asked GET: the answer holds the task. A kind
    #: of access none of :class:`AuthorizeOperation` names is a string of the entry's own
    #: (a callback that does not know it denies).
    authorize: AuthorizeOperation | str | None = None
    #: Only an authenticated caller may call it, when the deployment has auth (an anonymous
    #: one gets the deployment's challenge, before the operation runs).
    authenticated: bool = False
    #: A repeat cannot harm: the client sends it once more when the server dropped it
    #: unanswered (a send only when its message names no task).
    repeatable: bool = False
    #: The params may be omitted (read as ``{}``).
    params_optional: bool = False
    #: A lone ``id`` member names the task (else ``taskId`` or ``message.taskId`` does):
    #: the task-id requests, and 0.3's push-config Get/List/Delete (1.0 sends ``taskId``
    #: beside a config ``id``).
    task_in_id: bool = False
    #: The gRPC service whose rpc named :attr:`name` carries it: the A2A proto's, or, for a
    #: deployment's own operation, one of its own proto (:func:`a2a_core._grpc.add_proto`).
    grpc_service: str = "lf.a2a.v1.A2AService"
    #: How the params become ``request`` where its model's tolerant decoder will not do
    #: (None: that decoder, :func:`~a2a_core.wire._codecs.request_decoder`).
    params_decoder: codecs.RequestDecoder[Req] | None = None
    #: What decodes the params: ``params_decoder``, else the request model's own decoder.
    decode_request: codecs.RequestDecoder[Req] = field(init=False)

    def __post_init__(self) -> None:
        decoder = self.params_decoder or codecs.request_decoder(self.request)
        object.__setattr__(self, "decode_request", decoder)

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


def variable(template: str) -> tuple[str, str]:
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
            {variable(t)[1] for p in patterns for t in p if t.startswith("{")} - {""}))

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


def check_capability(op: AnyOperation, capabilities: AgentCapabilities, version: str) -> None:
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
