"""Signed agent cards: what a signature covers, and every way verification must refuse."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from auth_support import b64url_decode, b64url_encode

from a2a_core.models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlow,
    OAuthFlows,
)
from a2a_core.signing import (
    InvalidSignatureError,
    MalformedCardError,
    MalformedSignatureError,
    MissingSignatureError,
    SigningKey,
    UnknownKeyError,
    UnsignedContentError,
    UnsupportedAlgorithmError,
    add_signature,
    canonical_card,
    canonicalize,
    jwks,
    sign_card,
    sign_compact,
    verify_card,
)
from a2a_core.signing._card_view import spec_content
from a2a_core.wire._card import encode_card, encode_card_dual

ALGS = ["ES256", "EdDSA", "RS256"]
URL = "https://agent.example/a2a"


def _card() -> AgentCard:
    return AgentCard(
        name="Café ✓", description="Signs its card", version="1.2.0",
        supported_interfaces=[AgentInterface(url=URL, protocol_version="1.0"),
                              AgentInterface(url=URL, protocol_version="0.3")],
        capabilities=AgentCapabilities(streaming=True, extended_agent_card=True, extensions=[
            AgentExtension(uri="urn:x", params={"ratio": 0.000001, "n": 1, "\U0001f600": "a"})]),
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"],
                           security_requirements=[{"bearer": ["read"]}])],
        security_schemes={
            "bearer": HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT"),
            "key": APIKeySecurityScheme(name="X-API-Key", location="header"),
            "mtls": MutualTLSSecurityScheme(),
            "oauth": OAuth2SecurityScheme(flows=OAuthFlows(client_credentials=OAuthFlow(
                token_url="https://auth.example/token", scopes={"read": "Read"}))),
        },
        security_requirements=[{"bearer": []}, {"key": []}],
    )


def _wire(variant: str = "dual") -> dict[str, Any]:
    card = _card()
    doc = encode_card_dual(card) if variant == "dual" else encode_card(card, variant)
    received: dict[str, Any] = json.loads(json.dumps(doc))  # as a client receives it
    return received


@pytest.fixture(scope="module", params=ALGS)
def key(request: pytest.FixtureRequest) -> SigningKey:
    return SigningKey.generate(f"card-{request.param}", request.param,
                               jku="https://agent.example/.well-known/jwks.json")


@pytest.fixture(scope="module")
def es_key() -> SigningKey:
    return SigningKey.generate("es", "ES256")


@pytest.mark.parametrize("variant", ["dual", "1.0", "0.3"])
def test_signed_card_verifies(key: SigningKey, variant: str) -> None:
    signed = add_signature(_wire(variant), key)
    verified = verify_card(json.loads(json.dumps(signed)), jwks([key]))
    assert (verified.index, verified.kid, verified.alg) == (0, key.kid, key.alg)


def test_protected_header_holds_alg_kid_typ_and_jku(key: SigningKey) -> None:
    signature = sign_card(_wire(), key, header={"note": "unprotected"})
    header = json.loads(b64url_decode(signature["protected"]))
    assert header == {"alg": key.alg, "kid": key.kid, "typ": "JOSE", "jku": key.jku}
    assert signature["header"] == {"note": "unprotected"}
    assert set(signature) == {"protected", "signature", "header"}


def test_a_signature_covers_both_served_variants(es_key: SigningKey) -> None:
    """The dual card and the 1.0-only card are one card to a 1.0 reader."""
    signature = sign_card(_wire("dual"), es_key)
    one_oh = {**_wire("1.0"), "signatures": [signature]}
    assert verify_card(one_oh, es_key.public_key()).index == 0


def test_signatures_member_is_not_covered(es_key: SigningKey) -> None:
    first = add_signature(_wire(), es_key)
    both = add_signature(first, SigningKey.generate("other", "EdDSA"))
    assert len(both["signatures"]) == 2
    assert verify_card(both, es_key.public_key()).index == 0


@pytest.mark.parametrize("tamper", [
    lambda c: c.__setitem__("description", "Evil"),
    lambda c: c["supportedInterfaces"][0].__setitem__("url", "https://evil.example/a2a"),
    lambda c: c["skills"][0]["tags"].append("admin"),
    lambda c: c["capabilities"]["extensions"][0]["params"].__setitem__("ratio", 0.5),
    lambda c: c["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"]
    ["clientCredentials"].__setitem__("tokenUrl", "https://evil.example/token"),
    lambda c: c["skills"][0]["securityRequirements"][0]["schemes"]["bearer"]["list"].clear(),
], ids=["description", "interface-url", "skill-tag", "extension-param", "1.0-token-url",
        "scopes-dropped"])
def test_tampering_with_signed_members_is_detected(es_key: SigningKey,
                                                   tamper: Callable[[Any], None]) -> None:
    signed = add_signature(_wire("1.0"), es_key)
    tamper(signed)
    with pytest.raises(InvalidSignatureError):
        verify_card(signed, es_key.public_key())


_UNSIGNED = UnsignedContentError
_SIGNED = InvalidSignatureError


@pytest.mark.parametrize(("tamper", "error"), [
    (lambda c: c.__setitem__("url", "https://evil.example/a2a"), _UNSIGNED),
    (lambda c: c.__setitem__("preferredTransport", "GRPC"), _UNSIGNED),
    (lambda c: c.__setitem__("additionalInterfaces", [{"url": "https://evil.example/",
                                                       "transport": "JSONRPC"}]), _UNSIGNED),
    (lambda c: c.__setitem__("protocolVersion", "1.0"), _UNSIGNED),
    (lambda c: c.__setitem__("security", [{"none": []}]), _UNSIGNED),
    (lambda c: c["skills"][0].__setitem__("security", [{"bearer": []}]), _UNSIGNED),
    (lambda c: c.__setitem__("supportsAuthenticatedExtendedCard", False), _UNSIGNED),
    (lambda c: c["securitySchemes"]["key"]["apiKeySecurityScheme"]
     .__setitem__("location", "query"), _UNSIGNED),
    # A 1.0 reader takes a typed scheme from its 0.3 members: those are signed outright.
    (lambda c: c["securitySchemes"]["key"].__setitem__("in", "query"), _SIGNED),
    (lambda c: c["securitySchemes"]["oauth"]["flows"]["clientCredentials"]
     .__setitem__("tokenUrl", "https://evil.example/token"), _SIGNED),
], ids=["url", "transport", "additional", "protocolVersion", "security", "skill-security",
        "extended-flag", "scheme-1.0-location", "scheme-0.3-in", "scheme-0.3-token-url"])
def test_rewritten_0_3_members_of_a_dual_card_are_refused(
        es_key: SigningKey, tamper: Callable[[Any], None], error: type) -> None:
    """A 1.0 reader (and so a signature) skips most of them, but a 0.3 client acts on them."""
    signed = add_signature(_wire("dual"), es_key)
    tamper(signed)
    with pytest.raises(InvalidSignatureError) as caught:
        verify_card(signed, es_key.public_key())
    assert type(caught.value) is error


def test_rewritten_url_of_a_0_3_card_breaks_the_signature(es_key: SigningKey) -> None:
    signed = add_signature(_wire("0.3"), es_key)
    signed["url"] = "https://evil.example/a2a"
    with pytest.raises(InvalidSignatureError) as caught:
        verify_card(signed, es_key.public_key())
    assert not isinstance(caught.value, UnsignedContentError)


def test_unsigned_members_can_be_left_unchecked(es_key: SigningKey) -> None:
    signed = add_signature(_wire("dual"), es_key)
    signed["url"] = "https://elsewhere.example/a2a"
    assert verify_card(signed, es_key.public_key(), check_unsigned=False).index == 0


def test_signing_refuses_a_card_a_verifier_would_refuse(es_key: SigningKey) -> None:
    card = _wire("dual")
    card["url"] = "https://undeclared.example/"
    with pytest.raises(ValueError, match="url"):
        sign_card(card, es_key)


def _forged(card: dict[str, Any], header: dict[str, Any], signature: bytes = b"") -> dict[str, Any]:
    protected = b64url_encode(json.dumps(header).encode())
    return {**card, "signatures": [{"protected": protected, "signature": b64url_encode(signature)}]}


@pytest.mark.parametrize("alg", ["none", "None", "NONE"])
def test_alg_none_is_refused(es_key: SigningKey, alg: str) -> None:
    card = _forged(_wire(), {"alg": alg, "kid": es_key.kid, "typ": "JOSE"})
    with pytest.raises(UnsupportedAlgorithmError, match="none"):
        verify_card(card, jwks([es_key]))


@pytest.mark.parametrize("algorithms", [["none"], ["HS256"], [], "ES256"])
def test_allow_lists_cannot_name_none_or_unknown_algorithms(es_key: SigningKey,
                                                            algorithms: Any) -> None:
    with pytest.raises(ValueError):
        verify_card(add_signature(_wire(), es_key), es_key.public_key(), algorithms=algorithms)


def test_algorithms_off_the_allow_list_are_refused(es_key: SigningKey) -> None:
    with pytest.raises(UnsupportedAlgorithmError, match="ES256"):
        verify_card(add_signature(_wire(), es_key), es_key.public_key(), algorithms=["EdDSA"])


def test_hmac_with_a_public_key_as_secret_is_refused(es_key: SigningKey) -> None:
    """The classic key-confusion forgery: HS256 keyed with the published public key."""
    import hashlib
    import hmac

    header = {"alg": "HS256", "kid": es_key.kid}
    protected = b64url_encode(json.dumps(header).encode())
    secret = json.dumps(es_key.public_jwk()).encode()
    signing_input = f"{protected}.{b64url_encode(canonical_card(_wire()))}".encode()
    mac = hmac.new(secret, signing_input, hashlib.sha256).digest()
    card = {**_wire(), "signatures": [{"protected": protected, "signature": b64url_encode(mac)}]}
    with pytest.raises(UnsupportedAlgorithmError):
        verify_card(card, jwks([es_key]), algorithms=["ES256", "EdDSA", "RS256"])
    with pytest.raises(UnsupportedAlgorithmError):
        verify_card(card, {"kty": "oct", "kid": es_key.kid, "k": b64url_encode(secret)})


def test_a_key_of_another_type_cannot_verify(es_key: SigningKey) -> None:
    ed = SigningKey.generate(es_key.kid, "EdDSA")
    signed = add_signature(_wire(), ed)
    with pytest.raises(UnsupportedAlgorithmError):
        verify_card(signed, jwks([es_key]))  # same kid, but an EC key for an EdDSA header
    with pytest.raises(UnsupportedAlgorithmError):
        verify_card(signed, es_key.public_key())


def test_critical_header_extensions_are_refused(es_key: SigningKey) -> None:
    card = _forged(_wire(), {"alg": "ES256", "kid": es_key.kid, "crit": ["b64"], "b64": False})
    with pytest.raises(UnsupportedAlgorithmError, match="critical"):
        verify_card(card, jwks([es_key]))


def test_wrong_key_and_unknown_kid(es_key: SigningKey) -> None:
    signed = add_signature(_wire(), es_key)
    impostor = SigningKey.generate(es_key.kid, "ES256")
    with pytest.raises(InvalidSignatureError):
        verify_card(signed, jwks([impostor]))
    with pytest.raises(UnknownKeyError, match="kid 'es'"):
        verify_card(signed, jwks([SigningKey.generate("rotated", "ES256")]))


def test_unprotected_header_cannot_redirect_key_selection(es_key: SigningKey) -> None:
    other = SigningKey.generate("other", "ES256")
    signed = add_signature(_wire(), other, header={"kid": es_key.kid, "alg": "none"})
    with pytest.raises(UnknownKeyError):
        verify_card(signed, jwks([es_key]))
    assert verify_card(signed, jwks([es_key, other])).kid == "other"


def test_key_rotation_any_signature_may_verify(es_key: SigningKey) -> None:
    old = SigningKey.generate("old", "EdDSA")
    signed = add_signature(add_signature(_wire(), old), es_key)
    assert verify_card(signed, jwks([es_key])).index == 1
    with pytest.raises(InvalidSignatureError) as caught:
        verify_card(signed, jwks([SigningKey.generate("old", "EdDSA"),
                                  SigningKey.generate("es", "ES256")]))
    assert len(caught.value.errors) == 2


@pytest.mark.parametrize("source", ["public", "signing-key", "private", "jwk", "jwks", "list",
                                    "lookup"])
def test_key_sources(es_key: SigningKey, source: str) -> None:
    signed = add_signature(_wire(), SigningKey(es_key.kid, es_key.private_key,
                                               jku="https://keys.example/jwks"))
    seen: list[tuple[str | None, str | None]] = []

    def lookup(kid: str | None, jku: str | None) -> Any:
        seen.append((kid, jku))
        return jwks([es_key])

    keys = {"public": es_key.public_key(), "signing-key": es_key,
            "private": es_key.private_key, "jwk": es_key.public_jwk(), "jwks": jwks([es_key]),
            "list": [SigningKey.generate("x", "EdDSA").public_jwk(), es_key.public_jwk()],
            "lookup": lookup}[source]
    assert verify_card(signed, keys).kid == es_key.kid
    if source == "lookup":
        assert seen == [(es_key.kid, "https://keys.example/jwks")]


@pytest.mark.parametrize("jwk", [
    {"alg": "none"}, {"alg": "HS256"}, {"alg": "ES384"}, {"kty": "oct"}, {"kty": "OKP"},
    {"crv": "P-384"}, {"x": 5}, {"x": "AA"}, {"use": "enc"}, {"key_ops": ["sign"]}, {"d": "AA"},
], ids=str)
def test_a_trusted_jwk_that_cannot_verify_is_refused_not_raised(es_key: SigningKey,
                                                                 jwk: dict[str, Any]) -> None:
    """A JWK PyJWT cannot read, or reads as another algorithm's, is a key that cannot verify."""
    signed = add_signature(_wire(), es_key)
    with pytest.raises(UnsupportedAlgorithmError):
        verify_card(signed, {**es_key.public_jwk(), **jwk})
    assert verify_card(signed, [{**es_key.public_jwk(), **jwk}, es_key.public_jwk()]).index == 0


