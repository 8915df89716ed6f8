"""Server-side dispatch: one HTTP request in, one HTTP response out.

The :class:`Dispatcher` is the protocol state machine of the server. It
routes (card or JSON-RPC endpoint), negotiates the version and extensions,
decodes and validates params, asks ``authorize_task``, calls the typed
:class:`~a2a_core.service.A2AService` and encodes the answer in the
negotiated version: JSON, or an iterator of SSE chunks. It does no I/O of its
own, so the WSGI adapter and the runtime stay thin.

Order of checks for a JSON-RPC POST, and why:

0. the Content-Type: the three types a browser may POST cross-origin without
   a CORS preflight (``text/plain``, form encodings) are refused with 415, so a
   web page cannot drive an agent on localhost; anything else, or none, is read
   as JSON, as lenient clients and the official SDK expect;
1. body size (the adapter flags it) and envelope: nothing else can be read
   from a body that is not a JSON-RPC request;
2. version, then method, then extensions: an unsupported version is refused
   before anything runs; the request id is echoed whenever it was readable
   (the seed answers ``id: null`` here; echoing is what JSON-RPC asks for);
3. capability gates (streaming, push, extended card) before params, so a
   client learns "not supported" rather than "bad params";
4. params, then authorization, then the operation. A task that is missing
   and one the caller may not see give the same -32001, byte for byte.

Errors found before a stream starts are plain JSON-RPC error responses
(``application/json``, HTTP 200), the streaming methods included: unknown,
denied or terminal task, bad params, a disabled capability (REFERENCE §3.2; a
client can only type an error it gets as JSON). Once a stream has begun, an
error is its last SSE event. A service's stream may also fail lazily, when
first iterated: SubscribeToTask's first item is the task as it is now, which a
service has at hand, so it is taken before answering and its error is plain
JSON too. A send stream's first item waits for the agent (a new task is
stored only when the agent starts), and a resumed subscription's for the next
event, so those are not awaited: an error they raise before yielding anything
is the stream's only SSE event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from . import wire
from .auth import AuthorizationContext, AuthorizeOperation, TaskAuthorizer
from .card_endpoint import CardEndpoint
from .errors import (
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidRequestError,
    PushNotificationNotSupportedError,
    RPCError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from .extensions import (
    ActivatedExtensions,
    Extension,
    negotiate_extensions,
    parse_extensions_header,
)
from .http import HttpRequest, HttpResponse
from .jsonrpc import (
    RPCRequest,
    encode_error_response,
    encode_response,
    parse_request,
)
from .methods import PUSH_OPERATIONS, STREAMING_OPERATIONS, Operation, operation_for
from .models import (
    AgentCard,
    SendMessageRequest,
    Task,
)
from .service import A2AService, CallContext, StreamItem
from .streaming import SSE_HEADERS, sse_body, started
from .tasks import merge_metadata, strip_artifacts, trim_history, with_identity
from .versioning import SUPPORTED_VERSIONS, V0_3, V1_0, negotiate_version, normalize_version

__all__ = ["Dispatcher", "DEFAULT_AGENT_CARD_PATH", "DEFAULT_MAX_PARTS"]

logger = logging.getLogger("a2a_core.server")

DEFAULT_AGENT_CARD_PATH = ".well-known/agent-card.json"
#: Parts in one message; more is refused with -32602 before the agent runs.
DEFAULT_MAX_PARTS = 256
_JSON = "application/json"
#: Request media types a browser sends cross-origin without a CORS preflight ("simple
#: requests"); A2A requires application/json, so these can only be a confused or hostile peer.
_SIMPLE_REQUEST_TYPES = frozenset(
    {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}
)


@dataclass(frozen=True, slots=True)
class _Stream:
    """A handler's answer that is a stream rather than one result."""

    items: Iterator[StreamItem]


_Outcome = Any  # an encoded JSON result or a _Stream
_Handler = Callable[[Mapping[str, Any], "CallContext", "ActivatedExtensions"], _Outcome]


