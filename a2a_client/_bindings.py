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
never picks it. GRPC (1.0 too) is chosen only when the caller names it, pinned or
in a sequence: "auto" never needs the ``grpc`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence

from a2a_core.models import AgentCard, AgentInterface

from ._cards import Endpoint, dialect_of, select_endpoint
from ._grpc import GRPC, select_grpc_endpoint, speaks_grpc
from ._rest import HTTP_JSON, select_rest_endpoint, speaks_rest

__all__ = ["AUTO", "BINDINGS", "GRPC", "HTTP_JSON", "JSONRPC", "as_bindings", "choose_endpoint"]

JSONRPC = "JSONRPC"
AUTO = "auto"
#: The bindings this client speaks (GRPC with the ``grpc`` extra).
BINDINGS = (JSONRPC, HTTP_JSON, GRPC)
#: The bindings spoken in 1.0 only.
_ONLY_1_0 = (HTTP_JSON, GRPC)


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
        raise ValueError("binding must name at least one of JSONRPC, HTTP+JSON, GRPC")
    if version == "0.3":
        if len(wanted) == 1 and wanted[0] in _ONLY_1_0:
            raise ValueError(f"{wanted[0]} is an A2A 1.0 binding: use version '1.0' or 'auto'")
        wanted = tuple(name for name in wanted if name not in _ONLY_1_0)
    return wanted


def _name(name: str) -> str:
    for known in BINDINGS:
        if isinstance(name, str) and name.upper() == known:
            return known
    raise ValueError(f'binding must be "auto", "JSONRPC", "HTTP+JSON" or "GRPC", not {name!r}')


def choose_endpoint(
    card: AgentCard, card_url: str | None, version: str, bindings: tuple[str, ...] | None
) -> Endpoint:
    """The interface to talk to, and how (see the module docstring).

    :raises ValueError: HTTP+JSON or GRPC is the only binding allowed and the card offers
        none.
    """
    binding = _binding(card.supported_interfaces, version, bindings)
    if binding in _ONLY_1_0:
        chosen = select_rest_endpoint(card, card_url) if binding == HTTP_JSON \
            else select_grpc_endpoint(card)
        if chosen is None:
            raise ValueError(f"the agent card offers no {binding} interface of version 1.x")
        return chosen
    return select_endpoint(card, card_url, version)


def _binding(
    interfaces: Sequence[AgentInterface], version: str, bindings: tuple[str, ...] | None
) -> str:
    """The binding of the first interface spoken in the preferred version and order."""
    if bindings is not None and len(bindings) == 1:
        return bindings[0]
    for dialect in ("1.0", "0.3") if version == "auto" else (version,):
        spoken = [i for i in interfaces if _spoken(i, dialect)
                  and (bindings is not None or i.protocol_binding.upper() != GRPC)]
        if bindings is None and spoken:  # "auto": the card's order, gRPC left out
            return spoken[0].protocol_binding.upper()
        for name in bindings or ():
            if any(i.protocol_binding.upper() == name for i in spoken):
                return name
    return JSONRPC  # nothing matches: the card's first interface or its origin (cards.py)


def _spoken(interface: AgentInterface, dialect: str) -> bool:
    """We can speak ``dialect`` to this interface."""
    if interface.protocol_binding.upper() == JSONRPC:
        return dialect_of(interface) == dialect
    return dialect == "1.0" and (speaks_rest(interface) or speaks_grpc(interface))
