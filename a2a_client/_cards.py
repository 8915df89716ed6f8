"""Finding an agent: card discovery, card caching, and picking the endpoint and version.

Discovery GETs ``<base>/.well-known/agent-card.json`` (the base may be mounted under a
path; a 404 there falls back to the origin's root, where a single-agent server puts it).
The body goes through :class:`a2a_core._caching.CardCache`: the next fetch sends
``If-None-Match``/``If-Modified-Since`` and a 304 reuses the stored bytes.

:func:`select_endpoint` reads the card as the A2A 1.0 specification's discovery section
describes: a card with ``supportedInterfaces`` offers JSON-RPC interfaces per protocol
version (``"auto"`` takes 1.0 where offered, else 0.3); a card without (a 0.3 card) was
already mapped by the core's card decoder; a card with no interface at all is taken to be
served from the card URL's origin.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urljoin, urlsplit

from a2a_core._caching import CardCache
from a2a_core._versioning import normalize_version
from a2a_core.errors import InvalidParamsError, RemoteProtocolError
from a2a_core.models import AgentCard, AgentInterface
from a2a_core.wire._card import decode_card

from ._errors import HTTPStatusError
from ._transport import Timeout, Transport

__all__ = [
    "WELL_KNOWN_PATH",
    "VERSIONS",
    "CardCheck",
    "Endpoint",
    "card_url_for",
    "root_card_url",
    "dialect_of",
    "fetch_card",
    "select_endpoint",
    "utc_now",
]

WELL_KNOWN_PATH = "/.well-known/agent-card.json"
#: What ``version=`` accepts.
VERSIONS = ("auto", "0.3", "1.0")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how to talk to the agent: interface URL, protocol version, tenant, binding."""

    url: str
    version: str
    tenant: str | None = None
    #: The card's ``protocolBinding``: ``"JSONRPC"`` or ``"HTTP+JSON"``.
    binding: str = "JSONRPC"


def utc_now() -> datetime:
    """Aware UTC now: the card cache compares it with HTTP dates."""
    return datetime.now(timezone.utc)


def card_url_for(url: str) -> str:
    """The card URL for a base URL; a URL already naming a ``.json`` file is kept."""
    if urlsplit(url).path.endswith(".json"):
        return url
    return url.rstrip("/") + WELL_KNOWN_PATH


def root_card_url(card_url: str) -> str | None:
    """The origin's well-known URL, when it differs from ``card_url``."""
    parts = urlsplit(card_url)
    root = f"{parts.scheme}://{parts.netloc}{WELL_KNOWN_PATH}"
    return None if root == card_url else root


#: Checks a card's wire JSON before it is used; raises to refuse it (a bad signature).
CardCheck = Callable[[Mapping[str, Any]], Any]


def fetch_card(
    transport: Transport,
    url: str,
    cache: CardCache,
    *,
    timeout: Timeout,
    now: Callable[[], datetime],
    revalidate: bool = False,
    check: CardCheck | None = None,
) -> tuple[AgentCard, str]:
    """Fetch (or revalidate) the card for ``url``; returns it with the URL it came from.

    :param check: called with the card's JSON object before it is decoded, for a
        fetched and a cached card alike; whatever it raises is raised, and the
        cached copy is dropped first (the next fetch asks the server again).
    :raises HTTPStatusError: neither location answered 200/304.
    :raises RemoteProtocolError: the body is not a valid agent card.
    """
    card_url = card_url_for(url)
    try:
        return _fetch_one(transport, card_url, cache, timeout, now, revalidate, check), card_url
    except HTTPStatusError as exc:
        fallback = root_card_url(card_url)
        explicit = card_url == url
        if exc.status_code != 404 or fallback is None or explicit:
            raise
    return _fetch_one(transport, fallback, cache, timeout, now, revalidate, check), fallback


def _fetch_one(
    transport: Transport,
    card_url: str,
    cache: CardCache,
    timeout: Timeout,
    now: Callable[[], datetime],
    revalidate: bool,
    check: CardCheck | None,
) -> AgentCard:
    """One conditional GET through the cache (no GET at all while fresh, unless told)."""
    body = None if revalidate else cache.fresh(card_url, now())
    if body is None:
        headers = {"Accept": "application/json", **cache.request_headers(card_url)}
        reply = transport.request("GET", card_url, headers=headers, timeout=timeout)
        payload = reply.read()
        if reply.status_code not in (200, 304):
            raise HTTPStatusError.from_reply(reply, payload)
        body = cache.receive(card_url, reply.status_code, dict(reply.headers), payload, now())
    try:
        document = json.loads(body)
        card = decode_card(document)
    except (ValueError, RecursionError, InvalidParamsError) as exc:  # (deep nesting)
        cache.discard(card_url)
        raise RemoteProtocolError(f"invalid agent card at {card_url}: {exc}") from exc
    if check is not None:
        try:
            check(document)
        except BaseException:
            cache.discard(card_url)
            raise
    return card


def _version_of(interface: AgentInterface) -> str:
    """The interface's protocol version as ``Major.Minor`` (unparseable kept as is)."""
    return normalize_version(interface.protocol_version)


def _major(version: str) -> int | None:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _speaks(version: str) -> str | None:
    """Which of our dialects talks to an interface of this version (None: neither).

    Any major >= 1 is spoken as 1.0: some servers label their 1.0 interface "2.0".
    """
    major = _major(version)
    if major is None:
        return None
    return "1.0" if major >= 1 else "0.3"


def dialect_of(interface: AgentInterface) -> str | None:
    """The dialect ("1.0" or "0.3") we would speak to this interface's version, if any."""
    return _speaks(_version_of(interface))


def _pick(interfaces: tuple[AgentInterface, ...], wanted: str) -> AgentInterface | None:
    """First interface whose exact version is ``wanted``, else the first we would speak it to."""
    exact = [i for i in interfaces if _version_of(i) == wanted]
    if exact:
        return exact[0]
    close = [i for i in interfaces if _speaks(_version_of(i)) == wanted]
    return close[0] if close else None


def select_endpoint(card: AgentCard, card_url: str | None, version: str = "auto") -> Endpoint:
    """Choose the JSON-RPC interface and the dialect to speak to it.

    ``version="auto"`` prefers 1.0 and falls back to 0.3; a pinned version takes its
    own interface when the card lists one, else the first JSON-RPC interface anyway
    (the server may well accept both versions on one endpoint, as ours does).
    """
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS}, not {version!r}")
    rpc = tuple(i for i in card.supported_interfaces if i.protocol_binding.upper() == "JSONRPC")
    candidates = rpc or tuple(card.supported_interfaces)
    if not candidates:
        return _origin_endpoint(card_url, version)
    wanted = ("1.0", "0.3") if version == "auto" else (version,)
    for dialect in wanted:
        chosen = _pick(candidates, dialect)
        if chosen is not None:
            return _endpoint(chosen, dialect, card_url)
    first = candidates[0]
    return _endpoint(first, "0.3" if version == "auto" else version, card_url)


def _endpoint(interface: AgentInterface, version: str, card_url: str | None) -> Endpoint:
    url = urljoin(card_url, interface.url) if card_url else interface.url
    return Endpoint(url=url, version=version, tenant=interface.tenant)


def _origin_endpoint(card_url: str | None, version: str) -> Endpoint:
    """A card naming no endpoint: the card URL's origin, spoken as 0.3 by default."""
    if card_url is None:
        raise ValueError("the agent card names no endpoint; pass endpoint=")
    parts = urlsplit(card_url)
    return Endpoint(
        url=f"{parts.scheme}://{parts.netloc}", version="0.3" if version == "auto" else version
    )
