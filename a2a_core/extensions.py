"""A2A extension negotiation (A2A 1.0 specification, "Extensions").

A client lists the extension URIs it wants in ``A2A-Extensions`` (0.3:
``X-A2A-Extensions``). The server activates those it has, in its own
configured order, and echoes the activated URIs. A requested URI the server
does not know is ignored; an extension the server marks ``required`` that the
client did not request fails the call with -32008 before anything runs.

An :class:`Extension` has wsproto's offer/accept shape: :meth:`Extension.activate`
sees the offer and accepts (an :class:`Activation`), declines (``None``) or
aborts (raises an :class:`RPCError`). The accepted ones then get two hooks
around the agent: :meth:`Extension.handle_request` and :meth:`Extension.handle_response`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any

from ._jsonvalue import JSONObject, JSONValue
from .errors import ExtensionSupportRequiredError
from .models import AgentCard, AgentExtension, Message, SendResult, Task

__all__ = [
    "Activation",
    "Extension",
    "ActivatedExtensions",
    "parse_extensions_header",
    "format_extensions_header",
    "negotiate_extensions",
    "merge_card_extensions",
    "TimestampExtension",
    "TIMESTAMP_EXTENSION_URI",
]

TIMESTAMP_EXTENSION_URI = "https://a2a-protocol.org/extensions/timestamp/v1"


def parse_extensions_header(values: Iterable[str] | str | None) -> tuple[str, ...]:
    """URIs from one or several header values: comma lists, trimmed, de-duplicated in order.

    The caller passes the 0.3 ``X-A2A-Extensions`` values in the same iterable.
    """
    if values is None:
        return ()
    if isinstance(values, str):
        values = (values,)
    uris = (uri.strip() for value in values for uri in value.split(","))
    return tuple(dict.fromkeys(uri for uri in uris if uri))


def format_extensions_header(uris: Iterable[str]) -> str:
    """The header value for ``uris``, joined by ``", "`` (the list form of RFC 9110 §5.6.1).

    :raises ValueError: a URI holding a comma, CR or LF cannot travel in this header.
    """
    uris = tuple(uris)
    for uri in uris:
        if any(c in uri for c in ",\r\n"):
            raise ValueError(f"extension URI {uri!r} cannot be sent in a header")
    return ", ".join(uris)


@dataclass(frozen=True, slots=True, kw_only=True)
class Activation:
    """An accepted extension and the value the agent sees for it."""

    uri: str
    value: Any = None


class Extension(abc.ABC):  # noqa: B024  (every hook has a default; subclass to use)
    """Base class of a server-side extension; override only what you need.

    ``uri``, ``description``, ``required`` and ``params`` may be class or
    instance attributes; ``uri`` must be set.
    """

    uri: str = ""
    description: str | None = None
    required: bool = False
    params: Mapping[str, JSONValue] | None = None

    def declaration(self) -> AgentExtension:
        """What the agent card says about this extension."""
        if not self.uri:
            raise TypeError(f"{type(self).__name__} has no uri")
        return AgentExtension(
            uri=self.uri, description=self.description, required=self.required, params=self.params
        )

    def activate(
        self, requested: tuple[str, ...], context: Mapping[str, object]
    ) -> Activation | None:
        """Accept the client's offer (the default, with value ``None``) or return None to skip.

        Called only when ``self.uri`` was requested. Raise an RPCError to fail the call.
        """
        return Activation(uri=self.uri)

    def handle_request(
        self, message: Message, params: JSONObject, activation: Activation
    ) -> tuple[Message, JSONObject]:
        """Rewrite the inbound message or params before the agent runs (default: unchanged)."""
        return message, params

    def handle_response(
        self, result: SendResult, params: JSONObject, activation: Activation
    ) -> SendResult:
        """Rewrite SendMessage's result, a Task or a Message (default: unchanged)."""
        return result


@dataclass(frozen=True, slots=True)
class ActivatedExtensions:
    """The extensions active for one request, in configured order."""

    pairs: tuple[tuple[Extension, Activation], ...] = ()
    by_uri: Mapping[str, object] = field(init=False)

    def __post_init__(self) -> None:
        by_uri = MappingProxyType({act.uri: act.value for _, act in self.pairs})
        object.__setattr__(self, "by_uri", by_uri)

    @property
    def uris(self) -> tuple[str, ...]:
        return tuple(act.uri for _, act in self.pairs)

    def __contains__(self, uri: object) -> bool:
        return uri in self.by_uri

    def __len__(self) -> int:
        return len(self.pairs)

    def header_value(self) -> str | None:
        """The response ``A2A-Extensions`` value, or None when nothing is active (no header)."""
        return format_extensions_header(self.uris) if self.pairs else None

    def apply_request(
        self, message: Message, params: JSONObject
    ) -> tuple[Message, JSONObject]:
        """Run every request hook in order, each seeing the previous one's output."""
        for extension, activation in self.pairs:
            message, params = extension.handle_request(message, params, activation)
        return message, params

    def apply_response(self, result: SendResult, params: JSONObject) -> SendResult:
        """Run every response hook in order, each seeing the previous one's output."""
        for extension, activation in self.pairs:
            result = extension.handle_response(result, params, activation)
        return result


