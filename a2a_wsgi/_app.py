"""`A2AApp`: the WSGI face of an agent.

All protocol work happens in :class:`a2a_core._server.Dispatcher`, routing
included (which path is the card, the keys, JSON-RPC, HTTP+JSON or the
inspector page); agents run in :class:`a2a_wsgi._runtime.Runtime`;
:mod:`a2a_wsgi._assembly` builds both from the app's
:class:`~a2a_wsgi.settings.AppSettings`. This module adapts WSGI to the core
and nothing else: it asks the dispatcher for the path's route, authenticates
a route that is not public, works out the base URL, turns the environ into an
:class:`~a2a_core._http.HttpRequest` and writes the
:class:`~a2a_core._http.HttpResponse` back (:mod:`a2a_wsgi._wsgi_io`), or hands
a mount's request to its application.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from a2a_core._http import HttpRequest, HttpResponse
from a2a_core._observe import CARD, CallRecord
from a2a_core._server import DEFAULT_AGENT_CARD_PATH, Dispatcher, Route, RouteKind
from a2a_core.models import AgentCard
from a2a_core.signing import CardSigner

from ._admission import StreamPlaces
from ._agent import Agent
from ._assembly import Assembly, assemble
from ._disconnect import client_gone_probe
from ._overrides import ENVIRON_KEY as OVERRIDES
from ._overrides import get_base_url, get_identity, get_metadata
from ._parking import offer, stream_holder
from ._process import ServerInfo, announced, register
from ._public_url import UntrustedHostError, request_base_url
from ._runtime import Runtime
from ._stalled_writes import StalledWrites
from ._store_choice import MemoryStoreInManyProcessesError, StoreSpec
from ._telemetry import (
    RECORD_KEY,
    REQUEST_ID_HEADER,
    call_record,
    observe,
    request_id,
    unobserved,
)
from ._wsgi_io import (
    StartResponse,
    card_query,
    plain,
    read_body,
    request_headers,
    respond,
)
from .auth._wsgi import AuthOption, as_policy, check_distinct_kids
from .push import PushDeliverer, PushSettings
from .settings import (
    AppSettings,
    CardSettings,
    LimitSettings,
    ProtocolSettings,
    RuntimeSettings,
    StreamSettings,
)

__all__ = ["A2AApp", "DEFAULT_CARD_PATH"]

log = logging.getLogger("a2a_wsgi.app")

DEFAULT_CARD_PATH = DEFAULT_AGENT_CARD_PATH


class A2AApp:
    """A WSGI application serving one agent over JSON-RPC and HTTP+JSON (0.3 and 1.0), and SSE.

    What a newcomer needs are keywords: ``base_url`` (the public URL of the
    app's root, to which the card adds its paths; None: the request's, for a
    trusted Host), ``store`` (a TaskStore or a URL; None: ``$A2A_STORE``, else
    memory or SQLite), ``auth``
    (authenticators or an AuthPolicy), ``push`` (a PushSettings, or True for the
    defaults: webhook delivery) and ``inspector`` (the inspector page at
    ``<mount>/inspector``). Everything else is one settings group each,
    ``card=CardSettings(...)``, ``protocol=``, ``limits=``, ``streams=``,
    ``runtime=`` (:mod:`a2a_wsgi.settings`; None: the group's defaults;
    ``docs/serving.md`` explains each). ``app.settings`` holds all of it.

    Creating one starts nothing and opens nothing: the runtime, its store and
    the push worker are assembled at :meth:`start` (``serve()`` and the gunicorn
    hook call it, :mod:`a2a_wsgi._process`) or at the first request, whose
    ``wsgi.multiprocess`` says whether other processes serve the app.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        base_url: str | None = None,
        store: StoreSpec | None = None,
        auth: AuthOption = None,
        push: PushSettings | bool | None = None,
        inspector: bool = False,
        card: CardSettings | None = None,
        protocol: ProtocolSettings | None = None,
        limits: LimitSettings | None = None,
        streams: StreamSettings | None = None,
        runtime: RuntimeSettings | None = None,
    ) -> None:
        self.agent = agent
        self.settings = AppSettings(
            base_url=base_url, store=store, auth=auth,
            push=PushSettings() if push is True else push or None, inspector=inspector,
            card=card or CardSettings(), protocol=protocol or ProtocolSettings(),
            limits=limits or LimitSettings(), streams=streams or StreamSettings(),
            runtime=runtime or RuntimeSettings())
        #: The public URL the card advertises (None: the request's); may be set later.
        self.base_url = base_url
        as_policy(auth)  # a wrong kind of auth option is refused now, not later
        push_signer = self.push.signer if self.push is not None else None
        keys = self.settings.card.signing_keys
        check_distinct_kids(CardSigner(keys) if keys else None,
                            [k.kid for k in push_signer.keys] if push_signer else [])
        self._assembly: Assembly | None = None
        self._lock = threading.Lock()
        self._stalled = StalledWrites(self.settings.streams.stalled_write_timeout)
        register(self)  # started when a gunicorn worker announces itself (a2a_wsgi._process)

    @property
    def push(self) -> PushSettings | None:
        return self.settings.push

    @property
    def store(self) -> StoreSpec | None:
        """The store as named (a TaskStore, a URL or None); ``runtime.store`` is the open one."""
        return self.settings.store

    @property
    def max_body_bytes(self) -> int:
        return self.settings.limits.max_body_bytes

    # -- assembly ------------------------------------------------------------------------

    def start(self, *, multiprocess: bool | None = None) -> A2AApp:
        """Assemble the app now rather than at the first request (idempotent).

        ``multiprocess`` says whether other processes serve the same app (None:
        as the server announced, :mod:`a2a_wsgi._process`, else no).
        """
        server = _server()
        if multiprocess is not None:
            server = dataclasses.replace(server, multiprocess=multiprocess)
        self._assembled(server).start_work()
        return self

    def _assembled(self, server: ServerInfo) -> Assembly:
        assembly = self._assembly
        if assembly is not None:
            return assembly
        with self._lock:
            if self._assembly is None:
                self._assembly = assemble(self.agent, self.settings, server=server,
                                          wake_deliverer=self._wake_deliverer)
            return self._assembly

    def _current(self) -> Assembly:
        assembly = self._assembly
        return assembly if assembly is not None else self._assembled(_server())

    @property
    def runtime(self) -> Runtime:
        """The agent runtime (assembled on first use)."""
        return self._current().runtime

    @property
    def dispatcher(self) -> Dispatcher:
        """The protocol dispatcher (assembled on first use)."""
        return self._current().dispatcher

    @property
    def card(self) -> AgentCard:
        """The agent's card with the deployment's overrides (before endpoints are filled in)."""
        return self._current().card

    @property
    def streams(self) -> StreamPlaces:
        """Open SSE streams of this process and their limit (``max_streams``)."""
        return self._current().streams

    @property
    def deliverer(self) -> PushDeliverer | None:
        """The webhook delivery worker of this process (None when push is off)."""
        return self._current().deliverer

    # -- serving -------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """One request, with its access log line, span and metrics (:mod:`.telemetry`)."""
        assembly = self._assembly
        if assembly is not None:
            route = assembly.dispatcher.routes.resolve(environ["PATH_INFO"]
                                                       if "PATH_INFO" in environ else "/")
            if route.document and unobserved(environ) and (
                    not assembly.guessed_memory or _fit(assembly, environ) is None):
                # the card or the keys, which nobody logs, traces or counts: the same path,
                # without an access record
                return self._answer(environ, _with_request_id(environ, start_response),
                                    assembly, route)
        park = offer(environ, start_response)  # the server may hand its stream over (.parking)
        body = observe(environ, start_response, self._serve)
        return body if park is None else park.drive(body)

    def _serve(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            assembly = self._assembled(_server(environ))
        except MemoryStoreInManyProcessesError as exc:
            log.error("%s", exc)
            return plain(500, str(exc), start_response)
        unfit = _fit(assembly, environ)
        if unfit is not None:
            log.error("%s", unfit)
            return plain(500, unfit, start_response)
        route = assembly.dispatcher.routes.resolve(environ.get("PATH_INFO") or "/")
        return self._answer(environ, start_response, assembly, route)

    def _answer(self, environ: dict[str, Any], start_response: StartResponse,
                assembly: Assembly, route: Route) -> Iterable[bytes]:
        """The answer on ``route``, the dispatcher's for this request's path."""
        assembly.start_work()
        if route.kind is RouteKind.MOUNT:  # a path the core leaves to one of our apps
            return assembly.mounts[route.sub_path](environ, start_response)
        method = environ["REQUEST_METHOD"].upper() if "REQUEST_METHOD" in environ else "GET"
        path = environ.get("PATH_INFO") or "/"
        # what a middleware put for this request (put_identity, put_base_url, put_metadata)
        overridden = OVERRIDES in environ
        identity = get_identity(environ) if overridden else None
        guard = assembly.guard
        if guard is not None and not route.public:
            identity, refused = guard.admit(environ, identity)
            if refused is not None:  # answered in the shape of the path's binding
                bare = HttpRequest(method=method, path=path, headers=request_headers(environ),
                                   query=card_query(environ))
                return respond(assembly.dispatcher.refuse(bare, refused), method, start_response)
        is_card = route.kind is RouteKind.CARD
        base_url = (get_base_url(environ) if overridden else None) or self.base_url or None
        if base_url is None:  # the request's own, for a trusted Host
            try:
                base_url = request_base_url(environ, assembly.trusted_hosts)
            except UntrustedHostError as exc:
                if method in ("GET", "HEAD") and is_card:
                    return plain(400, str(exc), start_response)
                # (only the card and the extended card need it)
        if is_card and method in ("GET", "HEAD"):
            # The card reads nothing but its version and validators: the core answers from
            # those (no body, no header copy, no request object: the card is the hot GET).
            if RECORD_KEY in environ:
                call_record(environ, CARD)
            return respond(assembly.dispatcher.card.answer(
                method, base_url or assembly.dispatcher.base_url, _asked_version(environ),
                environ["HTTP_IF_NONE_MATCH"] if "HTTP_IF_NONE_MATCH" in environ else None,
                environ.get("HTTP_IF_MODIFIED_SINCE")), method, start_response)
        request = _request(environ, method, path, self.settings.limits.max_body_bytes,
                           call_record(environ) if RECORD_KEY in environ else None)
        response = assembly.dispatcher.answer(route, request, base_url=base_url,
                                              metadata=get_metadata(environ) if overridden
                                              else None, identity=identity)
        body = respond(response, method, start_response)
        if isinstance(response.body, bytes):
            return body
        return self._stalled.watch(iter(body), environ)  # a stream: cut if its client stops

    def card_response(self, environ: Mapping[str, Any]) -> HttpResponse:
        """The card for this request, whatever path it came in on (even with the route disabled)."""
        request = HttpRequest(method="GET", headers=request_headers(environ),
                              query=card_query(environ))
        base_url = self._base_url(environ, self._current().trusted_hosts)
        return self.dispatcher.card_response(request, base_url=base_url)

    def _base_url(self, environ: Mapping[str, Any], trusted: tuple[str, ...]) -> str:
        """Per-request override, else ``base_url``, else the request's trusted Host."""
        return get_base_url(environ) or self.base_url or request_base_url(environ, trusted)

    def _wake_deliverer(self) -> None:
        assembly = self._assembly
        if assembly is not None and assembly.deliverer is not None:
            assembly.deliverer.wake()

    def close(self) -> None:
        """End open streams cleanly and stop the runtime's worker pool (tests call it)."""
        assembly = self._assembly
        if assembly is None:
            return
        if assembly.deliverer is not None:
            assembly.deliverer.stop()
        assembly.runtime.close()


def _request(environ: Mapping[str, Any], method: str, path: str, max_body_bytes: int,
             record: CallRecord | None) -> HttpRequest:
    """The request as the dispatcher reads it (``record``: what telemetry learns of it)."""
    client_gone = client_gone_probe(environ)
    holder = stream_holder(environ)
    if method in ("GET", "HEAD"):  # HTTP+JSON reads: headers and query, no body
        return HttpRequest(method=method, path=path, headers=request_headers(environ),
                           query=card_query(environ), client_gone=client_gone,
                           stream_holder=holder, record=record)
    body, too_large = read_body(environ, max_body_bytes)
    return HttpRequest(method=method, path=path, headers=request_headers(environ),
                       query=dict(parse_qsl(environ["QUERY_STRING"]))
                       if environ.get("QUERY_STRING") else {},
                       body=body, body_too_large=too_large,
                       client_gone=client_gone, stream_holder=holder, record=record)


def _asked_version(environ: Mapping[str, Any]) -> str | None:
    """The version a card GET asks for: ``A2A-Version``, else ``?A2A-Version=`` (the core's
    ``asked_version``, read from the environ)."""
    header = environ["HTTP_A2A_VERSION"] if "HTTP_A2A_VERSION" in environ else None
    if header is not None and header.strip():
        return str(header)
    return card_query(environ).get("A2A-Version") if environ.get("QUERY_STRING") else None


def _fit(assembly: Assembly, environ: Mapping[str, Any]) -> str | None:
    """Why the assembled app may not serve this request (None: it may): a memory store
    chosen while one process was known, asked by a server of several."""
    if assembly.guessed_memory and environ.get("wsgi.multiprocess"):
        return str(MemoryStoreInManyProcessesError())
    return None


def _with_request_id(environ: Mapping[str, Any],
                     start_response: StartResponse) -> StartResponse:
    """``start_response`` adding the request's ``X-Request-Id``, as :func:`observe` does."""
    rid = request_id(environ)

    def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        headers.append((REQUEST_ID_HEADER, rid))
        return start_response(status, headers, exc_info)

    return start


def _server(environ: Mapping[str, Any] | None = None) -> ServerInfo:
    """This process as its server described it: what it announced (:mod:`.process`),
    and, for a request, whether WSGI says other processes serve the app."""
    server = announced() or ServerInfo()
    if environ is not None and environ.get("wsgi.multiprocess"):
        server = dataclasses.replace(server, multiprocess=True)
    return server