#: push-config operation -> (authorize_task operation, A2AService method).
_PUSH_CONFIG: Mapping[Operation, tuple[AuthorizeOperation, str]] = {
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        AuthorizeOperation.PUSH_SET,
        "create_push_config",
    ),
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (AuthorizeOperation.PUSH_GET, "get_push_config"),
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        AuthorizeOperation.PUSH_LIST,
        "list_push_configs",
    ),
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (
        AuthorizeOperation.PUSH_DELETE,
        "delete_push_config",
    ),
}


def _path(value: str | None | bool) -> str | None:
    if value is None or value is False:
        return None
    return str(value).strip("/")


class Dispatcher:
    """Answers card requests and JSON-RPC calls on behalf of an :class:`A2AService`."""

    def __init__(
        self,
        service: A2AService,
        *,
        last_modified: datetime,
        base_url: str | None = None,
        agent_card_path: str | None | bool = DEFAULT_AGENT_CARD_PATH,
        json_rpc_path: str = "",
        metadata: Mapping[str, Any] | None = None,
        authorize_task: Callable[..., Any] | None = None,
        extensions: Sequence[Extension] = (),
        versions: Sequence[str] = SUPPORTED_VERSIONS,
        max_json_depth: int = 64,
        max_parts: int = DEFAULT_MAX_PARTS,
    ) -> None:
        self.service = service
        self.base_url = base_url
        self.card_path = _path(agent_card_path)
        self.rpc_path = _path(json_rpc_path) or ""
        self.last_modified = last_modified
        self.metadata = dict(metadata or {})
        self.authorize_task = authorize_task
        self._authorizer = TaskAuthorizer(authorize_task)
        self.extensions = tuple(extensions)
        self.versions = tuple(normalize_version(v) for v in versions)
        self.max_json_depth = max_json_depth
        self.max_parts = max_parts
        self.card = CardEndpoint(
            service.agent_card,
            last_modified=last_modified,
            rpc_path=self.rpc_path,
            versions=self.versions,
            extensions=self.extensions,
        )
        self._handlers: dict[Operation, _Handler] = {
            Operation.SEND_MESSAGE: self._send_message,
            Operation.SEND_STREAMING_MESSAGE: self._send_streaming_message,
            Operation.GET_TASK: self._get_task,
            Operation.LIST_TASKS: self._list_tasks,
            Operation.CANCEL_TASK: self._cancel_task,
            Operation.SUBSCRIBE_TO_TASK: self._subscribe_to_task,
            **{operation: self._push_config_handler(operation) for operation in _PUSH_CONFIG},
            Operation.GET_EXTENDED_AGENT_CARD: self._get_extended_agent_card,
        }

    # -- routing -----------------------------------------------------------------------

    def handle(
        self,
        request: HttpRequest,
        *,
        base_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        identity: Any = None,
    ) -> HttpResponse:
        """Answer one request. ``base_url``/``metadata`` are per-request overrides."""
        path = request.path.strip("/")
        if self.card_path is not None and path == self.card_path:
            if request.method in ("GET", "HEAD"):
                return self.card_response(request, base_url=base_url)
            return _plain(405, "Method Not Allowed", [("Allow", "GET")])
        if path == self.rpc_path:
            if request.method == "POST":
                if _media_type(request.headers.get("Content-Type")) in _SIMPLE_REQUEST_TYPES:
                    return _plain(
                        415,
                        "Unsupported Media Type: send JSON-RPC as application/json",
                        [("Accept-Post", "application/json, application/a2a+json")],
                    )
                return self._rpc(request, base_url, metadata, identity)
            return _plain(405, "Method Not Allowed", [("Allow", "POST")])
        return _plain(404, "Not Found")

    # -- agent card --------------------------------------------------------------------

    def public_card(self, base_url: str | None = None) -> AgentCard:
        """The card as served: endpoints filled in, extension declarations merged."""
        return self.card.public_card(base_url or self.base_url)

    def card_response(self, request: HttpRequest, *, base_url: str | None = None) -> HttpResponse:
        """The card with its validators; 304 when the client's copy is current."""
        return self.card.response(request, base_url or self.base_url)

    # -- JSON-RPC ----------------------------------------------------------------------

    def _rpc(
        self,
        request: HttpRequest,
        base_url: str | None,
        metadata: Mapping[str, Any] | None,
        identity: Any,
    ) -> HttpResponse:
        version, version_error = self._negotiate_version(request)
        request_id: Any = None
        activated: ActivatedExtensions | None = None
        try:
            rpc = self._parse(request, version)
            request_id = rpc.id
            if version_error is not None:
                raise version_error
            operation = operation_for(rpc.method)
            params: Mapping[str, Any] = rpc.params or {}
            activated = self._activate(request, params, version)
            ctx = CallContext(
                version=version,
                metadata=self._merged_metadata(metadata, params, identity),
                extensions=dict(activated.by_uri),
                identity=identity,
                tenant=params.get("tenant") if isinstance(params.get("tenant"), str) else None,
                params=params,
                last_event_id=request.headers.get("Last-Event-ID"),
                base_url=base_url or self.base_url,
                client_gone=request.client_gone,
            )
            self._check_capabilities(operation, version)
            outcome = self._handlers[operation](params, ctx, activated)
        except RPCError as err:
            # A parse error knows the id when it could read one; later errors use rpc.id.
            echoed = request_id if request_id is not None else err.request_id
            return self._error(echoed, err, version, activated)
        except Exception:
            logger.exception("unhandled error while dispatching a JSON-RPC request")
            return self._error(request_id, InternalError(), version, activated)
        return self._answer(request_id, version, activated, outcome)

    def _negotiate_version(self, request: HttpRequest) -> tuple[str, RPCError | None]:
        """The version to answer in, and the error to raise once the id is known.

        An unsupported version is reported after the body is parsed, so the
        error can echo the request id; it is written in the 1.0 shape.
        """
        try:
            header = request.headers.get("A2A-Version")
            return negotiate_version(
                header, self.versions, query=request.query.get("A2A-Version")
            ), None
        except VersionNotSupportedError as err:
            return V1_0, err

    def _parse(self, request: HttpRequest, version: str) -> RPCRequest:
        if request.body_too_large:
            raise InvalidRequestError("Request body too large")
        # 0.3 peers (the seed, the 0.3 SDK and kit) send id-less requests and
        # expect an answer with id null; 1.0 stays strict.
        return parse_request(
            request.body, max_depth=self.max_json_depth, allow_notifications=version == V0_3
        )

    def _activate(
        self, request: HttpRequest, params: Mapping[str, Any], version: str
    ) -> ActivatedExtensions:
        """Extensions the client asked for (both header spellings) that we activate."""
        headers = request.headers
        requested = parse_extensions_header(
            headers.get_all("A2A-Extensions") + headers.get_all("X-A2A-Extensions")
        )
        return negotiate_extensions(
            requested, self.extensions, {"params": params, "version": version}
        )

    def _answer(
        self,
        request_id: Any,
        version: str,
        activated: ActivatedExtensions | None,
        outcome: _Outcome,
    ) -> HttpResponse:
        """A handler's outcome as JSON, or as an SSE stream for the streaming methods."""
        response_headers = self._response_headers(version, activated)
        if isinstance(outcome, _Stream):
            body = sse_body(request_id, version, outcome.items)
            return HttpResponse(200, SSE_HEADERS + response_headers, body)
        payload = encode_response(request_id, outcome)
        return HttpResponse(200, [("Content-Type", _JSON), *response_headers], payload)

    def _merged_metadata(
        self, per_request: Mapping[str, Any] | None, params: Mapping[str, Any], identity: Any
    ) -> Mapping[str, Any] | None:
        from_params = params.get("metadata")
        merged = merge_metadata(
            self.metadata, per_request, from_params if isinstance(from_params, Mapping) else None
        )
        if identity is None:
            return merged
        return with_identity(merged, identity)

    def _check_capabilities(self, operation: Operation, version: str) -> None:
        caps = self.service.agent_card().capabilities
        if operation in STREAMING_OPERATIONS and not caps.streaming:
            raise UnsupportedOperationError("Streaming is not supported by this agent")
        if operation in PUSH_OPERATIONS and not caps.push_notifications:
            raise PushNotificationNotSupportedError()
        if operation is Operation.GET_EXTENDED_AGENT_CARD and not caps.extended_agent_card:
            if version == V0_3:
                raise ExtendedAgentCardNotConfiguredError()
            raise UnsupportedOperationError("This agent declares no extended agent card")

    def _response_headers(
        self, version: str, activated: ActivatedExtensions | None
    ) -> list[tuple[str, str]]:
        headers = [("A2A-Version", version)]
        value = activated.header_value() if activated is not None else None
        if value:
            headers.append(("A2A-Extensions", value))
            if version == V0_3:
                headers.append(("X-A2A-Extensions", value))
        return headers

    def _error(
        self, request_id: Any, err: RPCError, version: str, activated: ActivatedExtensions | None
    ) -> HttpResponse:
        body = encode_error_response(request_id, wire.encode_error(err, version))
        headers = [("Content-Type", _JSON), *self._response_headers(version, activated)]
        return HttpResponse(200, headers, body)

    # -- authorization -----------------------------------------------------------------

    def _authorized_task(
        self, task_id: str, operation: AuthorizeOperation, ctx: CallContext
    ) -> Task:
        """Fetch then authorize: a denied task is indistinguishable from a missing one.

        Both become the same :func:`_task_not_found` error, whatever message the
        service or the plain denial used, so the answer cannot tell them apart.
        An error the callback chose itself (another message or data) is kept.
        """
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

    def _decode_send(
        self,
        operation: Operation,
        params: Mapping[str, Any],
        ctx: CallContext,
        activated: ActivatedExtensions,
    ) -> SendMessageRequest:
        request: SendMessageRequest = wire.decode_params(
            operation, params, ctx.version, max_parts=self.max_parts
        )
        message, _ = activated.apply_request(request.message, dict(params))
        return replace(request, message=message)

    def _authorize_continuation(self, request: SendMessageRequest, ctx: CallContext) -> None:
        """A message to an existing task is authorized as GET: the answer holds the task.

        The seed does not authorize it at all, which lets any caller read (and
        steer) a task it was denied by naming its id in ``message.taskId``.
        """
        task_id = request.message.task_id
        if task_id is not None and self.authorize_task is not None:
            self._authorized_task(task_id, AuthorizeOperation.GET, ctx)

    def _send_message(
        self, params: Mapping[str, Any], ctx: CallContext, activated: ActivatedExtensions
    ) -> _Outcome:
        request = self._decode_send(Operation.SEND_MESSAGE, params, ctx, activated)
        self._authorize_continuation(request, ctx)
        result = self.service.send_message(request, ctx)
        if isinstance(result, Task) and request.configuration is not None:
            result = trim_history(result, request.configuration.history_length)
        result = activated.apply_response(result, dict(params))
        return wire.encode_result(Operation.SEND_MESSAGE, result, ctx.version)

    def _send_streaming_message(
        self, params: Mapping[str, Any], ctx: CallContext, activated: ActivatedExtensions
    ) -> _Outcome:
        operation = Operation.SEND_STREAMING_MESSAGE
        request = self._decode_send(operation, params, ctx, activated)
        self._authorize_continuation(request, ctx)
        return _Stream(self.service.send_streaming_message(request, ctx))

    def _get_task(
        self, params: Mapping[str, Any], ctx: CallContext, activated: ActivatedExtensions
    ) -> _Outcome:
        request = wire.decode_params(Operation.GET_TASK, params, ctx.version)
        task = self._authorized_task(request.id, AuthorizeOperation.GET, ctx)
        task = trim_history(task, request.history_length)
        return wire.encode_result(Operation.GET_TASK, task, ctx.version)

    def _list_tasks(
        self, params: Mapping[str, Any], ctx: CallContext, activated: ActivatedExtensions
    ) -> _Outcome:
        request = wire.decode_params(Operation.LIST_TASKS, params, ctx.version)
        response = self.service.list_tasks(request, ctx)
        tasks = response.tasks
        if self.authorize_task is not None:
            visible = self._authorizer.filter(tasks, self._auth_context(ctx))
            hidden = len(tasks) - len(visible)
            tasks = visible
            response = replace(response, total_size=max(0, response.total_size - hidden))
        tasks = [trim_history(t, request.history_length) for t in tasks]
        if not request.include_artifacts:
            tasks = [strip_artifacts(t) for t in tasks]
        response = replace(response, tasks=tasks, page_size=len(tasks))
        return wire.encode_result(Operation.LIST_TASKS, response, ctx.version)

    def _cancel_task(
        self, params: Mapping[str, Any], ctx: CallContext, activated: ActivatedExtensions
    ) -> _Outcome:
        request = wire.decode_params(Operation.CANCEL_TASK, params, ctx.version)
        self._authorized_task(request.id, AuthorizeOperation.CANCEL, ctx)
        task = self.service.cancel_task(request, ctx)
        return wire.encode_result(Operation.CANCEL_TASK, task, ctx.version)

    def _subscribe_to_task(
        self, params: Mapping[str, Any], ctx: CallContext, activated: ActivatedExtensions
    ) -> _Outcome:
        """Without ``Last-Event-ID`` the stream's first item (the task) is taken now."""
        request = wire.decode_params(Operation.SUBSCRIBE_TO_TASK, params, ctx.version)
        task = self._authorized_task(request.id, AuthorizeOperation.RESUBSCRIBE, ctx)
        if task.status.state.is_terminal and ctx.last_event_id is None:
            raise UnsupportedOperationError(
                f"Task {task.id} is in a terminal state ({task.status.state.value})"
            )
        items = self.service.subscribe_to_task(request, ctx)
        if ctx.last_event_id is None:
            items = started(items)
        return _Stream(items)

    def _push_config_handler(self, operation: Operation) -> _Handler:
        """The four push-config methods: decode, authorize the task, call, encode."""
        authorize_as, method_name = _PUSH_CONFIG[operation]

        def handle(
            params: Mapping[str, Any], ctx: CallContext, activated: ActivatedExtensions
        ) -> _Outcome:
            request = wire.decode_params(operation, params, ctx.version)
            self._authorized_task(request.task_id, authorize_as, ctx)
            result = getattr(self.service, method_name)(request, ctx)
            return wire.encode_result(operation, result, ctx.version)

        return handle

    def _get_extended_agent_card(
        self, params: Mapping[str, Any], ctx: CallContext, activated: ActivatedExtensions
    ) -> _Outcome:
        operation = Operation.GET_EXTENDED_AGENT_CARD
        wire.decode_params(operation, params, ctx.version)
        card = self.card.with_endpoints(self.service.extended_agent_card(ctx), ctx.base_url)
        return wire.encode_result(operation, card, ctx.version)


def _task_not_found(task_id: str) -> TaskNotFoundError:
    """The one -32001 for a task the caller cannot see (the runtime's wording)."""
    return TaskNotFoundError(f"Task {task_id} not found")


def _media_type(content_type: str | None) -> str:
    """``Text/Plain; charset=utf-8`` -> ``text/plain``; "" when absent."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def _plain(status: int, text: str, extra: Sequence[tuple[str, str]] = ()) -> HttpResponse:
    headers = [("Content-Type", "text/plain; charset=utf-8"), *extra]
    return HttpResponse(status, headers, text.encode())
