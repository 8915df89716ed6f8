"""``A2AClient``: every A2A operation of both protocol versions, as blocking calls.

::

    with A2AClient("https://host/agents/calc") as agent:
        task = agent.send_and_wait("What is 2 + 3?")
        print(task.status.state, agent.server_version)

The client reads the agent card lazily (cached, revalidated with a conditional GET),
picks the interface, the dialect (``version="auto"``: 1.0 where the card offers it,
else 0.3) and the binding (``binding="auto"``: JSON-RPC or HTTP+JSON, in the card's
order; GRPC when asked for; :mod:`a2a_client._bindings`), and speaks them: method names
or paths, parameter shapes and headers follow the choice; answers are decoded tolerantly.
Errors raise the core's classes over any binding (a ``TaskNotFoundError`` raised by the
server is one here too); transport failures raise :mod:`a2a_client._errors`.

Every request has a timeout: ``timeout=(connect, read)`` for calls, and
``(connect, stream_idle_timeout)`` for streams, where the read timeout bounds the gap
between two chunks (heartbeat comments count), not the stream's life.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import requests

from a2a_core._caching import CardCache
from a2a_core.models import (
    AgentCard,
    GetExtendedAgentCardRequest,
    Message,
    PushNotificationConfig,
    SendResult,
    StreamEvent,
    Task,
)
from a2a_core.optable import AnyOperation, Operation, OperationSpec

from ._bindings import GRPC, JSONRPC, as_bindings, choose_endpoint
from ._cards import Endpoint, card_url_for, fetch_card, utc_now
from ._channel import Channel
from ._channels import Channels
from ._coerce import as_url_or_card
from ._grpc import grpc_http_url
from ._polling import DEFAULT_POLL_EVERY, DEFAULT_WAIT_TIMEOUT, is_settled
from ._rest import rest_stream_event
from ._rpc import TimeoutLike, as_timeout, stream_event
from ._sending import send_request
from ._streaming import StreamOperations
from ._streams import DEFAULT_EVENT_TIMEOUT, DEFAULT_MAX_EVENT_SIZE
from ._transport import DEFAULT_TIMEOUT, Reply, Transport
from ._waiting import LongPoll, Subscribe, known_card, preview_long_poll
from .auth import as_auth, as_card_verifier

__all__ = ["A2AClient", "DEFAULT_STREAM_IDLE_TIMEOUT", "TimeoutLike"]

#: Seconds a stream may stay silent (no event, no heartbeat) before it counts as dropped.
DEFAULT_STREAM_IDLE_TIMEOUT = 60.0

Req = TypeVar("Req")
Res = TypeVar("Res")


class A2AClient(StreamOperations):
    """A blocking client for one remote agent.

    :param url_or_card: the agent's base URL (its card is at
        ``<url>/.well-known/agent-card.json``), the card's own URL, or an
        :class:`~a2a_core.models.AgentCard` already in hand (or its JSON as a dict).
    :param session: a :class:`requests.Session` to borrow (adapters, retries, ``auth``);
        it is never closed by us.
    :param timeout: ``(connect, read)`` seconds for every call (a float sets both).
    :param stream_idle_timeout: seconds a stream may stay silent (no byte at all).
    :param event_timeout: seconds a stream may hand on no event (comments and keep-alives
        do not count; None: no limit but ``stream_idle_timeout``): past it the stream
        raises :class:`~a2a_client._errors.ReadTimeout`.
    :param max_event_size: the longest stream event (and line) read, in bytes of UTF-8:
        past it the stream raises :class:`~a2a_core.errors.RemoteProtocolError`.
    :param version: ``"auto"``, ``"0.3"`` or ``"1.0"``.
    :param binding: ``"auto"`` (the card's order), ``"JSONRPC"``, ``"HTTP+JSON"``,
        ``"GRPC"`` (the ``grpc`` extra; never chosen by "auto"), or a sequence of those in
        the caller's order of preference.
    :param extensions: extension URIs to request (``A2A-Extensions``).
    :param headers: custom headers; ``${NAME}`` in values expands from the environment
        at every request and never appears in reprs, logs or errors.
    :param endpoint: the interface URL, to skip the card's interfaces (with a pinned
        ``version`` and a single ``binding`` no card is fetched at all).
    :param card_cache: share one :class:`~a2a_core._caching.CardCache` between clients.
    :param max_reconnects: resubscriptions in a row without progress before a stream gives up.
    :param reconnect_delay: seconds before a resubscription (times the attempt number).
    :param environ: where ``${NAME}`` is looked up (default: ``os.environ`` at each request).
    :param auth: credentials (a requests ``AuthBase``, a bearer token, ``(user, password)``
        or a token provider), sent only to the agent's own origins (the URL given,
        ``endpoint=``, ``auth_origins=``), never on a redirect away from them.
    :param auth_origins: more URLs whose origin may receive ``auth`` (an interface the
        card names on another origin).
    :param verify_card: trusted keys (a key, JWK, JWKS or a list) or a
        :class:`~a2a_client.auth.CardVerifier`: a public or extended card whose
        signature does not verify raises :class:`~a2a_core.signing.SignatureError`.
    """

    def __init__(
        self,
        url_or_card: str | AgentCard | Mapping[str, Any],
        *,
        session: requests.Session | None = None,
        timeout: TimeoutLike = DEFAULT_TIMEOUT,
        stream_idle_timeout: float = DEFAULT_STREAM_IDLE_TIMEOUT,
        event_timeout: float | None = DEFAULT_EVENT_TIMEOUT,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        version: str = "auto",
        binding: str | Sequence[str] = "auto",
        extensions: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        endpoint: str | None = None,
        card_cache: CardCache | None = None,
        max_reconnects: int = 3,
        reconnect_delay: float = 0.5,
        environ: Mapping[str, str] | None = None,
        auth: Any = None,
        auth_origins: Iterable[str] = (),
        verify_card: Any = None,
    ) -> None:
        if version not in ("auto", "0.3", "1.0"):
            raise ValueError(f'version must be "auto", "0.3" or "1.0", not {version!r}')
        url_or_card = as_url_or_card(url_or_card)
        self._bindings = as_bindings(binding, version)
        self._verify = as_card_verifier(verify_card)
        self._url = url_or_card if isinstance(url_or_card, str) else None
        self._card = None if isinstance(url_or_card, str) else url_or_card
        self._card_url: str | None = card_url_for(self._url) if self._url else None
        self._discovery_url = self._url  # becomes the card's own URL once found
        self.timeout = as_timeout(timeout, DEFAULT_TIMEOUT)
        self.stream_idle_timeout = as_timeout(stream_idle_timeout, self.timeout)[1]
        if event_timeout is not None and event_timeout <= 0:
            raise ValueError("event_timeout must be > 0 (or None)")
        if max_event_size < 1:
            raise ValueError("max_event_size must be positive")
        self.event_timeout, self.max_event_size = event_timeout, max_event_size
        self.requested_version = version
        self.extensions = tuple(extensions)
        self.max_reconnects = max_reconnects
        self.reconnect_delay = reconnect_delay
        self._pinned_endpoint = endpoint
        self._endpoint: Endpoint | None = None
        self._cache = card_cache if card_cache is not None else CardCache()
        own = [u for u in (self._url, endpoint) if u]
        self._transport = Transport(session, headers=headers, environ=environ,
                                    auth=as_auth(auth), auth_origins=[*own, *auth_origins])
        self._channels = Channels(self._transport, lambda: self.endpoint, self.extensions,
                                  headers=headers, environ=environ)
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        where = self._url or (self._card.name if self._card else "?")
        return f"<A2AClient {where!r} version={self.requested_version!r}>"

    # -- lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> A2AClient:
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release our session (a borrowed one is left open), gRPC channels. Idempotent."""
        if not self._closed:
            self._closed = True
            self._channels.close()
            self._transport.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this A2AClient is closed")

    # -- discovery ------------------------------------------------------------------------

    def get_card(self, *, refresh: bool = False) -> AgentCard:
        """The agent card: cached while fresh; ``refresh=True`` revalidates (a 304 reuses it)."""
        self._check_open()
        if self._card_url is None or self._discovery_url is None:
            if self._card is None:
                raise RuntimeError("no card URL and no card")
            return self._card
        if self._card is None or refresh or self._cache.fresh(self._card_url, utc_now()) is None:
            try:
                card, self._card_url = fetch_card(
                    self._transport,
                    self._discovery_url,
                    self._cache,
                    timeout=self.timeout,
                    now=utc_now,
                    revalidate=refresh,
                    check=self._verify,
                )
            except BaseException:
                self._card = None  # a card that fails its check is not kept either
                raise
            with self._lock:
                self._card, self._discovery_url = card, self._card_url
        return self._card

    def get_extended_card(self) -> AgentCard:
        """GetExtendedAgentCard; it replaces the public card for this client (spec SHOULD).

        With ``verify_card``, an extended card whose signature does not verify raises,
        and the card held so far is dropped (the next use fetches the public card again).
        """
        self._check_open()
        request = GetExtendedAgentCardRequest()
        try:
            card = self._channel.call(Operation.GET_EXTENDED_AGENT_CARD, request, self.timeout,
                                      self._verify)
        except BaseException:
            if self._verify is not None:
                self._forget_card()
            raise
        with self._lock:
            self._card = card
        return self._card

    def _forget_card(self) -> None:
        """Drop the card held (when it can be fetched again) and its cached copy."""
        with self._lock:
            if self._card_url is not None:
                self._card = None
                self._cache.discard(self._card_url)

    @property
    def card(self) -> AgentCard:
        """The card, fetched on first use."""
        card = self._card
        return card if card is not None else self.get_card()

    @property
    def endpoint(self) -> Endpoint:
        """The interface URL, dialect, tenant and binding in use (resolved on first use)."""
        if self._endpoint is None:
            self._endpoint = endpoint = self._resolve_endpoint()
            if self._url is None or endpoint.url == self._pinned_endpoint:  # the caller's own
                self._transport.trust(grpc_http_url(endpoint.url) if endpoint.binding == GRPC
                                      else endpoint.url)
        return self._endpoint

    @property
    def version(self) -> str:
        """The protocol version this client speaks ("0.3" or "1.0")."""
        return self.endpoint.version

    @property
    def binding(self) -> str:
        """The binding this client speaks ("JSONRPC", "HTTP+JSON" or "GRPC")."""
        return self.endpoint.binding

    def _resolve_endpoint(self) -> Endpoint:
        """A pinned endpoint, version and binding need no card; everything else reads it."""
        pinned, version, bindings = self._pinned_endpoint, self.requested_version, self._bindings
        if pinned is not None and bindings is not None and len(bindings) == 1:
            if version != "auto" or bindings[0] != JSONRPC:  # HTTP+JSON, GRPC: 1.0 only
                return Endpoint(url=pinned, version="1.0" if version == "auto" else version,
                                binding=bindings[0])
        if pinned is not None and version != "auto" and bindings is None:
            return Endpoint(url=pinned, version=version)
        chosen = choose_endpoint(self.card, self._card_url, version, bindings)
        return dataclasses.replace(chosen, url=pinned) if pinned is not None else chosen

    # -- the binding ----------------------------------------------------------------------

    @property
    def _channel(self) -> Channel:
        return self._channels.get(self.endpoint.binding)

    @property
    def server_version(self) -> str | None:
        """``A2A-Version`` the server echoed on its last answer (None: it sent none)."""
        return self._channel.server_version

    @property
    def activated_extensions(self) -> tuple[str, ...]:
        """Extensions the server reported active on its last answer."""
        return self._channel.activated_extensions

    def _call(self, op: OperationSpec[Req, Res], request: Req,
              timeout: TimeoutLike | None = None) -> Res:
        """One call, decoded into the operation's result model (see Channel.call)."""
        self._check_open()
        return self._channel.call(op, request, as_timeout(timeout, self.timeout))

    def _open_stream(self, op: AnyOperation, request: object,
                     last_event_id: str | None = None) -> Reply:
        self._check_open()
        timeout = (self.timeout[0], self.stream_idle_timeout)
        return self._channel.open_stream(op, request, timeout, last_event_id)

    def _event_decoder(self) -> Callable[[Any], StreamEvent]:
        """HTTP+JSON's and gRPC's events are 1.0 JSON; JSON-RPC's are responses."""
        return rest_stream_event if self.endpoint.binding != JSONRPC else stream_event

    # -- messages -------------------------------------------------------------------------

    def send_message(
        self,
        message: str | Message | Mapping[str, Any],
        *,
        context_id: str | None = None,
        task_id: str | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        push_notification_config: PushNotificationConfig | Mapping[str, Any] | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: TimeoutLike | None = None,
    ) -> SendResult:
        """SendMessage (``message/send``): a Task, or a Message for a direct reply.

        ``blocking=True`` lets the server hold the call until the task settles; give a
        ``timeout`` that covers the agent's work, or send ``blocking=False`` and
        :meth:`wait`.
        """
        request = send_request(
            message,
            context_id=context_id,
            task_id=task_id,
            blocking=blocking,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_notification_config=push_notification_config,
            metadata=metadata,
        )
        return self._call(Operation.SEND_MESSAGE, request, timeout)

    # -- waiting (wait() is in TaskOperations, streams in StreamOperations) ---------------

    def _wait_paths(self, history_length: int | None) -> tuple[LongPoll | None, Subscribe | None]:
        """Long-poll and stream, as the card (held, or fetched once; none: polling) allows."""
        card = known_card(self._card, self.get_card if self._card_url is not None else None)
        long_poll = preview_long_poll(card, self._transport, self.endpoint, self.extensions,
                                      self.timeout, history_length)
        return long_poll, (self.subscribe if card and card.capabilities.streaming else None)

    def send_and_wait(
        self,
        message: str | Message | Mapping[str, Any],
        *,
        poll_every: float = DEFAULT_POLL_EVERY,
        timeout: float = DEFAULT_WAIT_TIMEOUT,
        on_update: Callable[[Task, float], None] | None = None,
        cancel: threading.Event | None = None,
        **send_options: Any,
    ) -> SendResult:
        """Send without blocking, then :meth:`wait`. A direct Message reply is returned as is.

        A send whose answer is already settled (an agent that answers at once) is
        returned without another request.
        """
        result = self.send_message(message, blocking=False, **send_options)
        if isinstance(result, Message) or is_settled(result):
            return result
        return self.wait(result.id, poll_every=poll_every, timeout=timeout,
                         on_update=on_update, cancel=cancel, first=result,
                         history_length=send_options.get("history_length"))
