"""Agent Card signatures (A2A §8.4): a detached JWS over the card's canonical JSON.

An ``AgentCardSignature`` is ``{"protected", "signature"}`` plus an optional
unprotected ``header`` object, the same in 0.3 and 1.0. ``protected`` is the
base64url of a JSON header with ``alg``, ``kid``, ``typ: "JOSE"`` and, when
the key says where its JWKS lives, ``jku``; ``signature`` is the base64url
signature over ``protected || "." || base64url(payload)``, and the payload,
which is not sent, is the RFC 8785 form of :func:`signed_content` of the card
as served (the wire dict, read the way a 1.0 reader reads it: see
:mod:`._card_view`), so a signature over the dual card verifies over the
1.0-only card and with the official SDKs.

The 0.3 members of a dual card (``url``, ``preferredTransport``,
``additionalInterfaces``, ``security``, the ``type``/``in`` spellings of a
scheme…) are outside what a 1.0 reader, and so a signature, covers. A 0.3
client acts on them, so :func:`verify_card` also checks that each agrees with
the signed 1.0 members and raises :class:`UnsignedContentError` when one does
not (an attacker who rewrites ``url`` would otherwise keep a valid signature);
:func:`sign_card` refuses to sign such a card.
"""

# Which keys to trust is the caller's decision: a verifier MUST NOT accept
# expired or revoked keys (§8.4.2), and a key is trusted here exactly when it
# is in the key source given to verify_card; revoking one is removing it from
# the JWKS (or the list). Only the protected header is read: an unprotected
# ``header`` can be changed by anyone, so its alg/kid/jku are never used.

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .._jsonvalue import JSONObject, JSONValue
from ..wire._card import encode_card
from ._card_view import _WRAPPERS, decode, drop_empty, from_legacy, signed_content, spec_content
from ._errors import (
    CanonicalizationError,
    InvalidSignatureError,
    MalformedCardError,
    MalformedSignatureError,
    MissingSignatureError,
    SignatureError,
    UnsignedContentError,
)
from ._jose import (
    ALGORITHMS,
    KeySource,
    SigningKey,
    check_algorithms,
    jwks,
    parse_protected,
    sign_compact,
    verify_compact,
)

__all__ = [
    "CardSigner", "JWKS_PATH", "VerifiedSignature", "add_signature", "canonical_card",
    "canonicalize", "check_unsigned_members", "jwks_url", "sign_card", "signed_content",
    "verify_card",
]

def canonicalize(value: JSONValue) -> bytes:
    """The RFC 8785 (JCS) bytes of a JSON value, by the ``rfc8785`` package.

    :raises CanonicalizationError: it has none (NaN, an integer past 2**53, a lone surrogate).
    """
    try:
        import rfc8785
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise RuntimeError("canonical JSON needs rfc8785: pip install 'a2a-wsgi[signing]'") from exc
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeError, RecursionError) as exc:  # surrogate key
        raise CanonicalizationError(str(exc) or type(exc).__name__) from None


def canonical_card(card: Mapping[str, JSONValue]) -> bytes:
    """The bytes a signature over ``card`` covers (RFC 8785 of :func:`signed_content`).

    :raises CanonicalizationError: the card is not an AgentCard (a member of the wrong type).
    """
    return canonicalize(signed_content(card))


def sign_card(card: Mapping[str, JSONValue], key: SigningKey, *,
              header: Mapping[str, JSONValue] | None = None) -> JSONObject:
    """One ``AgentCardSignature`` (wire dict) over ``card``, made with ``key``.

    The protected header holds ``alg``, ``kid``, ``typ: "JOSE"`` and the key's
    ``jku`` when it has one; ``header`` becomes the unprotected header.

    :raises ValueError: the card is not an AgentCard, or its 0.3 members disagree with
        its 1.0 members (a verifier would refuse it; see the module docstring).
    """
    if not isinstance(key, SigningKey):
        raise TypeError("key must be an a2a_core.signing.SigningKey")
    try:
        check_unsigned_members(card)
    except SignatureError as exc:
        raise ValueError(f"refusing to sign: {exc}") from None
    protected, _, signed = sign_compact(canonical_card(card), key, {"typ": "JOSE"}).split(".")
    signature: JSONObject = {"protected": protected, "signature": signed}
    if header:
        signature["header"] = dict(header)
    return signature


