"""Server-side dispatch: one HTTP request in, one HTTP response out.

The :class:`Dispatcher` routes and nothing else: the card path to the card
(:mod:`a2a_core.card_endpoint`), a POST to the JSON-RPC endpoint to
:mod:`a2a_core.jsonrpc_binding`, paths under the HTTP+JSON prefix to
:mod:`a2a_core.rest`. Both bindings read their own framing and run
the call through :mod:`a2a_core.calls` (negotiation, context, capability
gates, stream admission) into :mod:`a2a_core.operations` (decode, authorize,
act, shape). It does no I/O of its own, so the WSGI adapter stays thin.

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

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .calls import CallPipeline, Refused, StreamAdmission
from .card_endpoint import CardEndpoint
from .extensions import Extension
from .http import HttpRequest, HttpResponse, is_simple_request_type
from .jsonrpc_binding import JsonRpcBinding
from .models import AgentCard
from .operations import Handler, Operations
from .optable import AnyOperation
from .rest import RestBinding
from .service import A2AService
from .signing import CardSigner
from .versioning import SUPPORTED_VERSIONS, V1_0, normalize_version
from .wire._common import MAX_PARTS

__all__ = [
    "Dispatcher",
    "DEFAULT_AGENT_CARD_PATH",
    "DEFAULT_MAX_PARTS",
    "DEFAULT_REST_PATH",
]

DEFAULT_AGENT_CARD_PATH = ".well-known/agent-card.json"
#: Where the HTTP+JSON binding's paths start, below the mount point.
DEFAULT_REST_PATH = "rest"
#: Parts in one message; more is refused with -32602 before the agent runs.
DEFAULT_MAX_PARTS = MAX_PARTS
#: The interface bindings a card lists, in this order unless the deployment says otherwise.
DEFAULT_BINDINGS = ("JSONRPC", "HTTP+JSON")


def _path(value: str | None | bool) -> str | None:
    if value is None or value is False:
        return None
    return str(value).strip("/")


class Dispatcher:
    """Answers card requests, JSON-RPC calls and HTTP+JSON calls for an :class:`A2AService`.

    ``challenge`` is the caller gate's refusal of an anonymous caller (see
    :class:`~a2a_core.calls.CallPipeline`; None: the server authenticates nobody).
    """

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
        card_signer: CardSigner | None = None,
        challenge: Callable[[], Refused] | None = None,
        grpc_url: str | None = None,
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
            signer=card_signer,
            grpc_url=grpc_url,
        )
        self.operations = Operations(
            service,
            card_document=self.card.document,
            authorize_task=authorize_task,
            max_parts=max_parts,
            hold_admission=stream_admission,
        )
        self.calls = CallPipeline(
            service,
            self.operations,
            base_url=base_url,
            metadata=metadata,
            extensions=self.extensions,
            stream_admission=stream_admission,
            challenge=challenge,
        )
        self.jsonrpc = JsonRpcBinding(
            self.calls, versions=self.versions, max_json_depth=max_json_depth
        )
        self.rest = RestBinding(self.calls, max_json_depth=max_json_depth)

    def add_operation(self, op: AnyOperation, handler: Handler) -> None:
        """Serve one more operation over both bindings: its entry (:mod:`a2a_core.optable`:
        names, routes, types, limits, what it needs) and its handler."""
        self.operations.add(op, handler)

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
                if is_simple_request_type(request.headers.get("Content-Type")):
                    return _plain(
                        415,
                        "Unsupported Media Type: send JSON-RPC as application/json",
                        [("Accept-Post", "application/json, application/a2a+json")],
                    )
                return self.jsonrpc.answer(request, base_url=base_url, metadata=metadata,
                                           identity=identity)
            return _plain(405, "Method Not Allowed", [("Allow", "POST")])
        sub_path = self._rest_sub_path(path)
        if sub_path is not None:
            return self.rest.answer(request, sub_path, base_url=base_url, metadata=metadata,
                                    identity=identity)
        return _plain(404, "Not Found")

    def refuse(self, request: HttpRequest, refused: Refused) -> HttpResponse:
        """``refused`` in the shape of the binding ``request.path`` belongs to.

        For a caller turned away before its body is read (so a JSON-RPC id is
        null); ``request`` needs only its path, headers and query.
        """
        path = request.path.strip("/")
        if path == self.rpc_path:
            return self.jsonrpc.refuse(request, refused)
        if self._rest_sub_path(path) is not None:
            return self.rest.refuse(refused)
        return refused.response()

    def _rest_sub_path(self, path: str) -> str | None:
        """The path below the HTTP+JSON prefix (``path`` without its slashes), or None."""
        rest_path = self.rest_path
        if rest_path is None or not (path == rest_path or path.startswith(rest_path + "/")):
            return None
        return path[len(rest_path):] or "/"

    # -- agent card --------------------------------------------------------------------

    def public_card(self, base_url: str | None = None) -> AgentCard:
        """The card as served: endpoints filled in, extension declarations merged."""
        return self.card.public_card(base_url or self.base_url)

    def card_response(self, request: HttpRequest, *, base_url: str | None = None) -> HttpResponse:
        """The card with its validators; 304 when the client's copy is current."""
        return self.card.response(request, base_url or self.base_url)


def _plain(status: int, text: str, extra: Sequence[tuple[str, str]] = ()) -> HttpResponse:
    headers = [("Content-Type", "text/plain; charset=utf-8"), *extra]
    return HttpResponse(status, headers, text.encode())
