"""Which URLs the ``a2a inspect`` proxy may reach: the agent's card URL and the interfaces it lists.

Only on the origin the user typed (and those named with ``--allow-origin``):
the card is the agent's word, not the user's, so an interface it lists on
another origin is ignored. A URL is compared as scheme, host, port and path,
after refusing user info and dot segments; a miss re-reads the card now and
then, so interfaces a card gains later become reachable.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import requests
from urllib3.exceptions import HTTPError as Urllib3Error

from ._inspect_addresses import host_problem

__all__ = ["CARD_RECHECK", "AgentTargets", "parse_origin"]

log = logging.getLogger("a2a_client.inspect")

#: How often a miss may trigger a re-read of the card, in seconds.
CARD_RECHECK = 2.0


@dataclass(frozen=True, slots=True)
class _Place:
    """A URL reduced to what is compared: scheme, host, port, path."""

    scheme: str
    host: str
    port: int
    path: str

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


def parse_origin(text: str) -> tuple[str, str, int]:
    """``scheme://host[:port]`` as compared; ValueError for anything else or a refused host."""
    place = _place(text)
    if place is None or place.path != "/" or urlsplit(text).query:
        raise ValueError(f"not an origin (scheme://host[:port]): {text!r}")
    problem = host_problem(place.host)
    if problem is not None:
        raise ValueError(f"refused: {problem}")
    return place.origin


def _place(url: str) -> _Place | None:
    """The place of an http(s) URL without user info or dot segments; None otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return None
    segments = unquote(parts.path).split("/")
    if "." in segments or ".." in segments:
        return None
    default = 443 if parts.scheme == "https" else 80
    return _Place(parts.scheme, parts.hostname.lower(), port or default, parts.path or "/")


def _interfaces(card: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(url, binding) of every interface a card lists, 1.0 and 0.3 fields alike."""
    for item in card.get("supportedInterfaces") or ():
        if isinstance(item, Mapping) and isinstance(item.get("url"), str):
            yield item["url"], str(item.get("protocolBinding") or "")
    if isinstance(card.get("url"), str):
        yield card["url"], str(card.get("preferredTransport") or "JSONRPC")
    for item in card.get("additionalInterfaces") or ():
        if isinstance(item, Mapping) and isinstance(item.get("url"), str):
            yield item["url"], str(item.get("transport") or "")


class AgentTargets:
    """The agent's own URLs: its card URL, and the JSON-RPC and HTTP+JSON URLs its card lists."""

    def __init__(self, card_url: str, read_card: Callable[[], Any], *,
                 allow_origins: Iterable[str] = ()) -> None:
        place = _place(card_url)
        if place is None:
            raise ValueError(f"not an http(s) URL: {card_url!r}")
        problem = host_problem(place.host)
        if problem is not None:
            raise ValueError(f"refused: {problem}")
        self.card = place
        #: The origin the user typed, then the ones allowed by flag.
        self.origin = place.origin
        self.origins = frozenset({place.origin, *(parse_origin(o) for o in allow_origins)})
        self._read_card = read_card
        self._exact: set[_Place] = set()
        self._prefixes: set[_Place] = set()
        self._checked = float("-inf")
        self._lock = threading.Lock()

    def is_card(self, url: str) -> bool:
        return _place(url) == self.card

    def is_typed_origin(self, url: str) -> bool:
        """Whether ``url`` is on the origin the user typed (where credentials may go)."""
        place = _place(url)
        return place is not None and place.origin == self.origin

    def refusal(self, url: str) -> str | None:
        """Why the proxy will not forward to ``url``; None when it is one of the agent's URLs."""
        place = _place(url)
        if place is None:
            return f"not one of the agent's URLs (user info or dot segments): {url}"
        if place.origin not in self.origins:
            return (f"not the origin you named (a2a inspect --allow-origin "
                    f"{place.scheme}://{_netloc(place)} would allow it): {url}")
        if not self.allows(url):
            return f"not one of the agent's URLs (its card and interfaces): {url}"
        return None

    def allows(self, url: str) -> bool:
        """Whether ``url`` is one of the agent's; a miss re-reads the card (now and then)."""
        place = _place(url)
        if place is None or place.origin not in self.origins:
            return False
        if self._known(place):
            return True
        with self._lock:
            if time.monotonic() - self._checked < CARD_RECHECK:
                return False
            self._checked = time.monotonic()
        try:
            self.learn(self._read_card())
        except (requests.RequestException, Urllib3Error, OSError, ValueError) as exc:
            log.info("could not re-read the card: %s", exc)
        return self._known(place)

    def learn(self, card: Any) -> None:
        """Take the interface URLs from a card (parsed JSON), read through the proxy or not."""
        if not isinstance(card, Mapping):
            return
        exact: set[_Place] = set()
        prefixes: set[_Place] = set()
        for url, binding in _interfaces(card):
            place = _place(url)
            if place is None or place.origin not in self.origins:
                continue  # another origin: the card cannot open it, only the user can
            if binding == "JSONRPC":
                exact.add(_without_slash(place))
            elif binding == "HTTP+JSON":
                prefixes.add(_without_slash(place))
        with self._lock:
            self._exact, self._prefixes = exact, prefixes

    def _known(self, place: _Place) -> bool:
        if place == self.card or _without_slash(place) in self._exact:
            return True
        return any(_below(place, base) for base in self._prefixes)


def _netloc(place: _Place) -> str:
    host = f"[{place.host}]" if ":" in place.host else place.host
    default = 443 if place.scheme == "https" else 80
    return host if place.port == default else f"{host}:{place.port}"


def _without_slash(place: _Place) -> _Place:
    return _Place(place.scheme, place.host, place.port, place.path.rstrip("/") or "/")


def _below(place: _Place, base: _Place) -> bool:
    if (place.scheme, place.host, place.port) != (base.scheme, base.host, base.port):
        return False
    root = base.path.rstrip("/")
    return place.path.rstrip("/") == root or place.path.startswith(root + "/")