def add_signature(card: Mapping[str, JSONValue], key: SigningKey, *,
                  header: Mapping[str, JSONValue] | None = None) -> JSONObject:
    """A copy of ``card`` with a signature by ``key`` appended to its ``signatures``."""
    signature = sign_card(card, key, header=header)
    existing = card.get("signatures") or []
    if not isinstance(existing, list):
        raise MalformedCardError("signatures is not a list")
    return {**card, "signatures": [*existing, signature]}


@dataclass(frozen=True, slots=True)
class VerifiedSignature:
    """The signature that verified: its position, its protected header, its key id and alg."""

    index: int
    header: Mapping[str, JSONValue]
    kid: str | None
    alg: str


def verify_card(card: Mapping[str, JSONValue], keys: KeySource, *,
                algorithms: Sequence[str] = ALGORITHMS,
                check_unsigned: bool = True) -> VerifiedSignature:
    """Return the first of the card's signatures that verifies with a trusted key.

    :param keys: the trusted keys: a public key, a JWK, a JWKS, a list of those, or a
        callable ``(kid, jku) -> key or JWK or JWKS or None``.
    :param algorithms: the allow-list; ``none`` can never be on it.
    :param check_unsigned: also check the 0.3 members against the signed ones.
    :raises MissingSignatureError: the card has no signatures.
    :raises SignatureError: (a subclass saying why) no signature verified; with several,
        ``errors`` has each one's reason.
    """
    allowed = check_algorithms(algorithms)
    if not isinstance(card, Mapping):
        raise MalformedCardError("the card is not a JSON object")
    signatures = card.get("signatures")
    if not signatures:
        raise MissingSignatureError("the card has no signatures")
    if not isinstance(signatures, list):
        raise MalformedCardError("signatures is not a list")
    payloads = functools.cache(lambda: _payloads(card))
    failures: list[SignatureError] = []
    for index, entry in enumerate(signatures):
        try:
            header = _verify_one(entry, payloads, keys, allowed)
        except SignatureError as exc:
            failures.append(exc)
            continue
        if check_unsigned:
            check_unsigned_members(card)
        kid = header.get("kid")
        return VerifiedSignature(index, header, kid if isinstance(kid, str) else None,
                                 str(header["alg"]))
    if len(failures) == 1:
        raise failures[0]
    raise InvalidSignatureError(f"none of the {len(failures)} signatures verified",
                                errors=failures)


def _payloads(card: Mapping[str, JSONValue]) -> list[str]:
    """The card's canonical forms (base64url): the SDKs', then, when it differs, the spec text's.

    Both are functions of the same card, so accepting either lets no other content
    through; it spares a card signed by a spec-literal implementation.
    """
    from jwt.utils import base64url_encode

    try:
        spec = spec_content(card)
        forms = [base64url_encode(canonicalize(form)).decode() for form in (drop_empty(spec), spec)]
    except CanonicalizationError as exc:
        raise MalformedCardError(f"the card cannot be canonicalized: {exc}") from None
    return forms[:1] if forms[0] == forms[1] else forms


def _verify_one(entry: JSONValue, payloads: Callable[[], list[str]], keys: KeySource,
                allowed: Sequence[str]) -> JSONObject:
    """Verify one AgentCardSignature; return its protected header."""
    if not isinstance(entry, Mapping):
        raise MalformedSignatureError("a signature is not a JSON object")
    protected, signature = entry.get("protected"), entry.get("signature")
    if not isinstance(protected, str) or not isinstance(signature, str):
        raise MalformedSignatureError("a signature needs string protected and signature members")
    parse_protected(protected, allowed)  # refused before the card is read
    *others, last = payloads()
    for payload in others:
        with contextlib.suppress(InvalidSignatureError):
            return verify_compact(f"{protected}.{payload}.{signature}", keys, allowed)[0]
    return verify_compact(f"{protected}.{last}.{signature}", keys, allowed)[0]


# -- members no signature covers ---------------------------------------------------------


