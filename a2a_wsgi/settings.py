"""An app's settings as data: a few frozen groups, each value validated and defaulted once.

``A2AApp(agent, **options)`` takes the flat option names the library has
always had (``base_url=``, ``max_parts=``, ``runtime_options=`` …);
:meth:`AppSettings.from_options` sorts them into the groups below, so an app
can also be configured with one :class:`AppSettings` value, compared, copied
with :func:`dataclasses.replace`, or built from a deployment's own config.
Every default lives in the module that uses it; the groups only name it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from a2a_core.jsonrpc import DEFAULT_MAX_DEPTH
from a2a_core.models import AgentCard
from a2a_core.server import (
    DEFAULT_AGENT_CARD_PATH,
    DEFAULT_BINDINGS,
    DEFAULT_MAX_PARTS,
    DEFAULT_REST_PATH,
)
from a2a_core.service import CallContext
from a2a_core.signing import SigningKey
from a2a_core.tasks import TransitionEvent
from a2a_core.versioning import SUPPORTED_VERSIONS

from .auth.wsgi import AuthOption
from .push import PushSettings
from .runtime import DEFAULT_HEARTBEAT_INTERVAL, DEFAULT_RESUBSCRIBE_TIMEOUT
from .stalled_writes import DEFAULT_STALLED_WRITE_TIMEOUT

if TYPE_CHECKING:
    from a2a_core.extensions import Extension

__all__ = [
    "AppOptions",
    "AppSettings",
    "CardSettings",
    "LimitSettings",
    "ProtocolSettings",
    "RuntimeSettings",
    "StreamSettings",
    "DEFAULT_MAX_BODY_BYTES",
]

#: Request bodies larger than this are refused unread (-32600 / 413).
DEFAULT_MAX_BODY_BYTES = 1_048_576


def _positive(owner: object, **values: float | None) -> None:
    for name, value in values.items():
        if value is not None and value <= 0:
            raise ValueError(f"{type(owner).__name__}.{name} must be positive, not {value!r}")


@dataclass(frozen=True, kw_only=True)
class CardSettings:
    """The agent card: where it is served, the URL it advertises, what it adds."""

    #: Public URL the card advertises; None: the request's, for a trusted Host.
    base_url: str | None = None
    #: Hosts whose Host header the card may advertise; None: $A2A_TRUSTED_HOSTS or loopback.
    trusted_hosts: tuple[str, ...] | None = None
    #: Path of the card below the mount point; None disables the route.
    path: str | None = DEFAULT_AGENT_CARD_PATH
    #: Card fields by Python name, over the agent's own (``capabilities`` may be a mapping).
    overrides: Mapping[str, Any] | None = None
    #: The card's Last-Modified; None: when the app was created.
    last_modified: datetime | None = None
    #: ``(CallContext) -> AgentCard``: declares and serves the extended card.
    extended_card: Callable[[CallContext], AgentCard] | None = None
    #: Keys every served card (and the extended card) is signed with.
    signing_keys: tuple[SigningKey, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ProtocolSettings:
    """What is spoken and where: versions, bindings, paths, extensions, static metadata."""

    versions: tuple[str, ...] = SUPPORTED_VERSIONS
    #: Where JSON-RPC POSTs go, below the mount point ("" is the mount point itself).
    json_rpc_path: str = ""
    #: Where the HTTP+JSON paths start; None disables the binding.
    rest_path: str | None = DEFAULT_REST_PATH
    #: The order of the card's interfaces.
    bindings: tuple[str, ...] = DEFAULT_BINDINGS
    extensions: tuple[Extension, ...] = ()
    #: Static metadata merged into every call.
    metadata: Mapping[str, Any] | None = None
    #: ``(operation, task, context) -> allow?`` for every task a call names.
    authorize_task: Callable[..., Any] | None = None
    #: Serve the A2A dev-1.1 task generations (a preview, off by default) to 1.0 requests
    #: that negotiate the extension a2a_core.generations.GENERATIONS_EXTENSION_URI.
    preview_generations: bool = False

    def __post_init__(self) -> None:
        if not self.versions:
            raise ValueError("ProtocolSettings.versions names no version")
        unknown = set(self.bindings) - set(DEFAULT_BINDINGS)
        if unknown:
            raise ValueError(f"ProtocolSettings.bindings: unknown {sorted(unknown)}; "
                             f"known: {list(DEFAULT_BINDINGS)}")


@dataclass(frozen=True, kw_only=True)
class LimitSettings:
    """What one request may hold: its body, its nesting, its parts; streams per process."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_json_depth: int = DEFAULT_MAX_DEPTH
    max_parts: int = DEFAULT_MAX_PARTS
    #: Open streams per process; None: sized for the server (:mod:`a2a_wsgi.admission`).
    max_streams: int | None = None

    def __post_init__(self) -> None:
        _positive(self, max_body_bytes=self.max_body_bytes, max_json_depth=self.max_json_depth,
                  max_parts=self.max_parts, max_streams=self.max_streams)


@dataclass(frozen=True, kw_only=True)
class StreamSettings:
    """SSE streams: the heartbeat that keeps proxies from cutting them, the idle end."""

    heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL
    resubscribe_timeout: float = DEFAULT_RESUBSCRIBE_TIMEOUT
    #: Seconds one write of a stream may stay stuck (its client reads nothing) before the
    #: stream is cut (the client resumes with Last-Event-ID); see a2a_wsgi.stalled_writes.
    stalled_write_timeout: float = DEFAULT_STALLED_WRITE_TIMEOUT

    def __post_init__(self) -> None:
        _positive(self, heartbeat_interval=self.heartbeat_interval,
                  resubscribe_timeout=self.resubscribe_timeout,
                  stalled_write_timeout=self.stalled_write_timeout)


