"""`A2AApp`: the WSGI face of an agent (the seed's ``A2A.Plug``).

All protocol work happens in :class:`a2a_core.server.Dispatcher`; agents run
in :class:`a2a_wsgi.runtime.Runtime`. This module only turns a WSGI environ
into an :class:`~a2a_core.http.HttpRequest` (reading the body itself, so an
over-long chunked body is refused rather than silently truncated) and writes
the :class:`~a2a_core.http.HttpResponse` back.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl

from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.models import AgentCapabilities, AgentCard
from a2a_core.server import DEFAULT_BINDINGS, DEFAULT_REST_PATH, Dispatcher
from a2a_core.signing import CardSigner, SigningKey

from .admission import StreamPlaces, default_stream_limit
from .auth.wsgi import (
    AuthOption,
    RequestGuard,
    as_policy,
    check_distinct_kids,
    declared,
    principal_owner,
    protected_extended_card,
    served_jwks,
)
from .concurrency import default_agent_workers
from .disconnect import client_gone_probe
from .overrides import get_base_url, get_identity, get_metadata
from .public_url import UntrustedHostError, normalize_hosts, request_base_url
from .push import JWKS_PATH, PushDeliverer, PushPlanner, PushSettings
from .runtime import Runtime
from .serve import gunicorn_worker_config, gunicorn_worker_count, hook_gunicorn_worker
from .store_choice import MemoryStoreInManyProcessesError, choose_store
from .stores import open_store

__all__ = ["A2AApp", "DEFAULT_CARD_PATH"]

log = logging.getLogger("a2a_wsgi.app")

DEFAULT_CARD_PATH = ".well-known/agent-card.json"
_READ_SIZE = 65536
StartResponse = Callable[..., Any]


@dataclass(frozen=True)
class _Assembly:
    """The parts an app runs on, built once when it starts."""

    runtime: Runtime
    dispatcher: Dispatcher
    card: AgentCard
    deliverer: PushDeliverer | None
    #: Open streams of this process, and how many may be.
    streams: StreamPlaces
    #: Hosts whose Host header the card may advertise.
    trusted_hosts: tuple[str, ...]
    #: The store was chosen as "memory" only because no process count was known yet.
    guessed_memory: bool
    #: Authenticates each request (None: the app leaves that to a middleware).
    guard: RequestGuard | None = None


class A2AApp:
    """A WSGI application serving one agent over JSON-RPC (0.3 and 1.0) and SSE.

    Creating one starts nothing and opens nothing: the runtime, its store and
    the push worker are assembled at the first request (or :meth:`start`;
    ``serve()`` and a gunicorn worker call it), when the server says whether
    it runs several processes.

    ``base_url`` is the public URL the card advertises; left None, it comes
    from each request's Host when that host is in ``trusted_hosts`` (default:
    ``$A2A_TRUSTED_HOSTS``, comma-separated, else the loopback names; see
    :mod:`a2a_wsgi.public_url`), or per request from
    :func:`~a2a_wsgi.overrides.put_base_url`. ``agent_card_opts`` overrides
    card fields by name; ``capabilities`` may be a mapping merged into the
    agent's capabilities (e.g. ``{"push_notifications": True}``). ``store`` is
    a TaskStore or a URL ("memory", "sqlite:///path", "postgresql://…"; None:
    ``$A2A_STORE``, else memory in one process and the shared SQLite file in
    several; see :mod:`a2a_wsgi.store_choice`); ``push=True`` (or a
    :class:`~a2a_wsgi.push.PushSettings`) delivers push notifications to
    webhooks and declares them in the card (``docs/push.md``);
    ``runtime_options`` go to :class:`~a2a_wsgi.runtime.Runtime`
    (lease_seconds, retention, …).

    ``auth`` (an :class:`~a2a_wsgi.auth.AuthPolicy`, an authenticator or a list
    of them) authenticates every request but the card and the JWKS, declares
    its schemes on the card, and makes the extended card require a login;
    ``card_signing_keys`` sign every card served, their public halves at
    ``/.well-known/jwks.json`` (``docs/security.md``).
    """

    def __init__(self, agent: Any, *, base_url: str | None = None,
                 trusted_hosts: Collection[str] | None = None,
                 agent_card_path: str | None | bool = DEFAULT_CARD_PATH, json_rpc_path: str = "",
                 rest_path: str | None | bool = DEFAULT_REST_PATH,
                 bindings: Sequence[str] = DEFAULT_BINDINGS, max_streams: int | None = None,
                 agent_card_opts: Mapping[str, Any] | None = None,
                 last_modified: datetime | None = None, metadata: Mapping[str, Any] | None = None,
                 resubscribe_timeout: float = 60.0, heartbeat_interval: float = 15.0,
                 authorize_task: Callable[..., Any] | None = None, extensions: Sequence[Any] = (),
                 versions: Sequence[str] = ("0.3", "1.0"), store: Any = None,
                 max_body_bytes: int = 1_048_576, max_json_depth: int = 64, max_parts: int = 256,
                 max_workers: int | None = None,
                 extended_card: Callable[..., AgentCard] | None = None,
                 on_transition: Callable[..., None] | None = None,
                 runtime_options: Mapping[str, Any] | None = None,
                 push: PushSettings | bool | None = None, auth: AuthOption = None,
                 card_signing_keys: Sequence[SigningKey] = ()) -> None:
        self.agent = agent
        self.base_url = base_url
        self.trusted_hosts = trusted_hosts
        self.max_body_bytes = max_body_bytes
        self.push = PushSettings() if push is True else push or None
        self.store = store
        self._max_workers = max_workers
        self._runtime_options: dict[str, Any] = dict(
            on_transition=on_transition,
            resubscribe_timeout=resubscribe_timeout, heartbeat_interval=heartbeat_interval,
            extended_card=extended_card, **dict(runtime_options or {}))
        self._card_opts = agent_card_opts
        self._dispatcher_options: dict[str, Any] = dict(
            agent_card_path=agent_card_path, json_rpc_path=json_rpc_path, rest_path=rest_path,
            bindings=tuple(bindings), metadata=metadata,
            authorize_task=authorize_task, extensions=extensions, versions=tuple(versions),
            max_json_depth=max_json_depth, max_parts=max_parts,
            last_modified=last_modified or datetime.now(timezone.utc))
        self._max_streams = max_streams
        self._auth = as_policy(auth)
        self._card_signer = CardSigner(card_signing_keys) if card_signing_keys else None
        push_signer = self.push.signer if self.push is not None else None
        check_distinct_kids(self._card_signer, [k.kid for k in push_signer.keys]
                            if push_signer is not None else [])
        self._assembly: _Assembly | None = None
        self._lock = threading.Lock()
        hook_gunicorn_worker()  # in a gunicorn worker: SIGTERM ends open streams cleanly
        if gunicorn_worker_config() is not None:
            # Created in a gunicorn worker: this process serves now, so assemble at boot
            # (push deliveries resume without waiting for a request; a named in-memory
            # store for several workers refuses to boot).
            self.start()

    # -- assembly ------------------------------------------------------------------------

    def start(self, *, multiprocess: bool | None = None) -> A2AApp:
        """Assemble the app now rather than at the first request (idempotent).

        ``multiprocess`` says whether other processes serve the same app (None:
        as the gunicorn worker count says, else no).
        """
        assembly = self._assembled(_in_many_processes() if multiprocess is None else multiprocess)
        if assembly.deliverer is not None:
            assembly.deliverer.ensure_started()  # a backlog left by a restart goes out now
        return self

    def _assembled(self, multiprocess: bool) -> _Assembly:
        assembly = self._assembly
        if assembly is not None:
            return assembly
        with self._lock:
            if self._assembly is None:
                self._assembly = self._assemble(multiprocess)
            return self._assembly

    def _assemble(self, multiprocess: bool) -> _Assembly:
        spec = choose_store(self.store, multiprocess=multiprocess)
        push_options: dict[str, Any] = {
            "push_enabled": self.push is not None or _declares_push(self._card_opts)}
        if self.push is not None:
            push_options.update(push_settings=self.push,
                                push_planner=PushPlanner(default_version=self.push.default_version),
                                on_outbox=self._wake_deliverer)
        # runtime_options win over what the app derives (a push_planner of one's own, say).
        options = {"owner_key": principal_owner, **push_options, **self._runtime_options}
        options["extended_card"] = protected_extended_card(options.get("extended_card"),
                                                           self._auth)
        options["max_workers"] = (options.get("max_workers") or self._max_workers
                                  or default_agent_workers())  # known once gevent patched
        opts, policy = self._card_opts, self._auth
        runtime = Runtime(self.agent, store=open_store(spec), **options,
                          card_overrides=lambda card: declared(_apply_card_opts(card, opts),
                                                               policy))
        deliverer = (PushDeliverer(runtime.store, self.push) if self.push is not None else None)
        card = runtime.agent_card()
        limit = self._max_streams
        if limit is None:
            limit = default_stream_limit(gunicorn_worker_config())
        streams = StreamPlaces(limit)
        dispatcher = Dispatcher(runtime, stream_admission=streams, **self._dispatcher_options)
        dispatcher.card.signer = dispatcher.operations.card_signer = self._card_signer
        guard = None if policy is None else RequestGuard.for_dispatcher(
            policy, dispatcher, extended_card=options["extended_card"] is not None)
        guessed = spec == "memory" and self.store is None and not multiprocess
        return _Assembly(runtime, dispatcher, card, deliverer, streams,
                         normalize_hosts(self.trusted_hosts), guessed, guard)

    def _current(self) -> _Assembly:
        assembly = self._assembly
        return assembly if assembly is not None else self._assembled(_in_many_processes())

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
        try:
            assembly = self._assembled(bool(environ.get("wsgi.multiprocess")))
        except MemoryStoreInManyProcessesError as exc:
            log.error("%s", exc)
            return _plain(500, str(exc), start_response)
        if assembly.guessed_memory and environ.get("wsgi.multiprocess"):
            message = str(MemoryStoreInManyProcessesError())
            log.error("%s", message)
            return _plain(500, message, start_response)
        if assembly.deliverer is not None:
            assembly.deliverer.ensure_started()  # in each forked worker
        if environ.get("PATH_INFO") == JWKS_PATH:
            keys = self._jwks(assembly)
            if keys is not None:
                return _jwks_response(keys, start_response)
        method = environ.get("REQUEST_METHOD", "GET").upper()
        path = environ.get("PATH_INFO") or "/"
        identity = get_identity(environ)
        guard = assembly.guard
        if guard is not None:
            identity, refusal = guard.admit(environ, path, identity)
            if refusal is not None:
                return _respond(refusal, method, start_response)
        try:
            base_url = self._base_url(environ, assembly.trusted_hosts)
        except UntrustedHostError as exc:
            if method in ("GET", "HEAD") and path.strip("/") == assembly.dispatcher.card_path:
                return _plain(400, str(exc), start_response)
            base_url = None  # only the card and the extended card need it
        if method in ("GET", "HEAD") and path.strip("/") == assembly.dispatcher.card_path:
            # The card reads nothing but its validators and version: skip the body and the
            # full header copy (the card is the hot GET path).
            request = HttpRequest(method=method, path=path, headers=_conditional_headers(environ),
                                  query=_card_query(environ))
        elif method in ("GET", "HEAD"):  # HTTP+JSON reads: headers and query, no body
            request = HttpRequest(method=method, path=path, headers=_headers(environ),
                                  query=_card_query(environ),
                                  client_gone=client_gone_probe(environ))
        else:
            body, too_large = _read_body(environ, self.max_body_bytes)
            request = HttpRequest(method=method, path=path, headers=_headers(environ),
                                  query=dict(parse_qsl(environ.get("QUERY_STRING", ""))),
                                  body=body, body_too_large=too_large,
                                  client_gone=client_gone_probe(environ))
        refusal = guard.screen(request, identity, environ) if guard is not None else None
        if refusal is not None:
            return _respond(refusal, method, start_response)
        response = assembly.dispatcher.handle(request, base_url=base_url,
                                              metadata=get_metadata(environ),
                                              identity=identity)
        return _respond(response, method, start_response)

    def card_response(self, environ: Mapping[str, Any]) -> HttpResponse:
        """The card for this request, whatever path it came in on (even with the route disabled)."""
        request = HttpRequest(method="GET", headers=_headers(environ), query=_card_query(environ))
        base_url = self._base_url(environ, self._current().trusted_hosts)
        return self.dispatcher.card_response(request, base_url=base_url)

    def _jwks(self, assembly: _Assembly) -> dict[str, Any] | None:
        """The public keys: push signing (when delivering) and card signing, in one JWKS."""
        push_signer = self.push.signer if self.push is not None else None
        push_keys = push_signer.jwks() if push_signer and assembly.deliverer else None
        card_keys = self._card_signer.jwks() if self._card_signer is not None else None
        return served_jwks(push_keys, card_keys)

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


def _in_many_processes() -> bool:
    """What is known without a request: several gunicorn workers, or not."""
    return (gunicorn_worker_count() or 1) > 1


#: What a card GET reads: its validators, and the version that picks its variant.
_CONDITIONAL = (
    ("HTTP_IF_NONE_MATCH", "If-None-Match"),
    ("HTTP_IF_MODIFIED_SINCE", "If-Modified-Since"),
    ("HTTP_A2A_VERSION", "A2A-Version"),
)


def _card_query(environ: Mapping[str, Any]) -> dict[str, str]:
    """A card GET's query (``?A2A-Version=1.0``); the usual GET has none to parse."""
    query = environ.get("QUERY_STRING")
    return dict(parse_qsl(query)) if query else {}


