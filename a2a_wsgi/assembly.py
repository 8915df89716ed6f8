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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from a2a_core.generations import GenerationsExtension
from a2a_core.models import AgentCapabilities, AgentCard
from a2a_core.server import Dispatcher
from a2a_core.signing import CardSigner

from .admission import StreamPlaces, default_stream_limit
from .auth.wsgi import (
    RequestGuard,
    as_policy,
    declared,
    declared_extended_card,
    principal_owner,
)
from .card_schema import check_served_card
from .concurrency import default_agent_workers
from .public_url import normalize_hosts
from .push import PushDeliverer, PushPlanner
from .runtime import Runtime
from .serve import gunicorn_worker_config
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


def assemble(agent: Any, settings: AppSettings, *, multiprocess: bool,
             wake_deliverer: Callable[[], None]) -> Assembly:
    """The server for ``settings``; ``multiprocess``: other processes serve it too."""
    spec = choose_store(settings.store, multiprocess=multiprocess)
    policy = as_policy(settings.auth)
    guard = None if policy is None else RequestGuard(policy)
    options = _runtime_options(settings, policy, wake_deliverer)
    overrides = settings.card.overrides
    runtime = Runtime(agent, store=open_store(spec), **options,
                      card_overrides=lambda card: declared(_apply_card_opts(card, overrides),
                                                           policy))
    deliverer = PushDeliverer(runtime.store, settings.push) if settings.push else None
    limits, protocol, card = settings.limits, settings.protocol, settings.card
    limit = limits.max_streams
    if limit is None:
        limit = default_stream_limit(gunicorn_worker_config())
    streams = StreamPlaces(limit)
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
        challenge=guard.challenge if guard is not None else None,
    )
    signer = CardSigner(card.signing_keys) if card.signing_keys else None
    dispatcher.card.signer = signer  # the public variants and the extended card alike
    check_served_card(dispatcher.card, card.base_url)  # a card off the schema never serves
    guessed = spec == "memory" and settings.store is None and not multiprocess
    return Assembly(runtime, dispatcher, runtime.agent_card(), deliverer, streams,
                    normalize_hosts(card.trusted_hosts), guessed, guard, signer)


def _runtime_options(settings: AppSettings, policy: Any,
                     wake_deliverer: Callable[[], None]) -> dict[str, Any]:
    """What the runtime is built with: derived from the settings, then runtime.options."""
    push = settings.push
    options: dict[str, Any] = {
        "owner_key": principal_owner,
        "push_enabled": push is not None or _declares_push(settings.card.overrides),
        "on_transition": settings.runtime.on_transition,
        "resubscribe_timeout": settings.streams.resubscribe_timeout,
        "heartbeat_interval": settings.streams.heartbeat_interval,
        "extended_card": settings.card.extended_card,
        "generations": settings.protocol.preview_generations,
    }
    if push is not None:
        options.update(push_settings=push,
                       push_planner=PushPlanner(default_version=push.default_version),
                       on_outbox=wake_deliverer)
    options.update(settings.runtime.options)  # the deployment's own win (a push_planner, say)
    options["extended_card"] = declared_extended_card(options.get("extended_card"), policy)
    options["max_workers"] = (options.get("max_workers") or settings.runtime.max_workers
                              or default_agent_workers())  # known once gevent patched
    return options


def _declares_push(opts: Mapping[str, Any] | None) -> bool:
    """Push is declared when delivery is on, or when the card overrides declare it."""
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
