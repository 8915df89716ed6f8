"""Checking an agent's served card against the published A2A schemas (``a2a card --check``).

A card is fetched as the agent serves it, undecoded, and checked with
:func:`a2a_core.schemas.check_card` (the same check the server runs on its own card and the
inspector shows). An agent may serve one document to every reader, or a different one to a
reader that says ``A2A-Version: 1.0`` (this package's server serves a dual card by default
and a strict 1.0 card on request): when the default card is a 0.3 one that lists a 1.0
interface, the 1.0 variant is fetched and checked too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from a2a_core._jsonvalue import JSONValue
from a2a_core.errors import InvalidParamsError, RemoteProtocolError
from a2a_core.schemas import CardCheck, check_card
from a2a_core.wire._card import decode_card

from ._cards import card_url_for, root_card_url
from ._errors import HTTPStatusError
from ._transport import Timeout, Transport

__all__ = ["ServedCardCheck", "check_served_cards"]


@dataclass(frozen=True)
class ServedCardCheck:
    """One card document as an agent served it, and what checking it found."""

    url: str
    #: The ``A2A-Version`` the request asked for ("" for none).
    asked_version: str
    check: CardCheck


def _get(transport: Transport, url: str, timeout: Timeout, version: str) -> JSONValue:
    headers = {"Accept": "application/json", **({"A2A-Version": version} if version else {})}
    reply = transport.request("GET", url, headers=headers, timeout=timeout)
    body = reply.read()
    if reply.status_code != 200:
        raise HTTPStatusError.from_reply(reply, body)
    try:
        document: JSONValue = json.loads(body)
    except ValueError as exc:
        raise RemoteProtocolError(f"the card at {url} is not JSON: {exc}") from exc
    return document


def _lists_1_0(document: JSONValue) -> bool:
    """Whether a card document names an interface of protocol version 1.x (False when it
    does not even decode: its findings say why)."""
    try:
        card = decode_card(document)
    except InvalidParamsError:
        return False
    return any((i.protocol_version or "").startswith("1") for i in card.supported_interfaces)


def check_served_cards(transport: Transport, url: str, *,
                       timeout: Timeout) -> list[ServedCardCheck]:
    """Fetch the card for ``url`` (the well-known path, else the origin's), check it, and
    check its 1.0 variant too when the agent serves one."""
    card_url = card_url_for(url)
    try:
        document = _get(transport, card_url, timeout, "")
    except HTTPStatusError as exc:
        fallback = root_card_url(card_url)
        if exc.status_code != 404 or fallback is None or card_url == url:
            raise
        card_url, document = fallback, _get(transport, fallback, timeout, "")
    checks = [ServedCardCheck(card_url, "", check_card(document))]
    if checks[0].check.version == "0.3" and _lists_1_0(document):
        strict = _get(transport, card_url, timeout, "1.0")
        if strict != document:
            checks.append(ServedCardCheck(card_url, "1.0", check_card(strict)))
    return checks
