"""Building a running server from an app's settings, in one place.

:func:`assemble` is called once per process, when the app starts (its first
request, or ``A2AApp.start()``): it chooses the store knowing whether other
processes serve the same app, builds the runtime, the dispatcher, the push
worker and the request guard, and sizes the stream places for the server it
runs under. Each card variant the app serves is checked against the published schema
(:mod:`.card_schema`), so an app whose card breaks it does not start. Nothing here runs at
import or when an app is created.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from a2a_core.generations import GenerationsExtension
from a2a_core.models import AgentCapabilities, AgentCard
from a2a_core.server import Dispatcher
from a2a_core.signing import CardSigner

from .admission import StreamPlaces
from .agent import Agent
from .auth.base import AuthPolicy
from .auth.wsgi import (
    RequestGuard,
    as_policy,
    declared,
    declared_extended_card,
    principal_owner,
)
from .card_schema import check_served_card
from .process import ServerInfo
from .public_url import normalize_hosts
from .push import PushDeliverer
from .runtime import Runtime
from .settings import AppSettings
from .store_choice import choose_store
from .stores import open_store

__all__ = ["Assembly", "assemble"]


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
    #: Signs served cards (None: unsigned).
    card_signer: CardSigner | None

    def start_work(self) -> None:
        """Start this process's background work: push deliveries (a backlog left by a
        restart goes out now) and the lease keeper (expired leases of a dead worker's
        tasks, running or queued, are reclaimed without waiting for a run). Cheap once
        started; again in a forked worker of an app assembled in the gunicorn master."""
        if self.deliverer is not None:
            self.deliverer.ensure_started()
        self.runtime.start_keeper()


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
    signer = CardSigner(card.signing_keys) if card.signing_keys else None
    dispatcher = Dispatcher(
        runtime,
        stream_admission=streams,
        agent_card_path=card.path,
        json_rpc_path=protocol.json_rpc_path,
        rest_path=protocol.rest_path,
        bindings=protocol.bindings,
        metadata=protocol.metadata,
        authorize_task=protocol.authorize_task,
        extensions=(*protocol.extensions,
                    *((GenerationsExtension(),) if protocol.preview_generations else ())),
        versions=protocol.versions,
        max_json_depth=limits.max_json_depth,
        max_parts=limits.max_parts,
        last_modified=card.last_modified or datetime.now(timezone.utc),
        card_signer=signer,  # the public variants and the extended card alike
        challenge=guard.challenge if guard is not None else None,
        grpc_url=protocol.grpc_url or os.environ.get("A2A_GRPC_URL") or None,
    )
    check_served_card(dispatcher.card, settings.base_url)  # a card off the schema never serves
    guessed = spec == "memory" and settings.store is None and not server.multiprocess
    return Assembly(runtime, dispatcher, runtime.agent_card(), deliverer, streams,
                    normalize_hosts(card.trusted_hosts), guessed, guard, signer)


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
