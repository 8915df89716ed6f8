"""Building a running server from an app's settings, in one place.

:func:`assemble` is called once per process, when the app starts (its first
request, or ``A2AApp.start()``): it chooses the store knowing whether other
processes serve the same app, builds the runtime, the dispatcher, the push
worker and the request guard, and sizes the stream places for the server it
runs under. The core's one configuration (:class:`~a2a_core._server.DispatcherConfig`)
is built here from the settings groups (:func:`core_config`), and so are the
applications of the route table's mounts (the inspector page). Each card variant the
app serves is checked against the published schema (:mod:`._card_schema`), so an app
whose card breaks it does not start. Nothing here runs at import or when an app is
created.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from a2a_core._generations import GenerationsExtension
from a2a_core._jsonvalue import JSONObject
from a2a_core._server import Dispatcher, DispatcherConfig
from a2a_core.models import AgentCapabilities, AgentCard
from a2a_core.signing import JWKS_PATH, CardSigner

from ._admission import StreamPlaces
from ._agent import Agent
from ._card_schema import check_served_card
from ._process import ServerInfo
from ._public_url import load_host_checks, normalize_hosts
from ._runtime import Runtime
from ._store_choice import choose_store
from ._wsgi_io import StartResponse
from .auth._base import AuthPolicy
from .auth._wsgi import (
    RequestGuard,
    as_policy,
    declared,
    declared_extended_card,
    principal_owner,
    served_jwks,
)
from .push import PushDeliverer, PushSigner
from .settings import AppSettings
from .stores import open_store

__all__ = ["Assembly", "Mounted", "assemble", "core_config"]

#: A WSGI application answering a mount's paths (``environ, start_response -> body``).
Mounted = Callable[[dict[str, object], StartResponse], Iterable[bytes]]


@dataclass(frozen=True)
class Assembly:
    """The parts an app runs on in this process."""

    runtime: Runtime
    dispatcher: Dispatcher
    #: The agent's card with the deployment's overrides (endpoints not filled in).
    card: AgentCard
    #: The webhook delivery worker (None when push is off).
    deliverer: PushDeliverer | None
    #: Open streams of this process, and how many may be.
    streams: StreamPlaces
    #: Hosts whose Host header the card may advertise.
    trusted_hosts: tuple[str, ...]
    #: The store was chosen as "memory" only because no process count was known yet.
    guessed_memory: bool
    #: Authenticates each request (None: identity comes from put_identity only).
    guard: RequestGuard | None
    #: The applications of the route table's mounts, by prefix (the inspector page).
    mounts: Mapping[str, Mounted]
    #: The process (its fork count) that last started the background work (-1: none yet).
    _worked_in: list[int] = dataclasses.field(default_factory=lambda: [-1], repr=False,
                                              compare=False)

    def start_work(self) -> None:
        """Start this process's background work: push deliveries (a backlog left by a
        restart goes out now) and the lease keeper (expired leases of a dead worker's
        tasks, running or queued, are reclaimed without waiting for a run). Once per
        process: again in a forked worker of an app assembled in the gunicorn master."""
        process = _FORKS[0]
        if self._worked_in[0] == process:  # (every request asks: one comparison, no getpid)
            return
        if self.deliverer is not None:
            self.deliverer.ensure_started()
        self.runtime.start_keeper()
        self._worked_in[0] = process


#: How many forks made this process (the master's 0, a worker's 1): a forked worker's
#: background work is its own to start.
_FORKS = [0]


def _forked() -> None:
    _FORKS[0] += 1


os.register_at_fork(after_in_child=_forked)


def assemble(agent: Agent, settings: AppSettings, *, server: ServerInfo,
             wake_deliverer: Callable[[], None]) -> Assembly:
    """The server for ``settings`` in a process ``server`` describes."""
    spec = choose_store(settings.store, multiprocess=server.multiprocess)
    policy = as_policy(settings.auth)
    card, protocol, limits = settings.card, settings.protocol, settings.limits
    guard = None if policy is None else RequestGuard(policy)
    runtime = Runtime(
        agent,
        dataclasses.replace(settings.runtime,
                            owner_key=settings.runtime.owner_key or principal_owner),
        store=open_store(spec),
        streams=settings.streams,
        push=settings.push,
        on_outbox=wake_deliverer if settings.push is not None else None,
        extended_card=declared_extended_card(card.extended_card, policy),
        card_overrides=lambda agent_card: _served_card(agent_card, card.overrides, policy),
        generations=protocol.preview_generations,
    )
    deliverer = PushDeliverer(runtime.store, settings.push) if settings.push else None
    limit = limits.max_streams if limits.max_streams is not None else server.stream_limit
    streams = StreamPlaces(limit)
    config = core_config(settings)
    push_signer = settings.push.signer if settings.push is not None and deliverer else None
    dispatcher = Dispatcher(
        runtime, config,
        stream_admission=streams,
        challenge=guard.challenge if guard is not None else None,
        public_keys=lambda: _public_keys(push_signer, config.card_signer),
    )
    check_served_card(dispatcher.card, settings.base_url)  # a card off the schema never serves
    if settings.base_url is None:
        load_host_checks()  # each request then checks its Host header
    guessed = spec == "memory" and settings.store is None and not server.multiprocess
    return Assembly(runtime, dispatcher, runtime.agent_card(), deliverer, streams,
                    normalize_hosts(card.trusted_hosts), guessed, guard, _mounts(settings))


def core_config(settings: AppSettings) -> DispatcherConfig:
    """The core's one configuration, from the app's settings groups (read here only)."""
    card, protocol, limits = settings.card, settings.protocol, settings.limits
    return DispatcherConfig(
        last_modified=card.last_modified or datetime.now(timezone.utc),
        agent_card_path=card.path,
        json_rpc_path=protocol.json_rpc_path,
        rest_path=protocol.rest_path,
        jwks_path=JWKS_PATH,  # public: a client reads the keys before it can log in
        mounts=(_INSPECTOR,) if settings.inspector else (),
        bindings=protocol.bindings,
        metadata=protocol.metadata,
        authorize_task=protocol.authorize_task,
        extensions=(*protocol.extensions,
                    *((GenerationsExtension(),) if protocol.preview_generations else ())),
        versions=protocol.versions,
        max_json_depth=limits.max_json_depth,
        max_parts=limits.max_parts,
        # the public variants and the extended card alike
        card_signer=CardSigner(card.signing_keys) if card.signing_keys else None,
        grpc_url=protocol.grpc_url or os.environ.get("A2A_GRPC_URL") or None,
    )


#: Where the inspector page is mounted: ``a2a_wsgi._inspector.INSPECTOR_PATH``, whose
#: package loads the page's files, so only an app that turns the page on imports it.
_INSPECTOR = "inspector"


def _mounts(settings: AppSettings) -> Mapping[str, Mounted]:
    """The applications answering the mounts :func:`core_config` lists."""
    if not settings.inspector:
        return {}
    from ._inspector._app import INSPECTOR_PATH, inspector_mount

    if INSPECTOR_PATH.strip("/") != _INSPECTOR:  # pragma: no cover - one name, two places
        raise AssertionError(INSPECTOR_PATH)
    return {_INSPECTOR: inspector_mount}


def _public_keys(push_signer: PushSigner | None,
                 card_signer: CardSigner | None) -> JSONObject | None:
    """The keys served at the JWKS path: push signing (when this process delivers) and
    card signing, in one JWKS; None when there is neither."""
    return served_jwks(push_signer.jwks() if push_signer is not None else None,
                       card_signer.jwks() if card_signer is not None else None)


def _served_card(card: AgentCard, overrides: Mapping[str, object] | None,
                 policy: AuthPolicy | None) -> AgentCard:
    """The runtime's card with the deployment's overrides and the auth policy's schemes."""
    return declared(_apply_card_opts(card, overrides), policy)


def _apply_card_opts(card: AgentCard, opts: Mapping[str, object] | None) -> AgentCard:
    """The runtime's card (capabilities it implements) with the deployment's overrides on top."""
    caps = card.capabilities
    overrides = dict(opts or {})
    given = overrides.pop("capabilities", None)
    if isinstance(given, AgentCapabilities):
        caps = given
    elif isinstance(given, Mapping):
        caps = dataclasses.replace(caps, **given)
    elif given is not None:
        raise TypeError("CardSettings.overrides['capabilities'] is an AgentCapabilities "
                        f"or a mapping, not {type(given).__name__}")
    replace_fields: _ReplaceCard = dataclasses.replace  # the names: checked by CardSettings
    return replace_fields(card, capabilities=caps, **overrides)


class _ReplaceCard(Protocol):
    def __call__(self, card: AgentCard, /, **changes: object) -> AgentCard: ...
