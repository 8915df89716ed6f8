"""Signed deliveries: what PushSigner makes, verify_push accepts; tampering, age and replay fail."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from a2a_client import PushVerificationError, ReplayCache, verify_push
from a2a_wsgi.push import SIGNATURE_HEADER, PushSigner, SigningKey

NOW = 1_800_000_000.0
BODY = b'{"statusUpdate":{"taskId":"t-1"}}'
URL = "https://hooks.example/a2a"


def clock() -> float:
    return NOW


def signed(signer: PushSigner, body: bytes = BODY, *, at: float = NOW, jti: str = "k.1",
           url: str = URL) -> dict[str, str]:
    jwt = signer.sign(body=body, url=url, task_id="t-1", jti=jti, now=at)
    return {SIGNATURE_HEADER: jwt, "Content-Type": "application/a2a+json"}


@pytest.fixture(params=["EdDSA", "ES256"])
def signer(request: pytest.FixtureRequest) -> PushSigner:
    return PushSigner([SigningKey.generate("k1", request.param)], issuer="https://agent.example/")


def _b64(obj: Any) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(segment: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def test_a_good_signature_verifies_against_the_jwks(signer: PushSigner) -> None:
    claims = verify_push(signed(signer), BODY, jwks=signer.jwks(), audience=URL,
                         replay_cache=ReplayCache(clock=clock), clock=clock)
    assert claims["taskId"] == "t-1" and claims["iss"] == "https://agent.example/"
    assert claims["aud"] == URL and claims["jti"] == "k.1"
    assert claims["iat"] == int(NOW) and claims["exp"] > claims["iat"]


def test_header_names_the_key_and_algorithm(signer: PushSigner) -> None:
    header = _unb64(signed(signer)[SIGNATURE_HEADER].split(".")[0])
    assert header == {"alg": signer.keys[0].alg, "kid": "k1", "typ": "JWT"}
    jwk = signer.jwks()["keys"][0]
    assert jwk["kid"] == "k1" and "d" not in jwk  # public half only


def test_a_single_jwk_as_key_works_too(signer: PushSigner) -> None:
    key = signer.jwks()["keys"][0]
    assert verify_push(signed(signer), BODY, key=key, clock=clock)["jti"] == "k.1"


def test_a_tampered_body_fails(signer: PushSigner) -> None:
    with pytest.raises(PushVerificationError, match="body"):
        verify_push(signed(signer), BODY.replace(b"t-1", b"t-2"), jwks=signer.jwks(), clock=clock)


def test_tampered_claims_fail_the_signature(signer: PushSigner) -> None:
    head, payload, sig = signed(signer)[SIGNATURE_HEADER].split(".")
    claims = _unb64(payload)
    claims["taskId"] = "someone-elses-task"
    forged = {SIGNATURE_HEADER: f"{head}.{_b64(claims)}.{sig}"}
    with pytest.raises(PushVerificationError, match="bad signature"):
        verify_push(forged, BODY, jwks=signer.jwks(), clock=clock)


def test_another_key_with_the_same_kid_fails(signer: PushSigner) -> None:
    impostor = PushSigner([SigningKey.generate("k1", signer.keys[0].alg)])
    with pytest.raises(PushVerificationError, match="bad signature"):
        verify_push(signed(impostor), BODY, jwks=signer.jwks(), clock=clock)


def test_unknown_kid_fails(signer: PushSigner) -> None:
    other = PushSigner([SigningKey.generate("k9")])
    with pytest.raises(PushVerificationError, match="unknown signing key"):
        verify_push(signed(other), BODY, jwks=signer.jwks(), clock=clock)


@pytest.mark.parametrize("alg", ["none", "HS256", "RS256"])
def test_other_algorithms_are_refused(signer: PushSigner, alg: str) -> None:
    _, payload, sig = signed(signer)[SIGNATURE_HEADER].split(".")
    header = _b64({"alg": alg, "kid": "k1", "typ": "JWT"})
    with pytest.raises(PushVerificationError, match="not accepted"):
        verify_push({SIGNATURE_HEADER: f"{header}.{payload}.{sig}"}, BODY, jwks=signer.jwks(),
                    clock=clock)


def test_key_type_must_fit_the_algorithm() -> None:
    ed = PushSigner([SigningKey.generate("k1", "EdDSA")])
    es = PushSigner([SigningKey.generate("k1", "ES256")])
    with pytest.raises(PushVerificationError, match="does not match"):
        verify_push(signed(ed), BODY, jwks=es.jwks(), clock=clock)


def test_stale_and_future_signatures_fail(signer: PushSigner) -> None:
    old = signed(signer, at=NOW - 301)
    with pytest.raises(PushVerificationError, match="stale"):
        verify_push(old, BODY, jwks=signer.jwks(), max_age=300, clock=clock)
    assert verify_push(signed(signer, at=NOW - 299), BODY, jwks=signer.jwks(), max_age=300,
                       clock=clock)
    with pytest.raises(PushVerificationError, match="future"):
        verify_push(signed(signer, at=NOW + 120), BODY, jwks=signer.jwks(), clock=clock)


def test_a_replayed_delivery_fails_the_second_time(signer: PushSigner) -> None:
    cache = ReplayCache(clock=clock)
    headers = signed(signer)
    verify_push(headers, BODY, jwks=signer.jwks(), replay_cache=cache, clock=clock)
    with pytest.raises(PushVerificationError, match="replayed"):
        verify_push(headers, BODY, jwks=signer.jwks(), replay_cache=cache, clock=clock)
    # A retry of the same delivery is signed afresh with its own jti and passes.
    retry = signed(signer, jti="k.2")
    verify_push(retry, BODY, jwks=signer.jwks(), replay_cache=cache, clock=clock)


def test_wrong_audience_fails(signer: PushSigner) -> None:
    with pytest.raises(PushVerificationError, match="another webhook"):
        verify_push(signed(signer), BODY, jwks=signer.jwks(), audience="https://mine.example/",
                    clock=clock)


@pytest.mark.parametrize("value", ["", "a.b", "a.b.c.d", "!!!.???.###", "x" * 9000])
def test_malformed_signatures_fail_cleanly(signer: PushSigner, value: str) -> None:
    with pytest.raises(PushVerificationError):
        verify_push({SIGNATURE_HEADER: value}, BODY, jwks=signer.jwks(), clock=clock)


def test_missing_signature_fails(signer: PushSigner) -> None:
    with pytest.raises(PushVerificationError, match="no X-A2A-Push-Signature"):
        verify_push({}, BODY, jwks=signer.jwks(), clock=clock)


def test_token_only_verification_is_constant_time_and_case_insensitive() -> None:
    assert verify_push({"x-a2a-notification-token": "s3cret"}, BODY, token="s3cret") == {}
    for sent in ({}, {"X-A2A-Notification-Token": "s3cre"}):
        with pytest.raises(PushVerificationError, match="token"):
            verify_push(sent, BODY, token="s3cret")


def test_verify_push_refuses_to_check_nothing() -> None:
    with pytest.raises(ValueError):
        verify_push({}, BODY)


def test_key_rotation_keeps_old_signatures_valid_until_dropped() -> None:
    old_key, new_key = SigningKey.generate("old"), SigningKey.generate("new")
    before = PushSigner([old_key])
    during = PushSigner([new_key, old_key])
    jwks = during.jwks()
    assert verify_push(signed(before), BODY, jwks=jwks, clock=clock)
    assert _unb64(signed(during)[SIGNATURE_HEADER].split(".")[0])["kid"] == "new"
    with pytest.raises(PushVerificationError, match="unknown"):
        verify_push(signed(before), BODY, jwks=PushSigner([new_key]).jwks(), clock=clock)


def test_pem_keys_load(signer: PushSigner) -> None:
    from cryptography.hazmat.primitives import serialization

    pem = signer.keys[0].private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    loaded = PushSigner([SigningKey.from_pem("k1", pem)])
    assert verify_push(signed(loaded), BODY, jwks=signer.jwks(), clock=clock)


def test_replay_cache_is_bounded() -> None:
    now = [0.0]
    cache = ReplayCache(max_entries=10, clock=lambda: now[0])
    for i in range(50):
        assert cache.add(f"j{i}", 100.0 + i)
    assert len(cache) <= 10
    now[0] = 1000.0  # everything expired: the same id is new again
    assert cache.add("j49", 2000.0)


class _JWKSPeer:
    """Serves a signer's JWKS (or 503 while ``fail``); counts the requests."""

    def __init__(self, signer: PushSigner) -> None:
        self.signer, self.fail, self.hits = signer, False, 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        self.hits += 1
        if self.fail:
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"down"]
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(self.signer.jwks()).encode()]


