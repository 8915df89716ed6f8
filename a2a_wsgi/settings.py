"""An app's settings as data: a few frozen groups, each option's type, default and check
written once.

``A2AApp`` takes what a newcomer needs as keywords (the agent, ``base_url``,
``store``, ``auth``, ``push``, ``inspector``) and everything else as one of the
groups below (``card=``, ``protocol=``, ``limits=``, ``streams=``,
``runtime=``), as httpx takes ``Client(timeout=..., limits=Limits(...))``.
The groups are frozen values: compare them, copy them with
:func:`dataclasses.replace`, build them from a deployment's own config.
:class:`AppSettings` is everything one app was given (``app.settings``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from a2a_core._jsonrpc import DEFAULT_MAX_DEPTH
from a2a_core._server import (
    DEFAULT_AGENT_CARD_PATH,
    DEFAULT_BINDINGS,
    DEFAULT_MAX_PARTS,
    DEFAULT_REST_PATH,
)
from a2a_core._service import CallContext
from a2a_core._versioning import SUPPORTED_VERSIONS
from a2a_core.auth import AuthorizeCallback
from a2a_core.extensions import Extension
from a2a_core.models import AgentCard
from a2a_core.signing import SigningKey

from ._runtime._settings import RuntimeSettings, StreamSettings, check_positive
from ._store_choice import StoreSpec
from .auth._wsgi import AuthOption
from .push import PushSettings

__all__ = [
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


@dataclass(frozen=True, kw_only=True)
class CardSettings:
    """The agent card: where it is served, the URL it advertises, what it adds."""

    #: Hosts whose Host header the card may advertise; None: $A2A_TRUSTED_HOSTS or loopback.
    trusted_hosts: tuple[str, ...] | None = None
    #: Path of the card below the mount point; None disables the route.
    path: str | None = DEFAULT_AGENT_CARD_PATH
    #: Card fields by Python name, over the agent's own (``capabilities`` may be a mapping).
    overrides: Mapping[str, object] | None = None
    #: The card's Last-Modified; None: when the app was created.
    last_modified: datetime | None = None
    #: ``(CallContext) -> AgentCard``: declares and serves the extended card.
    extended_card: Callable[[CallContext], AgentCard] | None = None
    #: Keys every served card (and the extended card) is signed with.
    signing_keys: tuple[SigningKey, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.trusted_hosts, str):
            raise TypeError("CardSettings.trusted_hosts is a tuple of hosts, not one string")
        unknown = set(self.overrides or {}) - _CARD_FIELDS
        if unknown:
            raise ValueError(f"CardSettings.overrides: {sorted(unknown)} name no AgentCard field")


_CARD_FIELDS = frozenset(f.name for f in dataclasses.fields(AgentCard))


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
    metadata: Mapping[str, object] | None = None
    #: ``(operation, task, context) -> allow?`` for every task a call names.
    authorize_task: AuthorizeCallback | None = None
    #: Serve the A2A dev-1.1 task generations (a preview, off by default) to 1.0 requests
    #: that negotiate the extension a2a_core._generations.GENERATIONS_EXTENSION_URI.
    preview_generations: bool = False
    #: The gRPC interface the card lists (``host:port``, ``grpcs://host:port``), served by
    #: another process (``a2a serve --grpc``, docs/grpc.md); None: $A2A_GRPC_URL, else none.
    grpc_url: str | None = None

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
    #: Open streams per process; None: sized for the server (:mod:`a2a_wsgi._admission`).
    max_streams: int | None = None

    def __post_init__(self) -> None:
        check_positive(self, max_body_bytes=self.max_body_bytes,
                       max_json_depth=self.max_json_depth, max_parts=self.max_parts,
                       max_streams=self.max_streams)


@dataclass(frozen=True, kw_only=True)
class AppSettings:
    """Everything an :class:`~a2a_wsgi._app.A2AApp` was given (its keywords and groups;
    the defaults are the keywords' own)."""

    #: Public URL the card advertises; None: the request's, for a trusted Host.
    base_url: str | None
    #: A TaskStore or a URL; None: $A2A_STORE, else memory or SQLite (store_choice).
    store: StoreSpec | None
    #: Authenticators, or an AuthPolicy (None: identity only from put_identity).
    auth: AuthOption
    #: Push delivery to webhooks (None: off).
    push: PushSettings | None
    #: Serve the inspector page at <mount>/inspector (loopback or authenticated only).
    inspector: bool
    card: CardSettings
    protocol: ProtocolSettings
    limits: LimitSettings
    streams: StreamSettings
    runtime: RuntimeSettings
