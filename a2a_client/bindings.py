"""Which binding to speak: JSON-RPC or HTTP+JSON, from the card and the caller's wish.

``binding="auto"`` follows the card: the server lists its interfaces in the order
it prefers them (1.0 §8.3), so the client takes the binding of the first interface
it can speak, as the official SDK does by default. The protocol version is chosen
first (``version="auto"``: 1.0 wherever any binding offers it, else 0.3), then the
binding among that version's interfaces, so a card that lists a 0.3 JSON-RPC
interface before a 1.0 HTTP+JSON one is spoken to in 1.0 over HTTP+JSON.

A sequence (``binding=("HTTP+JSON", "JSONRPC")``) is the caller's own preference
order instead of the card's; one name pins that binding. HTTP+JSON is spoken in
1.0 only (0.3's REST is a different transcoding, under ``/v1``), so a pinned 0.3
never picks it.
"""

from __future__ import annotations

from collections.abc import Sequence

from a2a_core.models import AgentCard, AgentInterface

from .cards import Endpoint, dialect_of, select_endpoint
from .rest import HTTP_JSON, select_rest_endpoint, speaks_rest

__all__ = ["AUTO", "BINDINGS", "HTTP_JSON", "JSONRPC", "as_bindings", "choose_endpoint"]

JSONRPC = "JSONRPC"
AUTO = "auto"
#: The bindings this client speaks.
BINDINGS = (JSONRPC, HTTP_JSON)


def as_bindings(value: str | Sequence[str], version: str) -> tuple[str, ...] | None:
    """The caller's ``binding=`` as a preference tuple; None for "auto" (the card's order).

    Names are matched case-insensitively (``"http+json"``, ``"jsonrpc"``).

    :raises ValueError: an unknown name, an empty sequence, or HTTP+JSON with version 0.3.
    """
    if isinstance(value, str) and value.lower() == AUTO:
        return None
    names = (value,) if isinstance(value, str) else tuple(value)
    wanted = tuple(_name(name) for name in names)
    if not wanted:
        raise ValueError("binding must name at least one of JSONRPC, HTTP+JSON")
    if version == "0.3":
        if wanted == (HTTP_JSON,):
            raise ValueError("HTTP+JSON is an A2A 1.0 binding: use version '1.0' or 'auto'")
        wanted = tuple(name for name in wanted if name != HTTP_JSON)
    return wanted


def _name(name: str) -> str:
    for known in BINDINGS:
        if isinstance(name, str) and name.upper() == known:
            return known
    raise ValueError(f'binding must be "auto", "JSONRPC" or "HTTP+JSON", not {name!r}')


def choose_endpoint(
    card: AgentCard, card_url: str | None, version: str, bindings: tuple[str, ...] | None
) -> Endpoint:
    """The interface to talk to, and how (see the module docstring).

    :raises ValueError: HTTP+JSON is the only binding allowed and the card offers none.
    """
    binding = _binding(card.supported_interfaces, version, bindings)
    if binding == HTTP_JSON:
        chosen = select_rest_endpoint(card, card_url)
        if chosen is None:
            raise ValueError("the agent card offers no HTTP+JSON interface of version 1.x")
        return chosen
    return select_endpoint(card, card_url, version)


def _binding(
    interfaces: Sequence[AgentInterface], version: str, bindings: tuple[str, ...] | None
) -> str:
    """The binding of the first interface spoken in the preferred version and order."""
    if bindings is not None and len(bindings) == 1:
        return bindings[0]
    for dialect in ("1.0", "0.3") if version == "auto" else (version,):
        spoken = [i for i in interfaces if _spoken(i, dialect)]
        if bindings is None and spoken:
            return spoken[0].protocol_binding.upper()
        for name in bindings or ():
            if any(i.protocol_binding.upper() == name for i in spoken):
                return name
    return JSONRPC  # nothing matches: the card's first interface or its origin (cards.py)


def _spoken(interface: AgentInterface, dialect: str) -> bool:
    """We can speak ``dialect`` to this interface."""
    if interface.protocol_binding.upper() == JSONRPC:
        return dialect_of(interface) == dialect
    return dialect == "1.0" and speaks_rest(interface)
