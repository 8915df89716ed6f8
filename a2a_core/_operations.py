"""The A2A operations: one handler each, the same for every binding.

Each entry of :mod:`a2a_core.optable` has its handler here, marked with
``@_handles(entry)`` (the four push-config entries share one, named in
``_PUSH_CONFIG_ACTS``); :class:`Operations` refuses a table with an entry it has
no handler for, and :meth:`Operations.add` takes a deployment's own.

A handler takes the operation's params in the negotiated version's JSON-RPC
shape (the HTTP+JSON binding builds the same shape from its path, query and
body), the :class:`~a2a_core._service.CallContext` and the activated
extensions, and does four things in order: decode the params into the
request model, authorize the task it names, call the
:class:`~a2a_core._service.A2AService`, and shape the answer (history
trimmed, artifacts stripped, extensions applied) in the wire form of the
call's version. The answer is a :class:`Result` or, for the streaming
operations, :class:`Events` the binding frames as SSE (or gRPC messages).

A task that is missing and one the caller may not see give the same
-32001, byte for byte.

The extended card is served like the public one (``card_document``: endpoints,
extension declarations, signature over the document the caller's version
receives).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, NoReturn, Protocol, TypeVar

from . import _generations as generations
from . import wire
from ._generations import GenerationWaiter
from ._jsonvalue import JSONObject, JSONValue
from ._service import A2AService, CallContext, StreamItem
from ._streaming import started
from ._tasks import strip_artifacts, trim_history
from .auth import AuthorizationContext, AuthorizeCallback, TaskAuthorizer
from .errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError
from .extensions import ActivatedExtensions
from .models import (
    AgentCard,
    ListTasksRequest,
    ListTasksResponse,
    Role,
    SendMessageRequest,
    Task,
)
from .optable import OPERATIONS, AnyOperation, Operation, OperationSpec, OperationTable

if TYPE_CHECKING:
    from ._calls import StreamAdmission

__all__ = ["Answer", "Events", "Handler", "Operations", "Params", "Result"]


@dataclass(frozen=True, slots=True)
class Result:
    """A handler's answer: the result in the call version's wire form (JSON-ready)."""

    value: JSONValue


@dataclass(frozen=True, slots=True)
class Events:
    """A streaming handler's answer: the items the binding frames as SSE events (or gRPC
    messages). (An agent's streamed reply is :class:`a2a_wsgi.Stream`, another thing.)"""

    items: Iterator[StreamItem]


#: Further pages a ListTasks call may read to refill a page authorize_task thinned.
_REFILLS = 10

#: What every handler returns. (An agent's outcome is :data:`a2a_wsgi.Outcome`.)
Answer = Result | Events
#: A handler's params: the JSON-RPC ``params`` object (or the one built from an HTTP+JSON call).
Params = Mapping[str, JSONValue]
#: An operation's handler: decode, authorize, act, shape (:meth:`Operations.add`).
Handler = Callable[[Params, CallContext, ActivatedExtensions], Answer]
#: A built-in handler: a method of :class:`Operations`.
_Method = Callable[["Operations", Params, CallContext, ActivatedExtensions], Answer]
#: entry -> its built-in handler, filled in by :func:`_handles` as the class is defined.
_BUILT_IN: dict[AnyOperation, _Method] = {}


def _handles(op: AnyOperation) -> Callable[[_Method], _Method]:
    """Mark a method of :class:`Operations` as the handler of ``op``."""

    def mark(method: _Method) -> _Method:
        _BUILT_IN[op] = method
        return method

    return mark


class _TaskScoped(Protocol):
    """A request that names one task (every push-config request)."""

    @property
    def task_id(self) -> str: ...


_TaskScopedT = TypeVar("_TaskScopedT", bound=_TaskScoped)
_ResultT = TypeVar("_ResultT")


#: How a card is served: (card, base URL, encoder) -> the signed document
#: (:meth:`a2a_core._card_endpoint.CardEndpoint.document`).
CardDocument = Callable[[AgentCard, "str | None", Callable[[AgentCard], JSONObject]], JSONObject]


class Operations:
    """The handlers of one service's operations: :meth:`run` picks the entry's handler."""

    def __init__(
        self,
        service: A2AService,
        *,
        card_document: CardDocument,
        authorize_task: AuthorizeCallback | None = None,
        max_parts: int,
        hold_admission: StreamAdmission | None = None,
        table: OperationTable = OPERATIONS,
    ) -> None:
        self.service = service
        #: A long-poll hold takes a stream place while held (it ties up a worker thread).
        self.hold_admission = hold_admission
        self.authorize_task = authorize_task
        self.max_parts = max_parts
        self._card_document = card_document
        #: Asks ``authorize_task`` whether the caller may act on a task, or see it in a list.
        self._authorizer = TaskAuthorizer(authorize_task)
        #: The operations served (the routers read it).
        self.table = table
        self._handlers: dict[AnyOperation, Handler] = {}
        for op in table:
            method = _BUILT_IN.get(op)
            if method is None:
                raise ValueError(f"no handler for {op.name}: add it with Operations.add")
            self._handlers[op] = partial(method, self)

    def add(self, op: AnyOperation, handler: Handler) -> None:
        """Serve one more operation, over both bindings: its entry and its handler.

        The entry's names and routes must be new; the handler is called as the
        built-in ones are, after the capability gate and stream admission.
        """
        self.table = self.table.with_operation(op)
        self._handlers[op] = handler

    def run(self, operation: AnyOperation, params: Params, ctx: CallContext,
            activated: ActivatedExtensions) -> Answer:
        """Decode, authorize, act, shape; RPCError for anything the caller got wrong."""
        return self._handlers[operation](params, ctx, activated)

    # -- authorization -----------------------------------------------------------------

    def authorized_task(self, task_id: str, op: AnyOperation, ctx: CallContext) -> Task:
        """Fetch then authorize (as ``op``'s entry says), for any handler, built-in or added:
        a denied task is indistinguishable from a missing one.

        Both become the same :func:`_task_not_found` error, whatever message the
        service or the plain denial used, so the answer cannot tell them apart.
        An error the callback chose itself (another message or data) is kept.
        """
        operation = op.authorize
        if operation is None:
            raise TypeError(f"{op.name} names no task to authorize")
        try:
            task = self.service.get_task(task_id, ctx)
        except TaskNotFoundError:
            raise _task_not_found(task_id) from None
        try:
            self._authorizer.authorize(operation, task, self._auth_context(ctx))
        except TaskNotFoundError as err:
            if err.message == TaskNotFoundError.default_message and err.data is None:
                raise _task_not_found(task_id) from err
            raise
        return task

    def _auth_context(self, ctx: CallContext) -> AuthorizationContext:
        return AuthorizationContext(
            metadata=ctx.metadata or {}, params=ctx.params, identity=ctx.identity
        )

    # -- operations --------------------------------------------------------------------

    def _send_request(self, operation: OperationSpec[SendMessageRequest, _ResultT],
                      params: Params, ctx: CallContext,
                      activated: ActivatedExtensions) -> SendMessageRequest:
        """A send's request: decoded, from a user, through the active extensions' hooks,
        and, when it continues a task, authorized on that task."""
        request = wire.decode_params(operation, params, ctx.version, max_parts=self.max_parts)
        if request.message.role is not Role.USER:
            # Agent-role messages are the agent's to write; a client sending one would put
            # words in the agent's mouth (in history, and in what the agent reads back).
            raise InvalidParamsError("params.message.role: a client sends user messages only")
        request = generations.ignored(request, ctx)
        if activated.pairs:  # (no extension active: no hook to run)
            message, _ = activated.apply_request(request.message, dict(params))
            request = replace(request, message=message)
        self._authorize_continuation(operation, request, ctx)
        return request

    def _authorize_continuation(
        self, op: AnyOperation, request: SendMessageRequest, ctx: CallContext
    ) -> None:
        """A message to an existing task is authorized as GET: the answer holds the task.

        Otherwise any caller could read (and steer) a task it was denied by
        naming its id in ``message.taskId``.
        """
        task_id = request.message.task_id
        if task_id is not None and self.authorize_task is not None:
            self.authorized_task(task_id, op, ctx)

    @_handles(Operation.SEND_MESSAGE)
    def _send_message(
        self, params: Params, ctx: CallContext, activated: ActivatedExtensions
    ) -> Answer:
        request = self._send_request(Operation.SEND_MESSAGE, params, ctx, activated)
        result = self.service.send_message(request, ctx)
        if isinstance(result, Task) and request.configuration is not None:
            result = trim_history(result, request.configuration.history_length)
        result = generations.hidden(result, ctx)
        if activated.pairs:
            result = activated.apply_response(result, dict(params))
        return Result(wire.encode_result(Operation.SEND_MESSAGE, result, ctx.version))

    @_handles(Operation.SEND_STREAMING_MESSAGE)
    def _send_streaming_message(
        self, params: Params, ctx: CallContext, activated: ActivatedExtensions
    ) -> Answer:
        request = self._send_request(Operation.SEND_STREAMING_MESSAGE, params, ctx, activated)
        items = self.service.send_streaming_message(request, ctx)
        return Events(generations.hidden_items(items, ctx))

    @_handles(Operation.GET_TASK)
    def _get_task(
        self, params: Params, ctx: CallContext, activated: ActivatedExtensions
    ) -> Answer:
        request = generations.ignored(wire.decode_params(Operation.GET_TASK, params, ctx.version),
                                      ctx)
        task = self.authorized_task(request.id, Operation.GET_TASK, ctx)
        waiter = self.service
        if request.current_generation is not None and isinstance(waiter, GenerationWaiter):
            # Long-poll: held until the generation moves (authorized above, before the hold).
            task = self._held(waiter, request.id, request.current_generation, ctx)
        task = trim_history(generations.hidden(task, ctx), request.history_length)
        return Result(wire.encode_result(Operation.GET_TASK, task, ctx.version))

    def _held(self, waiter: GenerationWaiter, task_id: str, generation: int,
              ctx: CallContext) -> Task:
        """A long-poll hold, in a stream place (none free: Busy, 503 with Retry-After)."""
        admission = self.hold_admission
        if admission is None:
            return waiter.task_after_generation(task_id, generation, ctx)
        if not admission.admit():
            from ._calls import Busy  # calls imports this module

            raise Busy(admission.retry_after)
        try:
            return waiter.task_after_generation(task_id, generation, ctx)
        finally:
            admission.release()

    @_handles(Operation.LIST_TASKS)
    def _list_tasks(
        self, params: Params, ctx: CallContext, activated: ActivatedExtensions
    ) -> Answer:
        request = wire.decode_params(Operation.LIST_TASKS, params, ctx.version)
        response = self.service.list_tasks(request, ctx)
        if self.authorize_task is not None:
            response = self._authorized_page(request, response, ctx)
        tasks = [trim_history(t, request.history_length) for t in response.tasks]
        if not request.include_artifacts:
            tasks = [strip_artifacts(t) for t in tasks]
        response = replace(response, tasks=tasks, page_size=len(tasks))
        response = generations.hidden(response, ctx)
        return Result(wire.encode_result(Operation.LIST_TASKS, response, ctx.version))

    def _authorized_page(
        self, request: ListTasksRequest, response: ListTasksResponse, ctx: CallContext
    ) -> ListTasksResponse:
        """The page with the tasks ``authorize_task`` hides left out, and refilled from the
        following pages (asking each time for just the places left, so the next-page token
        stays exact), so a denial does not make a short or empty page while more follow.

        The store's query already applies every filter of the request; the callback can
        only run after it. At most :data:`_REFILLS` more pages are read per call.
        ``totalSize`` is the store's count less the hidden tasks seen.
        """
        auth = self._auth_context(ctx)
        wanted = request.page_size if request.page_size is not None else len(response.tasks)
        visible = list(self._authorizer.filter(response.tasks, auth))
        hidden = len(response.tasks) - len(visible)
        for _ in range(_REFILLS):
            if len(visible) >= wanted or not response.next_page_token:
                break
            more = replace(request, page_token=response.next_page_token,
                           page_size=wanted - len(visible))
            response = self.service.list_tasks(more, ctx)
            shown = self._authorizer.filter(response.tasks, auth)
            hidden += len(response.tasks) - len(shown)
            visible += shown
        return replace(response, tasks=visible,
                       total_size=max(0, response.total_size - hidden))

    @_handles(Operation.CANCEL_TASK)
    def _cancel_task(
        self, params: Params, ctx: CallContext, activated: ActivatedExtensions
    ) -> Answer:
        request = wire.decode_params(Operation.CANCEL_TASK, params, ctx.version)
        read = self.authorized_task(request.id, Operation.CANCEL_TASK, ctx)
        task = self.service.cancel_task(request, replace(ctx, task=read))
        task = generations.hidden(task, ctx)
        return Result(wire.encode_result(Operation.CANCEL_TASK, task, ctx.version))

    @_handles(Operation.SUBSCRIBE_TO_TASK)
    def _subscribe_to_task(
        self, params: Params, ctx: CallContext, activated: ActivatedExtensions
    ) -> Answer:
        """Without ``Last-Event-ID`` the stream's first item (the task) is taken now."""
        request = wire.decode_params(Operation.SUBSCRIBE_TO_TASK, params, ctx.version)
        task = self.authorized_task(request.id, Operation.SUBSCRIBE_TO_TASK, ctx)
        if task.status.state.is_terminal and ctx.last_event_id is None:
            raise UnsupportedOperationError(
                f"Task {task.id} is in a terminal state ({task.status.state.value})"
            )
        items = self.service.subscribe_to_task(request, ctx)
        if ctx.last_event_id is None:
            items = started(items)
        return Events(generations.hidden_items(items, ctx))

    def _push_config(
        self,
        operation: OperationSpec[_TaskScopedT, _ResultT],
        params: Params,
        ctx: CallContext,
        act: Callable[[_TaskScopedT, CallContext], _ResultT],
    ) -> Answer:
        """A push-config call: decode, authorize as the entry says on the task named, act."""
        request = wire.decode_params(operation, params, ctx.version)
        read = self.authorized_task(request.task_id, operation, ctx)
        answer = act(request, replace(ctx, task=read))  # the service need not read it again
        return Result(wire.encode_result(operation, answer, ctx.version))

    @_handles(Operation.GET_EXTENDED_AGENT_CARD)
    def _get_extended_agent_card(
        self, params: Params, ctx: CallContext, activated: ActivatedExtensions
    ) -> Answer:
        operation = Operation.GET_EXTENDED_AGENT_CARD
        wire.decode_params(operation, params, ctx.version)
        version = ctx.version

        def encode(card: AgentCard) -> JSONObject:
            encoded: JSONObject = wire.encode_result(operation, card, version)
            return encoded

        card = self.service.extended_agent_card(ctx)
        return Result(self._card_document(card, ctx.base_url, encode))


#: A push-config entry's service method, looked up per call (``self.service`` may be
#: replaced after construction); each takes its own entry's request, so the request
#: parameter is the bottom type (``NoReturn``: ``typing.Never``'s spelling on Python 3.10).
_ServiceAct = Callable[[A2AService], Callable[[NoReturn, CallContext], object]]

#: push-config entry -> the service method that acts on it: one handler serves the four.
_PUSH_CONFIG_ACTS: Mapping[AnyOperation, _ServiceAct] = {
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: lambda service: service.create_push_config,
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: lambda service: service.get_push_config,
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: lambda service: service.list_push_configs,
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: lambda service: service.delete_push_config,
}


def _push_config_handler(op: AnyOperation, act: _ServiceAct) -> _Method:
    """The built-in handler of the push-config entry ``op``: :meth:`Operations._push_config`."""

    def handle(self: Operations, params: Params, ctx: CallContext,
               activated: ActivatedExtensions) -> Answer:
        return self._push_config(op, params, ctx, act(self.service))

    return handle


for _op, _act in _PUSH_CONFIG_ACTS.items():
    _BUILT_IN[_op] = _push_config_handler(_op, _act)


def _task_not_found(task_id: str) -> TaskNotFoundError:
    """The one -32001 for a task the caller cannot see (the runtime's wording)."""
    return TaskNotFoundError(f"Task {task_id} not found")