def _conditional_headers(environ: Mapping[str, Any]) -> Headers:
    return Headers([(name, environ[key]) for key, name in _CONDITIONAL if key in environ])


def _respond(response: HttpResponse, method: str,
             start_response: StartResponse) -> Iterable[bytes]:
    """Write ``response``: a whole body with its length, a stream closing its producer."""
    headers = list(response.headers)
    if isinstance(response.body, bytes):
        if method == "HEAD":
            start_response(_status_line(response.status), headers)
            return [b""]
        # A known length spares the server chunked framing (and the client a guess).
        headers.append(("Content-Length", str(len(response.body))))
        start_response(_status_line(response.status), headers)
        return [response.body]
    start_response(_status_line(response.status), headers)
    return _ClosingIterator(response.body)


def _jwks_response(jwks: Mapping[str, Any], start_response: StartResponse) -> list[bytes]:
    """The public signing keys (cacheable: rotation keeps old keys published a while)."""
    body = json.dumps(jwks).encode()
    start_response("200 OK", [("Content-Type", "application/jwk-set+json"),
                              ("Cache-Control", "public, max-age=300"),
                              ("Content-Length", str(len(body)))])
    return [body]


def _declares_push(opts: Mapping[str, Any] | None) -> bool:
    """Push is off until webhook delivery exists (issue 6), unless the opts declare it."""
    caps = (opts or {}).get("capabilities")
    if isinstance(caps, AgentCapabilities):
        return bool(caps.push_notifications)
    return bool(caps.get("push_notifications")) if isinstance(caps, Mapping) else False


