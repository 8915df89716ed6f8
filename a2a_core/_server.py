"""Server-side dispatch: one HTTP request in, one HTTP response out.

The :class:`Dispatcher` routes everything a server of the core serves, from
one route table (:mod:`a2a_core._routes`, built from its
:class:`DispatcherConfig`): the card path to the card
(:mod:`a2a_core._card_endpoint`), a POST to the JSON-RPC endpoint to
:mod:`a2a_core._jsonrpc_binding`, paths under the HTTP+JSON prefix to
:mod:`a2a_core._rest`, the JWKS path to the public keys it was given, and a
mount's prefix (the inspector page) back to the adapter that serves it. Both
bindings read their own framing and run the call through :mod:`a2a_core._calls`
(negotiation, context, capability gates, stream admission) into
:mod:`a2a_core._operations` (decode, authorize, act, shape). It does no I/O of
its own, so the WSGI adapter only adapts: it asks :meth:`Dispatcher.route`
which route a path is, and :meth:`Dispatcher.answer` for the answer.

Before any of that, a POST to the JSON-RPC endpoint whose Content-Type is one
a browser may send cross-origin without a CORS preflight (``text/plain``, the
form encodings) is refused with 415, so a web page cannot drive an agent on
localhost; anything else, or none, is read as JSON, as lenient clients and
the official SDK expect.

An adapter that authenticates before reading the body hands its refusal to
:meth:`Dispatcher.refuse`, which answers it in the shape of the binding the
path belongs to; what an operation needs of the caller (the extended card: an
authenticated one) is the call pipeline's caller gate, after the one parse.

Errors found before a stream starts are plain error responses, the streaming
methods included (a client can only type an error it gets as a JSON-RPC
response); once a stream has begun, an error is its last SSE event.
SubscribeToTask's first item (the task as it is now) is taken before
answering, so its error is plain too; a send stream's first item waits for
the agent, so it is not awaited.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._calls import CallPipeline, Refused, StreamAdmission
from ._card_endpoint import CardEndpoint
from ._http import HttpRequest, HttpResponse, is_simple_request_type
from ._jsonrpc_binding import JsonRpcBinding
from ._jsonvalue import JSONObject
from ._operations import Handler, Operations
from ._rest import RestBinding
from ._routes import Route, RouteKind, RouteTable
from ._service import A2AService
from ._versioning import SUPPORTED_VERSIONS, V1_0, normalize_version
from .extensions import Extension
from .models import AgentCard
from .optable import AnyOperation
from .signing import CardSigner
from .wire._common import MAX_PARTS

__all__ = [
    "Dispatcher",
    "DispatcherConfig",
    "DEFAULT_AGENT_CARD_PATH",
    "DEFAULT_MAX_PARTS",
    "DEFAULT_REST_PATH",
    "Route",
    "RouteKind",
]

DEFAULT_AGENT_CARD_PATH = ".well-known/agent-card.json"
#: Where the HTTP+JSON binding's paths start, below the mount point.
DEFAULT_REST_PATH = "rest"
#: Parts in one message; more is refused with -32602 before the agent runs.
DEFAULT_MAX_PARTS = MAX_PARTS
#: The interface bindings a card lists, in this order unless the deployment says otherwise.
DEFAULT_BINDINGS = ("JSONRPC", "HTTP+JSON")


def _path(value: str | None) -> str | None:
    return None if value is None else value.strip("/")


@dataclass(frozen=True, kw_only=True)
class DispatcherConfig:
    """Everything a :class:`Dispatcher` serves and how, as one frozen value.

    A server builds it once from its own settings (``a2a_wsgi._assembly`` does,
    from the app's settings groups) and hands it over; the dispatcher reads
    it and keeps it as ``dispatcher.config``. Paths are below the mount point,
    with or without slashes; None turns a route off.
    """

    #: The card's Last-Modified.
    last_modified: datetime
    #: The public URL cards advertise when a request brings none.
    base_url: str | None = None
    agent_card_path: str | None = DEFAULT_AGENT_CARD_PATH
    #: Where JSON-RPC POSTs go ("" is the mount point itself).
    json_rpc_path: str = ""
    #: Where the HTTP+JSON paths start (served only when 1.0 is).
    rest_path: str | None = DEFAULT_REST_PATH
    #: Where the public keys are served (a JWKS), when the dispatcher is given keys.
    jwks_path: str | None = None
    #: Prefixes the adapter serves with applications of its own (the inspector page).
    mounts: tuple[str, ...] = ()
    #: The order of the card's interfaces.
    bindings: tuple[str, ...] = DEFAULT_BINDINGS
    #: Static metadata merged into every call.
    metadata: Mapping[str, Any] | None = None
    #: ``(operation, task, context) -> allow?`` for every task a call names.
    authorize_task: Callable[..., Any] | None = None
    extensions: tuple[Extension, ...] = ()
    versions: tuple[str, ...] = SUPPORTED_VERSIONS
    max_json_depth: int = 64
    max_parts: int = DEFAULT_MAX_PARTS
    #: Signs each served card variant and the extended card (None: unsigned).
    card_signer: CardSigner | None = None
    #: The gRPC interface the card lists (served by another process; None: none).
    grpc_url: str | None = None


class Dispatcher:
    """Answers card requests, JSON-RPC calls and HTTP+JSON calls for an :class:`A2AService`.

    What it serves is ``config``; what it works with is passed beside it:
    ``stream_admission`` (how many streams may be open), ``challenge`` (the
    caller gate's refusal of an anonymous caller, see
    :class:`~a2a_core._calls.CallPipeline`; None: the server authenticates
    nobody) and ``public_keys`` (the JWKS served at ``config.jwks_path``; None
    from it: there are no keys, 404).
    """

    def __init__(
        self,
        service: A2AService,
        config: DispatcherConfig,
        *,
        stream_admission: StreamAdmission | None = None,
        challenge: Callable[[], Refused] | None = None,
        public_keys: Callable[[], JSONObject | None] | None = None,
    ) -> None:
        self.service = service
        self.config = config
        self.base_url = config.base_url
        self.versions = tuple(normalize_version(v) for v in config.versions)
        # HTTP+JSON is a 1.0 binding: served only when 1.0 is.
        rest_path = _path(config.rest_path) if V1_0 in self.versions else None
        self.routes = RouteTable(
            card_path=_path(config.agent_card_path), rpc_path=_path(config.json_rpc_path) or "",
            rest_path=rest_path,
            jwks_path=_path(config.jwks_path) if public_keys is not None else None,
            mounts=tuple(m for m in (_path(mount) for mount in config.mounts) if m))
        self.card_path = self.routes.card_path
        self.rpc_path = self.routes.rpc_path
        self.rest_path = self.routes.rest_path
        self.last_modified = config.last_modified
        self.metadata = dict(config.metadata or {})
        self.extensions = tuple(config.extensions)
        self.max_json_depth = config.max_json_depth
        self.stream_admission = stream_admission
        self._public_keys = public_keys
        self.card = CardEndpoint(
            service.agent_card,
            last_modified=config.last_modified,
            rpc_path=self.rpc_path,
            rest_path=self.rest_path,
            bindings=config.bindings,
            versions=self.versions,
            extensions=self.extensions,
            signer=config.card_signer,
            grpc_url=config.grpc_url,
        )
        self.operations = Operations(
            service,
            card_document=self.card.document,
            authorize_task=config.authorize_task,
            max_parts=config.max_parts,
            hold_admission=stream_admission,
        )
        self.calls = CallPipeline(
            service,
            self.operations,
            base_url=config.base_url,
            metadata=config.metadata,
            extensions=self.extensions,
            stream_admission=stream_admission,
            challenge=challenge,
        )
        self.jsonrpc = JsonRpcBinding(
            self.calls, versions=self.versions, max_json_depth=config.max_json_depth
        )
        self.rest = RestBinding(self.calls, max_json_depth=config.max_json_depth)

    def add_operation(self, op: AnyOperation, handler: Handler) -> None:
        """Serve one more operation over both bindings: its entry (:mod:`a2a_core.optable`:
        names, routes, types, limits, what it needs) and its handler."""
        self.operations.add(op, handler)

    # -- routing -----------------------------------------------------------------------

    def route(self, path: str) -> Route:
        """Where ``path`` (below the mount point) goes: the one route table's answer."""
        return self.routes.resolve(path)

    def handle(
        self,
        request: HttpRequest,
        *,
        base_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        identity: Any = None,
    ) -> HttpResponse:
        """Answer one request. ``base_url``/``metadata`` are per-request overrides."""
        return self.answer(self.routes.resolve(request.path), request, base_url=base_url,
                           metadata=metadata, identity=identity)

    def answer(
        self,
        route: Route,
        request: HttpRequest,
        *,
        base_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        identity: Any = None,
    ) -> HttpResponse:
        """Answer ``request`` on ``route`` (:meth:`route`'s answer for its path): for an
        adapter that resolved the route already (to skip authentication on a public one)."""
        kind = route.kind
        if kind is RouteKind.CARD:
            if request.method in ("GET", "HEAD"):
                return self.card.response(request, base_url or self.base_url)
            return _plain(405, "Method Not Allowed", [("Allow", "GET")])
        if kind is RouteKind.JSONRPC:
            if request.method == "POST":
                if is_simple_request_type(request.headers.get("Content-Type")):
                    return _plain(
                        415,
                        "Unsupported Media Type: send JSON-RPC as application/json",
                        [("Accept-Post", "application/json, application/a2a+json")],
                    )
                return self.jsonrpc.answer(request, base_url=base_url, metadata=metadata,
                                           identity=identity)
            return _plain(405, "Method Not Allowed", [("Allow", "POST")])
        if kind is RouteKind.REST:
            return self.rest.answer(request, route.sub_path, base_url=base_url,
                                    metadata=metadata, identity=identity)
        if kind is RouteKind.JWKS:
            keys = self._public_keys() if self._public_keys is not None else None
            if keys is not None:
                return _jwks(keys)
        return _plain(404, "Not Found")  # (a mount's paths too: its adapter answers them)

    def refuse(self, request: HttpRequest, refused: Refused) -> HttpResponse:
        """``refused`` in the shape of the binding ``request.path`` belongs to.

        For a caller turned away before its body is read (so a JSON-RPC id is
        null); ``request`` needs only its path, headers and query.
        """
        kind = self.routes.resolve(request.path).kind
        if kind is RouteKind.JSONRPC:
            return self.jsonrpc.refuse(request, refused)
        if kind is RouteKind.REST:
            return self.rest.refuse(refused)
        return refused.response()

    # -- agent card --------------------------------------------------------------------

    def public_card(self, base_url: str | None = None) -> AgentCard:
        """The card as served: endpoints filled in, extension declarations merged."""
        return self.card.public_card(base_url or self.base_url)

    def card_response(self, request: HttpRequest, *, base_url: str | None = None) -> HttpResponse:
        """The card with its validators; 304 when the client's copy is current."""
        return self.card.response(request, base_url or self.base_url)


def _jwks(keys: JSONObject) -> HttpResponse:
    """The public signing keys (cacheable: rotation keeps old keys published a while)."""
    return HttpResponse(200, [("Content-Type", "application/jwk-set+json"),
                              ("Cache-Control", "public, max-age=300")],
                        json.dumps(keys).encode())


def _plain(status: int, text: str, extra: Sequence[tuple[str, str]] = ()) -> HttpResponse:
    headers = [("Content-Type", "text/plain; charset=utf-8"), *extra]
    return HttpResponse(status, headers, text.encode())