@pytest.mark.parametrize(("card", "error"), [
    ({"name": "x"}, MissingSignatureError),
    ({"name": "x", "signatures": []}, MissingSignatureError),
    ({"name": "x", "signatures": {"protected": "a"}}, MalformedCardError),
    ({"name": "x", "signatures": ["abc"]}, MalformedSignatureError),
    ({"name": "x", "signatures": [{"protected": 1, "signature": "a"}]}, MalformedSignatureError),
    ({"name": "x", "signatures": [{"protected": "!!", "signature": "a"}]},
     MalformedSignatureError),
    ({"name": "x", "signatures": [{"protected": b64url_encode(b"[1]"), "signature": "a"}]},
     MalformedSignatureError),
    ({"name": "x", "signatures": [{"protected": b64url_encode(b'{"kid":"a"}'),
                                   "signature": "a"}]}, MalformedSignatureError),
])
def test_malformed_signatures(es_key: SigningKey, card: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        verify_card(card, jwks([es_key]))


def test_a_card_of_the_wrong_shape_cannot_verify(es_key: SigningKey) -> None:
    signed = add_signature(_wire(), es_key)
    signed["name"] = 5
    with pytest.raises(MalformedCardError, match="name"):
        verify_card(signed, es_key.public_key())
    with pytest.raises(ValueError, match="name"):
        sign_card(signed, es_key)


def test_explicit_proto_defaults_do_not_change_the_content() -> None:
    """a2a-js#605: ``"required": false`` signed present must verify absent, and back."""
    card = _wire("1.0")
    explicit = copy.deepcopy(card)
    explicit["capabilities"]["extensions"][0]["required"] = False
    explicit["skills"][0]["examples"] = []
    explicit["iconUrl"] = None
    assert canonical_card(explicit) == canonical_card(card)


def test_numbers_in_params_are_doubles_and_member_order_is_irrelevant() -> None:
    card = _wire("1.0")
    other = copy.deepcopy(card)
    other["capabilities"]["extensions"][0]["params"]["n"] = 1.0
    reordered = dict(reversed(list(other.items())))
    assert canonical_card(reordered) == canonical_card(card)
    assert b'"ratio":0.000001' in canonical_card(card)
    assert '"\U0001f600":"a"'.encode() in canonical_card(card)


def test_snake_case_members_read_as_their_camel_case_names() -> None:
    card = _wire("1.0")
    snake = {("default_input_modes" if k == "defaultInputModes" else k): v for k, v in card.items()}
    assert canonical_card(snake) == canonical_card(card)
    with pytest.raises(ValueError, match="twice"):
        canonical_card({**card, "default_input_modes": ["x"]})


def test_requirements_without_scopes_are_not_covered_as_in_the_sdks() -> None:
    """Known gap, kept for interop: the SDKs drop ``{"list": []}`` and with it the whole
    requirement, so a signature cannot tell ``[{"bearer": []}]`` from no requirement."""
    card = _wire("1.0")
    assert canonical_card({k: v for k, v in card.items() if k != "securityRequirements"}) \
        == canonical_card(card)
    assert b'"schemes":{"bearer":{"list":[]}}' in canonicalize(spec_content(card))


def test_members_a_1_0_reader_does_not_know_are_not_covered() -> None:
    card = _wire("1.0")
    assert canonical_card({**card, "x-vendor": {"a": 1}}) == canonical_card(card)


def test_a_signature_over_the_spec_text_form_verifies(es_key: SigningKey) -> None:
    """a2a-js#627: the spec keeps REQUIRED members even when empty; the SDKs drop them."""
    card = _wire("1.0")
    card["description"] = ""
    card["skills"][0]["description"] = ""
    literal = canonicalize(spec_content(card))
    assert b'"description":""' in literal and literal != canonical_card(card)
    protected, _, signature = sign_compact(literal, es_key).split(".")
    signed = {**card, "signatures": [{"protected": protected, "signature": signature}]}
    assert verify_card(signed, es_key.public_key()).index == 0


def test_an_mtls_scheme_without_description_is_dropped_like_the_sdks_do() -> None:
    card = _wire("1.0")
    assert card["securitySchemes"]["mtls"] == {"mtlsSecurityScheme": {}}
    assert b"mtls" not in canonical_card(card)


def test_signing_key_repr_shows_no_key_material(es_key: SigningKey) -> None:
    assert repr(es_key) == "SigningKey(kid='es', alg='ES256')"


def test_signing_key_checks(es_key: SigningKey) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    with pytest.raises(ValueError, match="cannot sign"):
        SigningKey("k", es_key.private_key, "EdDSA")
    with pytest.raises(ValueError, match="P-256"):
        SigningKey("k", ec.generate_private_key(ec.SECP384R1()))
    with pytest.raises(ValueError, match="2048"):
        SigningKey("k", rsa.generate_private_key(public_exponent=65537, key_size=1024))
    with pytest.raises(ValueError, match="kid"):
        SigningKey("", es_key.private_key)
    with pytest.raises(ValueError, match="unsupported"):
        SigningKey.generate("k", "HS256")
