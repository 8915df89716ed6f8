"""Serving the agent card: endpoints filled in, encoded once, validated with ETag/304.

The card is encoded once per public base URL (a per-request override may give
each tenant its own) and kept as bytes with its validators, so a card request
is a dictionary lookup. The agent's card object is compared by identity: a
service that returns a new card object gets it re-encoded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from .caching import card_validators, is_not_modified
from .extensions import Extension, merge_card_extensions
from .http import HttpRequest, HttpResponse
from .models import AgentCard, AgentInterface
from .streaming import dumps
from .wire.card import encode_card_dual

__all__ = ["CardEndpoint", "MISSING_BASE_URL"]

MISSING_BASE_URL = (
    "The agent card needs a public URL: pass base_url=... when creating the app "
    "(A2AApp(agent, base_url='https://host/path')) or set it per request with "
    "a2a_wsgi.put_base_url(environ, url) in a middleware."
)
_MAX_CACHED_URLS = 64

_Encoded = tuple[AgentCard, bytes, list[tuple[str, str]]]


class CardEndpoint:
    """The public card of one agent, per base URL."""

    def __init__(
        self,
        agent_card: Callable[[], AgentCard],
        *,
        last_modified: datetime,
        rpc_path: str = "",
        versions: Sequence[str] = (),
        extensions: Sequence[Extension] = (),
    ) -> None:
        self._agent_card = agent_card
        self.last_modified = last_modified
        self.rpc_path = rpc_path
        self.versions = tuple(versions)
        self.extensions = tuple(extensions)
        self._cache: dict[str, tuple[AgentCard, _Encoded]] = {}

    def public_card(self, base_url: str | None) -> AgentCard:
        """The card as served: endpoints filled in, extension declarations merged."""
        return self._encoded(base_url)[0]

    def response(self, request: HttpRequest, base_url: str | None) -> HttpResponse:
        """The card with its validators; 304 when the client's copy is current."""
        _card, body, headers = self._encoded(base_url)
        etag = next(value for name, value in headers if name == "ETag")
        if_none_match = request.headers.get("If-None-Match")
        if_modified_since = request.headers.get("If-Modified-Since")
        if is_not_modified(if_none_match, if_modified_since, etag, self.last_modified):
            kept = [(k, v) for k, v in headers if k != "Content-Type"]
            return HttpResponse(304, kept, b"")
        return HttpResponse(200, list(headers), b"" if request.method == "HEAD" else body)

    def with_endpoints(self, card: AgentCard, base_url: str | None) -> AgentCard:
        """``card`` with one JSON-RPC interface per version when it declares none.

        Raises RuntimeError (a deployment mistake, loudly) when there is no URL.
        """
        if not card.supported_interfaces:
            if not base_url:
                raise RuntimeError(MISSING_BASE_URL)
            endpoint = base_url.rstrip("/") + "/" + (self.rpc_path + "/" if self.rpc_path else "")
            interfaces = [
                AgentInterface(url=endpoint, protocol_binding="JSONRPC", protocol_version=v)
                for v in sorted(self.versions, reverse=True)
            ]
            card = replace(card, supported_interfaces=interfaces)
        return merge_card_extensions(card, self.extensions)

    def _encoded(self, base_url: str | None) -> _Encoded:
        key = base_url or ""
        card = self._agent_card()
        cached = self._cache.get(key)
        if cached is not None and cached[0] is card:
            return cached[1]
        public = self.with_endpoints(card, base_url)
        body = dumps(encode_card_dual(public)).encode()
        encoded = (public, body, card_validators(body, self.last_modified).headers())
        if len(self._cache) >= _MAX_CACHED_URLS:  # per-tenant URLs: keep the cache bounded
            self._cache.clear()
        self._cache[key] = (card, encoded)
        return encoded
