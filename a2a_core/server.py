"""Server-side dispatch: one HTTP request in, one HTTP response out.

The :class:`Dispatcher` makes the HTTP-level decisions and nothing else: it
routes (card, JSON-RPC endpoint, HTTP+JSON paths), negotiates the version and
extensions, builds the :class:`~a2a_core.service.CallContext`, applies the
capability gates and the stream admission, and writes the answer of
:class:`~a2a_core.operations.Operations` in the binding's framing: a JSON-RPC
response or SSE of JSON-RPC responses; a bare JSON body, SSE of bare
StreamResponse objects or a ``google.rpc.Status`` error over HTTP+JSON. It does
no I/O of its own, so the WSGI adapter and the runtime stay thin.

Order of checks for a JSON-RPC POST, and why:

0. the Content-Type: the three types a browser may POST cross-origin without
   a CORS preflight (``text/plain``, form encodings) are refused with 415, so a
   web page cannot drive an agent on localhost; anything else, or none, is read
   as JSON, as lenient clients and the official SDK expect;
1. body size (the adapter flags it) and envelope: nothing else can be read
   from a body that is not a JSON-RPC request;
2. version, then method, then extensions: an unsupported version is refused
   before anything runs; the request id is echoed whenever it was readable;
3. capability gates (streaming, push, extended card) before params, so a
   client learns "not supported" rather than "bad params"; then a streaming
   call must be admitted (a server whose stream capacity is used up answers
   503 with ``Retry-After`` rather than going deaf);
4. params, then authorization, then the operation (:mod:`a2a_core.operations`).

An HTTP+JSON request is routed by its path (:mod:`a2a_core.rest`), which also
checks its content type, size and JSON, and then follows steps 2-4.

Errors found before a stream starts are plain error responses, the streaming
methods included: unknown, denied or terminal task, bad params, a disabled
capability (REFERENCE §3.2; a client can only type an error it gets as JSON).
Once a stream has begun, an error is its last SSE event. SubscribeToTask's
first item is the task as it is now, which a service has at hand, so it is
taken before answering and its error is plain too; a send stream's first item
waits for the agent, and a resumed subscription's for the next event, so
those are not awaited.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from . import rest, wire
from .card_endpoint import CardEndpoint
from .errors import (
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidRequestError,
    PushNotificationNotSupportedError,
    RPCError,
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
from .jsonrpc import RPCRequest, encode_error_response, encode_response, parse_request
from .methods import PUSH_OPERATIONS, STREAMING_OPERATIONS, Operation, operation_for
from .models import AgentCard
from .operations import Operations, Outcome, Stream
from .service import A2AService, CallContext, StreamItem
from .streaming import SSE_HEADERS, closing, sse_body
from .tasks import merge_metadata, with_identity
from .versioning import SUPPORTED_VERSIONS, V0_3, V1_0, negotiate_version, normalize_version

__all__ = [
    "Dispatcher",
    "StreamAdmission",
    "DEFAULT_AGENT_CARD_PATH",
    "DEFAULT_MAX_PARTS",
    "DEFAULT_REST_PATH",
]

logger = logging.getLogger("a2a_core.server")

DEFAULT_AGENT_CARD_PATH = ".well-known/agent-card.json"
#: Where the HTTP+JSON binding's paths start, below the mount point.
DEFAULT_REST_PATH = "rest"
#: Parts in one message; more is refused with -32602 before the agent runs.
DEFAULT_MAX_PARTS = 256
_JSON = "application/json"
#: Request media types a browser sends cross-origin without a CORS preflight ("simple
#: requests"); A2A requires application/json, so these can only be a confused or hostile peer.
_SIMPLE_REQUEST_TYPES = frozenset(
    {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}
)
#: The interface bindings a card lists, in this order unless the deployment says otherwise.
DEFAULT_BINDINGS = ("JSONRPC", "HTTP+JSON")


class StreamAdmission(Protocol):
    """Decides whether one more stream may open (the adapter knows its capacity)."""

    #: Seconds a refused client should wait before trying again.
    retry_after: int

    def admit(self) -> bool:
        """Take a place for a stream; False when none is free."""

    def release(self) -> None:
        """Give back a place :meth:`admit` took."""


class _Busy(Exception):
    """A streaming call found no free stream place."""


def _path(value: str | None | bool) -> str | None:
    if value is None or value is False:
        return None
    return str(value).strip("/")


class Dispatcher:
    """Answers card requests, JSON-RPC calls and HTTP+JSON calls for an :class:`A2AService`."""

    def __init__(
        self,
        service: A2AService,
        *,
        last_modified: datetime,
        base_url: str | None = None,
        agent_card_path: str | None | bool = DEFAULT_AGENT_CARD_PATH,
        json_rpc_path: str = "",
        rest_path: str | None | bool = DEFAULT_REST_PATH,
        bindings: Sequence[str] = DEFAULT_BINDINGS,
        metadata: Mapping[str, Any] | None = None,
        authorize_task: Callable[..., Any] | None = None,
        extensions: Sequence[Extension] = (),
        versions: Sequence[str] = SUPPORTED_VERSIONS,
        max_json_depth: int = 64,
        max_parts: int = DEFAULT_MAX_PARTS,
        stream_admission: StreamAdmission | None = None,
    ) -> None:
        self.service = service
        self.base_url = base_url
        self.card_path = _path(agent_card_path)
        self.rpc_path = _path(json_rpc_path) or ""
        self.versions = tuple(normalize_version(v) for v in versions)
        # HTTP+JSON is a 1.0 binding: served only when 1.0 is.
        self.rest_path = _path(rest_path) if V1_0 in self.versions else None
        self.last_modified = last_modified
        self.metadata = dict(metadata or {})
        self.extensions = tuple(extensions)
        self.max_json_depth = max_json_depth
        self.stream_admission = stream_admission
        self.card = CardEndpoint(
            service.agent_card,
            last_modified=last_modified,
            rpc_path=self.rpc_path,
            rest_path=self.rest_path,
            bindings=bindings,
            versions=self.versions,
            extensions=self.extensions,
        )
        self.operations = Operations(
            service,
            with_endpoints=self.card.with_endpoints,
            authorize_task=authorize_task,
            max_parts=max_parts,
        )

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
        rest_path = self.rest_path
        if rest_path is not None and (path == rest_path or path.startswith(rest_path + "/")):
            sub_path = path[len(rest_path):] or "/"
            return self._rest(request, sub_path, base_url, metadata, identity)
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
            ctx = self._context(request, params, version, activated, base_url, metadata, identity)
            outcome = self._run(operation, params, ctx, activated)
        except _Busy:
            return self._busy_rpc(request_id, version, activated)
        except RPCError as err:
            # A parse error knows the id when it could read one; later errors use rpc.id.
            echoed = request_id if request_id is not None else err.request_id
            return self._error(echoed, err, version, activated)
        except Exception:
            logger.exception("unhandled error while dispatching a JSON-RPC request")
            return self._error(request_id, InternalError(), version, activated)
        headers = self._response_headers(version, activated)
        if isinstance(outcome, Stream):
            body = sse_body(request_id, version, outcome.items)
            return HttpResponse(200, SSE_HEADERS + headers, body)
        payload = encode_response(request_id, outcome.value)
        return HttpResponse(200, [("Content-Type", _JSON), *headers], payload)

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
        # 0.3 peers (the 0.3 SDK and kit) send id-less requests and expect an
        # answer with id null; 1.0 stays strict.
        return parse_request(
            request.body, max_depth=self.max_json_depth, allow_notifications=version == V0_3
        )

    def _error(
        self, request_id: Any, err: RPCError, version: str, activated: ActivatedExtensions | None
    ) -> HttpResponse:
        body = encode_error_response(request_id, wire.encode_error(err, version))
        headers = [("Content-Type", _JSON), *self._response_headers(version, activated)]
        return HttpResponse(200, headers, body)

    def _busy_rpc(
        self, request_id: Any, version: str, activated: ActivatedExtensions | None
    ) -> HttpResponse:
        answer = self._error(request_id, self._busy_error(), version, activated)
        return HttpResponse(503, [*answer.headers, *self._retry_after()], answer.body)

    # -- HTTP+JSON ---------------------------------------------------------------------

    def _rest(
        self,
        request: HttpRequest,
        sub_path: str,
        base_url: str | None,
        metadata: Mapping[str, Any] | None,
        identity: Any,
    ) -> HttpResponse:
        routed = rest.route(
            request.method,
            sub_path,
            request.query,
            request.body,
            content_type=request.headers.get("Content-Type"),
            body_too_large=request.body_too_large,
            max_depth=self.max_json_depth,
        )
        if isinstance(routed, rest.RestError):
            return rest.error_response(routed.error, status=routed.status, headers=routed.headers)
        activated: ActivatedExtensions | None = None
        try:
            version = self._rest_version(request)
            activated = self._activate(request, routed.params, version)
            ctx = self._context(
                request, routed.params, version, activated, base_url, metadata, identity,
                tenant=routed.tenant,
            )
            outcome = self._run(routed.operation, routed.params, ctx, activated)
        except _Busy:
            headers = [*self._response_headers(V1_0, activated), *self._retry_after()]
            return rest.error_response(self._busy_error(), status=503, headers=headers)
        except RPCError as err:
            return rest.error_response(err, headers=self._response_headers(V1_0, activated))
        except Exception:
            logger.exception("unhandled error while dispatching an HTTP+JSON request")
            headers = self._response_headers(V1_0, activated)
            return rest.error_response(InternalError(), headers=headers)
        headers = self._response_headers(version, activated)
        if isinstance(outcome, Stream):
            return rest.sse_response(outcome.items, headers)
        return rest.json_response(routed.operation, outcome.value, headers)

    def _rest_version(self, request: HttpRequest) -> str:
        """HTTP+JSON is 1.0 only: a request naming no version is read as 1.0 (curl-friendly);
        one naming another version is refused."""
        header = request.headers.get("A2A-Version")
        query = request.query.get("A2A-Version")
        if not (header and header.strip()) and not query:
            return V1_0
        return negotiate_version(header, rest.REST_VERSIONS, query=query)

    # -- shared by both bindings -------------------------------------------------------

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

    def _context(
        self,
        request: HttpRequest,
        params: Mapping[str, Any],
        version: str,
        activated: ActivatedExtensions,
        base_url: str | None,
        metadata: Mapping[str, Any] | None,
        identity: Any,
        *,
        tenant: str | None = None,
    ) -> CallContext:
        if tenant is None and isinstance(params.get("tenant"), str):
            tenant = params["tenant"]
        return CallContext(
            version=version,
            metadata=self._merged_metadata(metadata, params, identity),
            extensions=dict(activated.by_uri),
            identity=identity,
            tenant=tenant,
            params=params,
            last_event_id=request.headers.get("Last-Event-ID"),
            base_url=base_url or self.base_url,
            client_gone=request.client_gone,
        )

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

    def _run(
        self,
        operation: Operation,
        params: Mapping[str, Any],
        ctx: CallContext,
        activated: ActivatedExtensions,
    ) -> Outcome:
        """Capability gates, stream admission, then the operation."""
        self._check_capabilities(operation, ctx.version)
        admission = self.stream_admission
        if operation not in STREAMING_OPERATIONS or admission is None:
            return self.operations.run(operation, params, ctx, activated)
        if not admission.admit():
            raise _Busy()
        try:
            outcome = self.operations.run(operation, params, ctx, activated)
        except BaseException:
            admission.release()
            raise
        if not isinstance(outcome, Stream):
            admission.release()
            return outcome
        return Stream(_released(outcome.items, admission.release))

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

    def _busy_error(self) -> InternalError:
        seconds = self.stream_admission.retry_after if self.stream_admission else 1
        return InternalError(
            f"Server busy: every stream place of this worker is taken; retry in {seconds} s"
        )

    def _retry_after(self) -> list[tuple[str, str]]:
        seconds = self.stream_admission.retry_after if self.stream_admission else 1
        return [("Retry-After", str(seconds))]


def _released(items: Iterator[StreamItem], release: Callable[[], None]) -> Iterator[StreamItem]:
    """``items``, giving its stream place back once, when closed or exhausted."""
    return closing(items, on_close=release)


def _media_type(content_type: str | None) -> str:
    """``Text/Plain; charset=utf-8`` -> ``text/plain``; "" when absent."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def _plain(status: int, text: str, extra: Sequence[tuple[str, str]] = ()) -> HttpResponse:
    headers = [("Content-Type", "text/plain; charset=utf-8"), *extra]
    return HttpResponse(status, headers, text.encode())