def _check_configuration(extensions: Sequence[Extension]) -> None:
    """Two extensions with one URI would make the echo and by_uri ambiguous."""
    seen: set[str] = set()
    for extension in extensions:
        if not extension.uri:
            raise TypeError(f"{type(extension).__name__} has no uri")
        if extension.uri in seen:
            raise ValueError(f"extension {extension.uri!r} is configured twice")
        seen.add(extension.uri)


def negotiate_extensions(
    requested: Iterable[str],
    extensions: Sequence[Extension],
    context: Mapping[str, object] | None = None,
) -> ActivatedExtensions:
    """Activate the requested extensions we have, in configured order.

    :raises ExtensionSupportRequiredError: a required extension was not
        requested (``metadata["extensions"]`` lists them).
    :raises RPCError: whatever an extension's ``activate`` raised.
    """
    _check_configuration(extensions)
    requested = tuple(requested)
    missing = [e.uri for e in extensions if e.required and e.uri not in requested]
    if missing:
        listed = ", ".join(missing)
        raise ExtensionSupportRequiredError(
            f"Client missing required extensions: {listed}",
            {"extensions": missing},
            metadata={"extensions": listed},
        )
    context = context if context is not None else {}
    pairs: list[tuple[Extension, Activation]] = []
    for extension in extensions:
        if extension.uri not in requested:
            continue
        activation = extension.activate(requested, context)
        if activation is None:
            continue
        if activation.uri != extension.uri:
            raise ValueError(f"{type(extension).__name__} activated {activation.uri!r}")
        pairs.append((extension, activation))
    return ActivatedExtensions(tuple(pairs))


def merge_card_extensions(card: AgentCard, extensions: Sequence[Extension]) -> AgentCard:
    """Add the extensions' declarations to the card; a URI already declared is kept as is."""
    existing = tuple(card.capabilities.extensions)
    known = {declaration.uri for declaration in existing}
    added: list[AgentExtension] = []
    for extension in extensions:
        declaration = extension.declaration()
        if declaration.uri not in known:
            known.add(declaration.uri)
            added.append(declaration)
    if not added:
        return card
    capabilities = replace(card.capabilities, extensions=existing + tuple(added))
    return replace(card, capabilities=capabilities)


# -- a reference extension: timestamps ----------------------------------------------------


def _iso_utc(moment: datetime) -> str:
    """ISO-8601 in UTC with ``Z``, millisecond precision, as the 1.0 wire writes times."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("the clock must return an aware datetime")
    text = moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def _stamped(
    metadata: Mapping[str, JSONValue] | None, uri: str, stamps: Mapping[str, str]
) -> JSONObject:
    """A copy of ``metadata`` with ``stamps`` merged under ``uri`` (other keys kept)."""
    merged = dict(metadata or {})
    previous = merged.get(uri)
    merged[uri] = {**(previous if isinstance(previous, Mapping) else {}), **stamps}
    return merged


class TimestampExtension(Extension):
    """Stamps ``received_at`` on the inbound message and ``completed_at`` on the outbound Task.

    The time of arrival is read once, at activation, and is also the
    activation value the agent sees (``{"received_at": ...}``); the Task gets
    both stamps. The clock is injected: the core never reads it itself.
    """

    uri = TIMESTAMP_EXTENSION_URI
    description = "Adds received_at and completed_at timestamps (ISO-8601, UTC) to metadata."

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock

    def activate(self, requested: tuple[str, ...], context: Mapping[str, object]) -> Activation:
        return Activation(uri=self.uri, value={"received_at": _iso_utc(self._clock())})

    def handle_request(
        self, message: Message, params: JSONObject, activation: Activation
    ) -> tuple[Message, JSONObject]:
        metadata = _stamped(message.metadata, self.uri, activation.value)
        extensions = tuple(message.extensions)
        if self.uri not in extensions:
            extensions += (self.uri,)
        return replace(message, metadata=metadata, extensions=extensions), params

    def handle_response(
        self, result: SendResult, params: JSONObject, activation: Activation
    ) -> SendResult:
        if not isinstance(result, Task):
            return result
        stamps = {**activation.value, "completed_at": _iso_utc(self._clock())}
        return replace(result, metadata=_stamped(result.metadata, self.uri, stamps))