@pytest.mark.slow
def test_the_jwks_fetcher_caches_refreshes_on_rotation_and_survives_outages() -> None:
    from support.wsgi_server import Served

    from a2a_client import JWKSFetcher

    first = PushSigner([SigningKey.generate("first", "EdDSA")])
    peer = _JWKSPeer(first)
    served = Served(peer)
    try:
        now = [1000.0]
        fetcher = JWKSFetcher(served.url, ttl=300, min_refresh=30, clock=lambda: now[0])
        peer.fail = True
        with pytest.raises(PushVerificationError, match="cannot fetch"):
            verify_push(signed(first), BODY, jwks=fetcher, clock=clock)  # no keys yet
        peer.fail = False
        now[0] += 30
        assert verify_push(signed(first), BODY, jwks=fetcher, clock=clock)["jti"] == "k.1"
        assert verify_push(signed(first), BODY, jwks=fetcher, clock=clock)["jti"] == "k.1"
        assert peer.hits == 2  # one failed, one cached

        rotated = PushSigner([SigningKey.generate("second", "ES256"), *first.keys])
        peer.signer = rotated
        now[0] += 31
        assert verify_push(signed(rotated), BODY, jwks=fetcher, clock=clock)["jti"] == "k.1"
        assert peer.hits == 3  # the unknown kid refetched

        peer.fail = True
        now[0] += 300  # stale, and the agent is down: the keys held still verify
        assert verify_push(signed(first), BODY, jwks=fetcher, clock=clock)["jti"] == "k.1"
        assert peer.hits == 4
    finally:
        served.stop()
