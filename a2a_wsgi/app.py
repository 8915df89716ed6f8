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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import parse_qsl

from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.models import AgentCapabilities, AgentCard
from a2a_core.server import Dispatcher
from a2a_core.service import A2AService

from .disconnect import client_gone_probe
from .overrides import get_base_url, get_identity, get_metadata
from .push import JWKS_PATH, PushDeliverer, PushPlanner, PushSettings
from .runtime import Runtime
from .serve import hook_gunicorn_worker

__all__ = ["A2AApp", "DEFAULT_CARD_PATH"]

DEFAULT_CARD_PATH = ".well-known/agent-card.json"
_READ_SIZE = 65536
StartResponse = Callable[..., Any]


class A2AApp:
    """A WSGI application serving one agent over JSON-RPC (0.3 and 1.0) and SSE.

    ``base_url`` may be left None and set later (``serve()`` does) or per
    request with :func:`~a2a_wsgi.overrides.put_base_url`. ``agent_card_opts``
    overrides card fields by name; ``capabilities`` may be a mapping merged
    into the agent's capabilities (e.g. ``{"push_notifications": True}``).
    ``store`` is a TaskStore or a URL ("memory", "sqlite:///path",
    "postgresql://…"; None reads ``$A2A_STORE``, else memory); ``push=True`` (or a
    :class:`~a2a_wsgi.push.PushSettings`) delivers push notifications to webhooks
    and declares them in the card (``docs/push.md``); ``runtime_options``
    go to :class:`~a2a_wsgi.runtime.Runtime` (lease_seconds, retention, …).
    """

    def __init__(self, agent: Any, *, base_url: str | None = None,
                 agent_card_path: str | None | bool = DEFAULT_CARD_PATH, json_rpc_path: str = "",
                 agent_card_opts: Mapping[str, Any] | None = None,
                 last_modified: datetime | None = None, metadata: Mapping[str, Any] | None = None,
                 resubscribe_timeout: float = 60.0, heartbeat_interval: float = 15.0,
                 authorize_task: Callable[..., Any] | None = None, extensions: Sequence[Any] = (),
                 versions: Sequence[str] = ("0.3", "1.0"), store: Any = None,
                 max_body_bytes: int = 1_048_576, max_json_depth: int = 64, max_parts: int = 256,
                 max_workers: int = 8,
                 extended_card: Callable[..., AgentCard] | None = None,
                 on_transition: Callable[..., None] | None = None,
                 runtime_options: Mapping[str, Any] | None = None,
                 push: PushSettings | bool | None = None) -> None:
        self.base_url = base_url
        self.max_body_bytes = max_body_bytes
        self.push = PushSettings() if push is True else push or None
        #: The webhook delivery worker of this process (None when push is off).
        self.deliverer: PushDeliverer | None = None
        push_options: dict[str, Any] = {
            "push_enabled": self.push is not None or _declares_push(agent_card_opts)}
        if self.push is not None:
            push_options.update(push_settings=self.push,
                                push_planner=PushPlanner(default_version=self.push.default_version),
                                on_outbox=self._wake_deliverer)
        self.runtime = Runtime(agent, store=store, max_workers=max_workers,
                               on_transition=on_transition, resubscribe_timeout=resubscribe_timeout,
                               heartbeat_interval=heartbeat_interval, extended_card=extended_card,
                               **push_options, **dict(runtime_options or {}))
        self.deliverer = (PushDeliverer(self.runtime.store, self.push)
                          if self.push is not None else None)
        if self.deliverer is not None:
            self.deliverer.ensure_started()
        self.card = _apply_card_opts(self.runtime.agent_card(), agent_card_opts)
        service = cast(A2AService, _CardService(self.runtime, self.card))
        self.dispatcher = Dispatcher(
            service, agent_card_path=agent_card_path, json_rpc_path=json_rpc_path,
            metadata=metadata, authorize_task=authorize_task, extensions=extensions,
            versions=tuple(versions), max_json_depth=max_json_depth, max_parts=max_parts,
            last_modified=last_modified or datetime.now(timezone.utc))
        hook_gunicorn_worker()  # in a gunicorn worker: SIGTERM ends open streams cleanly

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if self.deliverer is not None:
            self.deliverer.ensure_started()  # again in each forked worker
            signer = self.push.signer if self.push is not None else None
            if signer is not None and environ.get("PATH_INFO") == JWKS_PATH:
                return _jwks_response(signer.jwks(), start_response)
        method = environ.get("REQUEST_METHOD", "GET").upper()
        path = environ.get("PATH_INFO") or "/"
        if method in ("GET", "HEAD"):
            # Only the card answers GET, and it reads nothing but the validators:
            # skip the body and the header copy (the card is the hot GET path).
            request = HttpRequest(method=method, path=path, headers=_conditional_headers(environ))
        else:
            body, too_large = _read_body(environ, self.max_body_bytes)
            request = HttpRequest(method=method, path=path, headers=_headers(environ),
                                  query=dict(parse_qsl(environ.get("QUERY_STRING", ""))),
                                  body=body, body_too_large=too_large,
                                  client_gone=client_gone_probe(environ))
        response = self.dispatcher.handle(request, base_url=self._base_url(environ),
                                          metadata=get_metadata(environ),
                                          identity=get_identity(environ))
        headers = list(response.headers)
        if isinstance(response.body, bytes):
            # A known length spares the server chunked framing (and the client a guess).
            if method != "HEAD":
                headers.append(("Content-Length", str(len(response.body))))
            start_response(_status_line(response.status), headers)
            return [response.body]
        start_response(_status_line(response.status), headers)
        return _ClosingIterator(response.body)

    def card_response(self, environ: Mapping[str, Any]) -> HttpResponse:
        """The card for this request, whatever path it came in on (even with the route disabled)."""
        request = HttpRequest(method="GET", headers=_headers(environ))
        return self.dispatcher.card_response(request, base_url=self._base_url(environ))

    def _base_url(self, environ: Mapping[str, Any]) -> str | None:
        return get_base_url(environ) or self.base_url

    def _wake_deliverer(self) -> None:
        if self.deliverer is not None:
            self.deliverer.wake()

    def close(self) -> None:
        """End open streams cleanly and stop the runtime's worker pool (tests call it)."""
        if self.deliverer is not None:
            self.deliverer.stop()
        close = getattr(self.runtime, "close", None)
        if close is not None:
            close()


_CONDITIONAL = (
    ("HTTP_IF_NONE_MATCH", "If-None-Match"),
    ("HTTP_IF_MODIFIED_SINCE", "If-Modified-Since"),
)


def _conditional_headers(environ: Mapping[str, Any]) -> Headers:
    return Headers([(name, environ[key]) for key, name in _CONDITIONAL if key in environ])


class _CardService:
    """The runtime, answering ``agent_card()`` with the card derived once at start-up."""

    def __init__(self, runtime: Runtime, card: AgentCard) -> None:
        self._runtime, self._card = runtime, card

    def agent_card(self) -> AgentCard:
        return self._card

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)


def _jwks_response(jwks: Mapping[str, Any], start_response: StartResponse) -> list[bytes]:
    """The push-signing public keys (cacheable: rotation keeps old keys published a while)."""
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