def _apply_card_opts(card: AgentCard, opts: Mapping[str, Any] | None) -> AgentCard:
    """The runtime's card (capabilities it implements) with the deployment's overrides on top."""
    caps = card.capabilities
    overrides = dict(opts or {})
    given = overrides.pop("capabilities", None)
    if isinstance(given, AgentCapabilities):
        caps = given
    elif given is not None:
        caps = dataclasses.replace(caps, **given)
    return dataclasses.replace(card, capabilities=caps, **overrides)


def _read_body(environ: Mapping[str, Any], limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of body, and whether there was more.

    A declared Content-Length over the limit is refused unread. Without one
    (chunked), the stream is read up to limit + 1 bytes only when the server
    says it terminates (``wsgi.input_terminated``); reading it otherwise
    could block forever, so such a body is taken as empty.
    """
    stream = environ.get("wsgi.input")
    declared = environ.get("CONTENT_LENGTH") or ""
    if stream is None:
        return b"", False
    if declared.strip():
        try:
            length = int(declared)
        except ValueError:
            return b"", False
        if length > limit:
            return b"", True
        return _read_up_to(stream, length), False
    if not environ.get("wsgi.input_terminated"):
        return b"", False
    data = _read_up_to(stream, limit + 1)
    return (b"", True) if len(data) > limit else (data, False)


def _read_up_to(stream: Any, size: int) -> bytes:
    """Read until ``size`` bytes or EOF (``read(n)`` may return less than n)."""
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = stream.read(min(remaining, _READ_SIZE))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _headers(environ: Mapping[str, Any]) -> Headers:
    """Request headers back from their CGI spelling (HTTP_ACCEPT -> Accept)."""
    pairs = [(key[5:].replace("_", "-"), str(value)) for key, value in environ.items()
             if key.startswith("HTTP_")]
    pairs += [(key.replace("_", "-"), str(environ[key]))
              for key in ("CONTENT_TYPE", "CONTENT_LENGTH") if environ.get(key)]
    return Headers(pairs)


def _plain(status: int, text: str, start_response: StartResponse) -> list[bytes]:
    body = text.encode()
    start_response(_status_line(status), [("Content-Type", "text/plain; charset=utf-8"),
                                          ("Content-Length", str(len(body)))])
    return [body]


def _status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


class _ClosingIterator:
    """A streamed body whose ``close()`` (the server's, on disconnect too) closes the producer.

    A generator wrapper would not do: closing a generator that never started
    skips its ``finally``, leaving the dispatcher's iterator open.
    """

    def __init__(self, body: Iterator[bytes]) -> None:
        self._body = body

    def __iter__(self) -> _ClosingIterator:
        return self

    def __next__(self) -> bytes:
        return next(self._body)

    def close(self) -> None:
        close = getattr(self._body, "close", None)
        if close is not None:
            close()