def check_unsigned_members(card: Mapping[str, JSONValue]) -> None:
    """Check that a card's 0.3 members agree with the 1.0 members a signature covers.

    Only a card that has ``supportedInterfaces`` has unsigned members: a 0.3-only
    card is read into the 1.0 members and signed as such. The card is read (by
    the card codec) as a 0.3 client reads it and as our 1.0 reader does (which
    takes a scheme from its 1.0 wrapper, where the SDKs take its 0.3 members);
    each must say what the signed reading says (in both versions' terms; the 0.3
    reading, which a card without ``url`` lacks, in 0.3 terms only), and name only
    declared endpoints.

    :raises UnsignedContentError: one of them disagrees (the message names the member).
    :raises MalformedCardError: the card's members have the wrong shape.
    """
    if card.get("supportedInterfaces") is None:
        return
    version = card.get("protocolVersion")
    if version is not None and not (isinstance(version, str) and version.startswith("0.")):
        raise _unsigned("protocolVersion")
    try:
        signed = decode(from_legacy(card))
        readings = [decode(card), *([decode(_as_0_3(card))] if "url" in card else [])]
    except (CanonicalizationError, RecursionError) as exc:
        raise MalformedCardError(f"the card's 0.3 members are malformed: {exc}") from None
    declared = {(i.url, i.protocol_binding) for i in signed.supported_interfaces}
    if any((i.url, i.protocol_binding) not in declared for i in readings[-1].supported_interfaces):
        raise _unsigned("url")
    for reading, shapes in zip(readings, (("0.3", "1.0"), ("0.3",)), strict=False):
        reading = dataclasses.replace(reading, supported_interfaces=signed.supported_interfaces,
                                      signatures=())
        for shape in shapes:
            ours, theirs = (encode_card(m, shape) for m in (reading, signed))
            for member in sorted(set(ours) | set(theirs)):
                if ours.get(member) != theirs.get(member):
                    raise _unsigned(member)


def _as_0_3(card: Mapping[str, JSONValue]) -> JSONObject:
    """The card without the members only a 1.0 reader reads: what a 0.3 client acts on."""
    doc = copy.deepcopy(dict(card))
    del doc["supportedInterfaces"]
    skills = doc.get("skills")
    for holder in [doc, *(s for s in (skills if isinstance(skills, list) else ())
                          if isinstance(s, dict))]:
        holder.pop("securityRequirements", None)
    capabilities = doc.get("capabilities")
    if isinstance(capabilities, dict):
        capabilities.pop("extendedAgentCard", None)
    schemes = doc.get("securitySchemes")
    for scheme in schemes.values() if isinstance(schemes, dict) else ():
        if isinstance(scheme, dict) and "type" in scheme:
            for wrapper in _WRAPPERS.values():
                scheme.pop(wrapper, None)
    return doc


def _unsigned(member: str) -> UnsignedContentError:
    return UnsignedContentError(
        f"the 0.3 member {member} is not covered by the signature and disagrees "
        "with the signed 1.0 members")


# -- the cards a server serves -----------------------------------------------------------

#: Where the public keys are served, below the app's mount point.
JWKS_PATH = "/.well-known/jwks.json"


def jwks_url(base_url: str) -> str:
    """The JWKS address of the app whose public URL is ``base_url``."""
    return base_url.rstrip("/") + JWKS_PATH


class CardSigner:
    """Signs served card documents with each of ``keys``; :meth:`jwks` publishes them.

    Each document (the dual card, the strict 1.0 card, the extended card) is
    signed over its own content with every key: during a rotation a card carries
    one signature per key, and a client that trusts either key verifies it. Each
    signature's ``jku`` is the JWKS at :data:`JWKS_PATH` below the base URL the
    card is served for (so each tenant's clients get their own address); a key
    given its own ``jku`` keeps it when the card has no base URL.
    """

    def __init__(self, keys: Sequence[SigningKey]) -> None:
        keys = tuple(keys)
        if not keys:
            raise ValueError("card signing needs at least one SigningKey")
        if not all(isinstance(key, SigningKey) for key in keys):
            raise TypeError("card signing keys must be a2a_core.signing.SigningKey objects")
        kids = [key.kid for key in keys]
        if len(set(kids)) != len(kids):
            raise ValueError(f"card signing key ids must be unique: {kids}")
        self.keys = keys

    def __repr__(self) -> str:
        return f"CardSigner(kids={list(self.kids)!r})"

    @property
    def kids(self) -> tuple[str, ...]:
        return tuple(key.kid for key in self.keys)

    def sign(self, document: Mapping[str, JSONValue], base_url: str | None) -> JSONObject:
        """``document`` with one signature per key appended to its ``signatures``.

        :raises ValueError: the document is not a card a verifier would accept.
        """
        signed = dict(document)
        for key in self.keys:
            published = dataclasses.replace(key, jku=jwks_url(base_url)) if base_url else key
            signed = add_signature(signed, published)
        return signed

    def jwks(self) -> JSONObject:
        """The JWKS of every key (serve it at :data:`JWKS_PATH`)."""
        return jwks(list(self.keys))
