"""Serving the agent card: endpoints filled in, encoded once per variant, validated with ETag/304.

Two variants of the one card are served:

* **dual** (the 1.0 card plus the 0.3 members, see :mod:`a2a_core.wire._card`):
  for a request without ``A2A-Version`` and for ``A2A-Version: 0.3``. A
  missing version means 0.3, so the two get the same bytes; the dual card is
  valid against the 0.3 schema and still shows a 0.3 client the 1.0
  interfaces it could move to, which a 0.3-only card would hide.
* **strict 1.0** (no 0.3-only member, valid against the published 1.0
  schema, which forbids unknown members): for a request whose
  ``A2A-Version`` is 1.x, read as on the JSON-RPC path (the header, else the
  query parameter), and for every request when the app does not serve 0.3.

Any other version value gets the dual card: discovery answers whatever is
asked, and the card's interfaces say what is spoken. Every card answer, 304s
included, carries ``Vary: A2A-Version`` so shared caches keep the variants
apart, and each variant has its own ETag (the hash of its own body).

Each variant is encoded once per public base URL (a per-request override may
give each tenant its own) and kept as a :class:`PreparedCard`: the bytes, the
validators and the three answers made from them (200, HEAD, 304), so a card
request is a dictionary lookup. This is the one cache of the card: a server
answers every card request through :meth:`CardEndpoint.response`. The
agent's card object is compared by identity: a service that returns a new
card object gets it re-encoded, and a new signer empties the cache.

With a :class:`~a2a_core.signing.CardSigner` (``signer``), each variant is
signed over its own document when it is encoded, once per base URL, so the
signature, the body and the ETag stay the same from one request to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from ._caching import card_validators, is_not_modified, with_vary
from ._http import HttpRequest, HttpResponse
from ._jsonvalue import JSONObject
from ._streaming import dumps
from ._versioning import V0_3, V1_0, normalize_version
from .extensions import Extension, merge_card_extensions
from .models import AgentCard, AgentInterface
from .signing import CardSigner
from .wire._card import encode_card, encode_card_dual

__all__ = ["CardEndpoint", "MISSING_BASE_URL", "DUAL", "STRICT_1_0", "PreparedCard",
           "asked_version"]

MISSING_BASE_URL = (
    "The agent card needs a public URL: pass base_url=... when creating the app "
    "(A2AApp(agent, base_url='https://host/path')) or set it per request with "
    "a2a_wsgi.put_base_url(environ, url) in a middleware."
)
#: The two card variants.
DUAL = "dual"
STRICT_1_0 = V1_0
#: Encoded cards kept: per-tenant URLs times the two variants, bounded.
_MAX_CACHED = 128



@dataclass(frozen=True, slots=True)
class PreparedCard:
    """One variant at one base URL, ready to send: bytes, validators, header lists and the
    answers made of them (shared by every request: their header lists are not to be
    changed; an adapter writes copies)."""

    #: The agent's card object it was encoded from (compared by identity).
    source: AgentCard
    #: The card as served (endpoints filled in, extensions merged).
    public: AgentCard
    body: bytes
    etag: str
    last_modified: datetime
    #: The headers of a 200 (Content-Type, validators, Cache-Control, Vary).
    headers: tuple[tuple[str, str], ...]
    #: The headers of a 304: ETag, Cache-Control and Vary, without the representation's
    #: Content-Type and, as there is an ETag, Last-Modified (RFC 9110 §15.4.5).
    not_modified_headers: tuple[tuple[str, str], ...]
    #: The answer to a GET, a HEAD (no body), and a request whose copy is current (304).
    ok: HttpResponse
    head: HttpResponse
    unchanged: HttpResponse

    def not_modified(self, if_none_match: str | None, if_modified_since: str | None) -> bool:
        """Whether a GET with these validators may be answered 304."""
        if if_none_match == self.etag:  # the usual revalidation: our own tag sent back
            return True
        return is_not_modified(if_none_match, if_modified_since, self.etag, self.last_modified)


class CardEndpoint:
    """The public card of one agent, per base URL and variant."""

    def __init__(
        self,
        agent_card: Callable[[], AgentCard],
        *,
        last_modified: datetime,
        rpc_path: str = "",
        rest_path: str | None = None,
        bindings: Sequence[str] = ("JSONRPC", "HTTP+JSON"),
        versions: Sequence[str] = (),
        extensions: Sequence[Extension] = (),
        signer: CardSigner | None = None,
        grpc_url: str | None = None,
    ) -> None:
        self._agent_card = agent_card
        #: The gRPC interface (another process serves it), listed after the HTTP bindings.
        self.grpc_url = grpc_url
        self._signer = signer
        self.last_modified = last_modified
        self.rpc_path = rpc_path
        self.rest_path = rest_path
        self.bindings = tuple(bindings)
        self.versions = tuple(versions)
        self.extensions = tuple(extensions)
        #: Whether 0.3 readers are served (the dual card); else only the strict 1.0 card is.
        self.serves_0_3 = not self.versions or V0_3 in self.versions
        self._cache: dict[tuple[str, str], PreparedCard] = {}

    @property
    def signer(self) -> CardSigner | None:
        """The keys each served variant is signed with (None: cards go out unsigned)."""
        return self._signer

    @signer.setter
    def signer(self, signer: CardSigner | None) -> None:
        self._signer = signer
        self._cache.clear()  # bodies encoded before were signed otherwise (or not at all)

    def public_card(self, base_url: str | None) -> AgentCard:
        """The card as served: endpoints filled in, extension declarations merged."""
        return self.prepared(base_url, DUAL if self.serves_0_3 else STRICT_1_0).public

    def variants(self) -> tuple[str, ...]:
        """The variants served: the dual card when 0.3 readers are served, and the strict one."""
        return (DUAL, STRICT_1_0) if self.serves_0_3 else (STRICT_1_0,)

    def body(self, base_url: str | None, variant: str) -> bytes:
        """The bytes served for ``variant`` at ``base_url`` (signed when a signer is set)."""
        return self.prepared(base_url, variant).body

    def variant(self, request: HttpRequest) -> str:
        """:data:`STRICT_1_0` or :data:`DUAL`, for this request (see the module docstring)."""
        return self.variant_of(asked_version(request))

    def variant_of(self, version: str | None) -> str:
        """:data:`STRICT_1_0` or :data:`DUAL`, for the version a request asked for (None:
        none, the usual discovery GET)."""
        if not self.serves_0_3:
            return STRICT_1_0
        if version is None:
            return DUAL
        return STRICT_1_0 if normalize_version(version).partition(".")[0] == "1" else DUAL

    def response(self, request: HttpRequest, base_url: str | None) -> HttpResponse:
        """The card variant with its validators; 304 when the client's copy of it is current."""
        headers = request.headers
        return self.answer(request.method, base_url, asked_version(request),
                           headers.get("If-None-Match"), headers.get("If-Modified-Since"))

    def answer(self, method: str, base_url: str | None, version: str | None,
               if_none_match: str | None, if_modified_since: str | None) -> HttpResponse:
        """The one way a card request is answered, from what it depends on: its method (GET
        or HEAD), the base URL, the version asked (:func:`asked_version`) and its
        validators. From the prepared card of its variant: 304 when the client's copy of it
        is current. An adapter may call it with those few values rather than a request."""
        card = self.prepared(base_url, self.variant_of(version))
        if if_none_match == card.etag or card.not_modified(if_none_match, if_modified_since):
            return card.unchanged
        return card.head if method == "HEAD" else card.ok

    def with_endpoints(self, card: AgentCard, base_url: str | None) -> AgentCard:
        """``card`` with the interfaces this server serves, when it declares none.

        In ``bindings`` order: a JSON-RPC interface per version (newest first),
        and the HTTP+JSON one (1.0) when it is served. Raises RuntimeError (a
        deployment mistake, loudly) when there is no URL.
        """
        if not card.supported_interfaces:
            if not base_url:
                raise RuntimeError(MISSING_BASE_URL)
            card = replace(card, supported_interfaces=self._interfaces(base_url.rstrip("/")))
        return merge_card_extensions(card, self.extensions)

    def _interfaces(self, base: str) -> list[AgentInterface]:
        interfaces: list[AgentInterface] = []
        for binding in self.bindings:
            if binding == "JSONRPC":
                url = base + "/" + (self.rpc_path + "/" if self.rpc_path else "")
                interfaces += [AgentInterface(url=url, protocol_binding="JSONRPC",
                                              protocol_version=v)
                               for v in sorted(self.versions, reverse=True)]
            elif binding == "HTTP+JSON" and self.rest_path is not None:
                url = base + "/" + self.rest_path
                interfaces.append(AgentInterface(url=url, protocol_binding="HTTP+JSON",
                                                 protocol_version=V1_0))
        if self.grpc_url and (not self.versions or V1_0 in self.versions):
            # A target as written (host:port, grpcs://...): not a path below the base URL.
            interfaces.append(AgentInterface(url=self.grpc_url, protocol_binding="GRPC",
                                             protocol_version=V1_0))
        return interfaces

    def document(self, card: AgentCard, base_url: str | None,
                 encode: Callable[[AgentCard], JSONObject]) -> JSONObject:
        """The one way a card is served: endpoints filled in, extension declarations merged,
        encoded by ``encode`` (a variant of the public card, or an operation's result for
        the extended card), then signed when a signer is set."""
        doc = encode(self.with_endpoints(card, base_url))
        if self._signer is not None:
            doc = self._signer.sign(doc, base_url)
        return doc

    def prepared(self, base_url: str | None, variant: str) -> PreparedCard:
        """``variant`` at ``base_url``, encoded (and signed) once and kept."""
        key = (base_url or "", variant)
        card = self._agent_card()
        cached = self._cache.get(key)
        if cached is not None and cached.source is card:
            return cached
        public = self.with_endpoints(card, base_url)
        doc = self.document(card, base_url, _ENCODERS[variant])
        body = dumps(doc).encode()
        validators = card_validators(body, self.last_modified)
        headers = tuple(with_vary(validators.headers(), "A2A-Version"))
        unchanged = tuple((k, v) for k, v in headers if k not in _NOT_IN_304)
        prepared = PreparedCard(
            card, public, body, validators.etag, validators.last_modified, headers, unchanged,
            HttpResponse(200, list(headers), body), HttpResponse(200, list(headers), b""),
            HttpResponse(304, list(unchanged), b""))
        if len(self._cache) >= _MAX_CACHED:  # per-tenant URLs: keep the cache bounded
            self._cache.clear()
        self._cache[key] = prepared
        return prepared

_NOT_IN_304 = ("Content-Type", "Last-Modified")


def asked_version(request: HttpRequest) -> str | None:
    """The version a card request asks for, read as on the JSON-RPC path: the
    ``A2A-Version`` header, else the query parameter (None: neither)."""
    header = request.headers.get("A2A-Version")
    if header is not None and header.strip():
        return header
    return request.query.get("A2A-Version") if request.query else None


def _strict(card: AgentCard) -> JSONObject:
    return encode_card(card, V1_0)


#: How each variant of the public card is written.
_ENCODERS: dict[str, Callable[[AgentCard], JSONObject]] = {
    STRICT_1_0: _strict,
    DUAL: encode_card_dual,
}