@dataclass(frozen=True, kw_only=True)
class RuntimeSettings:
    """The agent runtime: its pool, its transition hook, and the rest by name."""

    #: Agents running at once for non-blocking and streaming sends (None: 8, 1024 under gevent).
    max_workers: int | None = None
    on_transition: Callable[[TransitionEvent], None] | None = None
    #: Further :class:`~a2a_wsgi.runtime.Runtime` options (lease_seconds, retention, …);
    #: they win over what the app derives.
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _positive(self, max_workers=self.max_workers)


@dataclass(frozen=True, kw_only=True)
class AppSettings:
    """Everything an :class:`~a2a_wsgi.app.A2AApp` is configured with."""

    card: CardSettings = CardSettings()
    protocol: ProtocolSettings = ProtocolSettings()
    limits: LimitSettings = LimitSettings()
    streams: StreamSettings = StreamSettings()
    runtime: RuntimeSettings = RuntimeSettings()
    #: A TaskStore or a URL; None: $A2A_STORE, else memory or SQLite (store_choice).
    store: Any = None
    #: Push delivery to webhooks (None: off).
    push: PushSettings | None = None
    #: Authenticators, or an AuthPolicy (None: identity only from put_identity).
    auth: AuthOption = None
    #: Serve the inspector page at <mount>/inspector (loopback or authenticated only).
    inspector: bool = False

    @classmethod
    def from_options(cls, base: AppSettings | None = None,
                     **options: Any) -> AppSettings:
        """``base`` (default: the defaults) with the flat ``A2AApp`` options applied."""
        unknown = set(options) - set(_ROUTES)
        if unknown:
            raise TypeError(f"A2AApp got unknown option(s) {sorted(unknown)}; "
                            f"known: {sorted(_ROUTES)}")
        settings = base or cls()
        groups: dict[str, dict[str, Any]] = {}
        for name, value in options.items():
            group, attribute, convert = _ROUTES[name]
            groups.setdefault(group, {})[attribute] = convert(value)
        for group, values in groups.items():
            if group == "":
                settings = dataclasses.replace(settings, **values)
            else:
                part = dataclasses.replace(getattr(settings, group), **values)
                settings = dataclasses.replace(settings, **{group: part})
        return settings


def _same(value: Any) -> Any:
    return value


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value)


def _hosts(value: Collection[str] | None) -> tuple[str, ...] | None:
    return None if value is None else (value,) if isinstance(value, str) else tuple(value)


def _path(value: str | None | bool) -> str | None:
    return None if value is None or value is False else str(value)


def _push(value: PushSettings | bool | None) -> PushSettings | None:
    return PushSettings() if value is True else value or None


def _mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return dict(value or {})


#: Flat option name -> (group, attribute, conversion). The names are the ones A2AApp
#: has always taken, so existing code keeps working.
_ROUTES: Mapping[str, tuple[str, str, Callable[[Any], Any]]] = {
    "base_url": ("card", "base_url", _same),
    "trusted_hosts": ("card", "trusted_hosts", _hosts),
    "agent_card_path": ("card", "path", _path),
    "agent_card_opts": ("card", "overrides", _same),
    "last_modified": ("card", "last_modified", _same),
    "extended_card": ("card", "extended_card", _same),
    "card_signing_keys": ("card", "signing_keys", _tuple),
    "versions": ("protocol", "versions", _tuple),
    "json_rpc_path": ("protocol", "json_rpc_path", _same),
    "rest_path": ("protocol", "rest_path", _path),
    "bindings": ("protocol", "bindings", _tuple),
    "extensions": ("protocol", "extensions", _tuple),
    "metadata": ("protocol", "metadata", _same),
    "authorize_task": ("protocol", "authorize_task", _same),
    "preview_generations": ("protocol", "preview_generations", bool),
    "max_body_bytes": ("limits", "max_body_bytes", _same),
    "max_json_depth": ("limits", "max_json_depth", _same),
    "max_parts": ("limits", "max_parts", _same),
    "max_streams": ("limits", "max_streams", _same),
    "heartbeat_interval": ("streams", "heartbeat_interval", _same),
    "resubscribe_timeout": ("streams", "resubscribe_timeout", _same),
    "stalled_write_timeout": ("streams", "stalled_write_timeout", _same),
    "max_workers": ("runtime", "max_workers", _same),
    "on_transition": ("runtime", "on_transition", _same),
    "runtime_options": ("runtime", "options", _mapping),
    "store": ("", "store", _same),
    "push": ("", "push", _push),
    "auth": ("", "auth", _same),
    "inspector": ("", "inspector", bool),
}


class AppOptions(TypedDict, total=False):
    """The flat keyword options of :class:`~a2a_wsgi.app.A2AApp` (see :class:`AppSettings`)."""

    base_url: str | None
    trusted_hosts: Collection[str] | None
    agent_card_path: str | None | bool
    agent_card_opts: Mapping[str, Any] | None
    last_modified: datetime | None
    extended_card: Callable[[CallContext], AgentCard] | None
    card_signing_keys: Sequence[SigningKey]
    versions: Sequence[str]
    json_rpc_path: str
    rest_path: str | None | bool
    bindings: Sequence[str]
    extensions: Sequence[Extension]
    metadata: Mapping[str, Any] | None
    authorize_task: Callable[..., Any] | None
    preview_generations: bool
    max_body_bytes: int
    max_json_depth: int
    max_parts: int
    max_streams: int | None
    heartbeat_interval: float
    resubscribe_timeout: float
    stalled_write_timeout: float
    max_workers: int | None
    on_transition: Callable[[TransitionEvent], None] | None
    runtime_options: Mapping[str, Any] | None
    store: Any
    push: PushSettings | bool | None
    auth: AuthOption
    inspector: bool
