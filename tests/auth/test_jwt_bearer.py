"""Bearer JWTs: signature, algorithm allow-list, claims; JWKS fetched and refreshed over HTTP."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

import pytest
import requests
from auth_support import (
    AUDIENCE,
    ISSUER,
    NOW,
    GuardedApp,
    JWKSApp,
    b64url_encode,
    jwt_for,
    request_with,
    unsigned_jwt,
)
from support.wsgi_server import Served

from a2a_core.models import HTTPAuthSecurityScheme
from a2a_core.signing import SigningKey
from a2a_wsgi.auth import (
    AuthPolicy,
    InvalidCredentialsError,
    JWTBearerAuthenticator,
    JWTVerifier,
    PermissionDeniedError,
)

KEY = SigningKey.generate("k1", "ES256")
ED = SigningKey.generate("ed", "EdDSA")


def _verifier(**options: Any) -> JWTVerifier:
    settings: dict[str, Any] = {"issuer": ISSUER, "audience": AUDIENCE, "keys": [KEY, ED],
                                "clock": lambda: NOW}
    settings.update(options)
    return JWTVerifier(**settings)


def _authenticator(**options: Any) -> JWTBearerAuthenticator:
    return JWTBearerAuthenticator(_verifier(), **options)


def _auth(token: str, authenticator: JWTBearerAuthenticator | None = None) -> Any:
    subject = authenticator or _authenticator()
    return subject.authenticate(request_with({"Authorization": f"Bearer {token}"}))


def _hs256_with_public_key() -> str:
    head = b64url_encode(json.dumps({"alg": "HS256", "kid": "k1"}).encode())
    body = b64url_encode(json.dumps({"iss": ISSUER, "aud": AUDIENCE, "sub": "x",
                                     "exp": NOW + 60}).encode())
    secret = json.dumps(KEY.public_jwk()).encode()
    mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url_encode(mac)}"


def test_good_token_gives_the_subject_and_claims() -> None:
    principal = _auth(jwt_for(KEY, tenant="acme"), _authenticator(tenant_claim="tenant"))
    assert (principal.identity, principal.tenant) == ("alice", "acme")
    assert principal.claims["iss"] == ISSUER
    assert _auth(jwt_for(ED)).identity == "alice"


def test_missing_token_is_not_ours() -> None:
    assert _authenticator().authenticate(request_with()) is None


def test_audience_list_and_several_issuers() -> None:
    token = jwt_for(KEY, aud=["other", AUDIENCE], iss="https://b.example")
    verifier = _verifier(issuer=[ISSUER, "https://b.example"])
    assert _auth(token, JWTBearerAuthenticator(verifier)).identity == "alice"


def test_leeway_allows_small_clock_skew() -> None:
    assert _auth(jwt_for(KEY, exp=NOW - 20)).identity == "alice"
    assert _auth(jwt_for(KEY, nbf=NOW + 20)).identity == "alice"


REFUSED = {
    "malformed-two-parts": ("abc.def", "malformed token"),
    "malformed-base64": ("a!b.c.d", "malformed"),
    "malformed-claims": (None, "claims are not JSON"),
    "expired": (jwt_for(KEY, exp=NOW - 31), "expired"),
    "not-yet-valid": (jwt_for(KEY, nbf=NOW + 60), "not valid yet"),
    "issued-in-future": (jwt_for(KEY, iat=NOW + 600), "future"),
    "wrong-audience": (jwt_for(KEY, aud="https://other.example"), "audience"),
    "no-audience": (jwt_for(KEY, aud=None), "audience"),
    "wrong-issuer": (jwt_for(KEY, iss="https://evil.example"), "issuer"),
    "wrong-key": (jwt_for(SigningKey.generate("k1", "ES256")), "signature invalid"),
    "unknown-kid": (jwt_for(SigningKey.generate("k9", "ES256")), "unknown key"),
    "alg-none": (unsigned_jwt(), "algorithm"),
    "alg-none-mixed-case": (unsigned_jwt("nOnE"), "algorithm"),
    "hs256-public-key": (_hs256_with_public_key(), "algorithm"),
    "no-exp": (jwt_for(KEY, exp=None), "no exp"),
    "exp-not-a-number": (jwt_for(KEY, exp="tomorrow"), "not a number"),
    "no-sub": (jwt_for(KEY, sub=None), "no sub"),
    "wrong-typ": (jwt_for(KEY, header={"typ": "dpop+jwt"}), "typ"),
}


def _malformed_claims() -> str:
    from a2a_core.signing import sign_compact

    return sign_compact(b"not json", KEY)


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_tokens_answer_401_invalid_token(case: str) -> None:
    token, reason = REFUSED[case]
    with pytest.raises(InvalidCredentialsError) as caught:
        _auth(token or _malformed_claims())
    assert reason in caught.value.reason
    assert caught.value.http_status == 401
    assert caught.value.challenges[0].startswith('Bearer realm="a2a", error="invalid_')


def test_algorithms_off_the_allow_list() -> None:
    with pytest.raises(InvalidCredentialsError, match="algorithm"):
        _auth(jwt_for(KEY), JWTBearerAuthenticator(_verifier(algorithms=["EdDSA"])))
    with pytest.raises(ValueError):
        _verifier(algorithms=["none"])


def test_oversized_header() -> None:
    with pytest.raises(InvalidCredentialsError, match="too large"):
        _auth(jwt_for(KEY, padding="x" * 9000))


def test_missing_scope_is_403_insufficient_scope() -> None:
    authenticator = _authenticator(scopes=["agent:call"])
    assert _auth(jwt_for(KEY, scope="read agent:call"), authenticator).identity == "alice"
    assert _auth(jwt_for(KEY, scp=["agent:call"]), authenticator).identity == "alice"
    with pytest.raises(PermissionDeniedError) as caught:
        _auth(jwt_for(KEY, scope="read"), authenticator)
    assert caught.value.error == "insufficient_scope"
    assert 'scope="agent:call"' in caught.value.challenges[0]


def test_application_check_may_deny() -> None:
    authenticator = _authenticator(authorize=lambda claims: claims.get("sub") != "alice")
    with pytest.raises(PermissionDeniedError):
        _auth(jwt_for(KEY), authenticator)


def test_card_declaration() -> None:
    assert _authenticator(scopes=["a"]).security_schemes() == {
        "bearer": HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT")}
    assert _authenticator(scopes=["a"]).requirement() == {"bearer": ["a"]}


def test_issuer_and_audience_must_be_stated() -> None:
    with pytest.raises(TypeError):
        JWTVerifier(keys=[KEY])  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        JWTVerifier(issuer="", audience=AUDIENCE, keys=[KEY])
    with pytest.raises(ValueError, match="exactly one"):
        JWTVerifier(issuer=ISSUER, audience=AUDIENCE)


# -- JWKS over HTTP --------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_jwks_is_cached_and_refreshed_on_unknown_kid(serve: Callable[[Any], Served]) -> None:
    first, second = SigningKey.generate("first", "ES256"), SigningKey.generate("second", "RS256")
    keys = JWKSApp([first])
    served = serve(keys)
    clock = Clock()
    verifier = _verifier(keys=None, jwks_url=f"{served.url}/jwks.json",
                         jwks_options={"clock": clock, "ttl": 300, "min_refresh": 30})
    authenticator = JWTBearerAuthenticator(verifier)

    assert _auth(jwt_for(first), authenticator).identity == "alice"
    assert _auth(jwt_for(first), authenticator).identity == "alice"
    assert keys.hits == 1  # cached

    keys.keys = [first, second]  # the issuer rotates in a new key
    clock.now += 5
    with pytest.raises(InvalidCredentialsError, match="unknown key"):
        _auth(jwt_for(second), authenticator)  # too soon after the last fetch
    assert keys.hits == 1
    clock.now += 30
    assert _auth(jwt_for(second), authenticator).identity == "alice"
    assert keys.hits == 2  # refreshed on the unknown kid

    for n in range(20):  # forged kids cannot make us hammer the key server
        clock.now += 1
        with pytest.raises(InvalidCredentialsError, match="unknown key"):
            _auth(jwt_for(SigningKey.generate(f"forged-{n}", "EdDSA")), authenticator)
    assert keys.hits == 2

    keys.keys = [second]  # the old key is revoked ...
    clock.now += 300  # ... and noticed once the cache expires
    with pytest.raises(InvalidCredentialsError, match="unknown key"):
        _auth(jwt_for(first), authenticator)
    assert keys.hits == 3


@pytest.mark.parametrize(("cache_control", "refetch_after"), [
    ("public, max-age=60", 60), ("max-age=5", 30), ("no-store", 30), ("max-age=9000", 300),
    ('max-age="bogus"', 300)])
def test_jwks_cache_control_shortens_the_cache(serve: Callable[[Any], Served], cache_control: str,
                                               refetch_after: float) -> None:
    """A shorter max-age is honoured (not under min_refresh); a longer one does not stretch ttl."""
    key = SigningKey.generate("cc", "EdDSA")
    keys = JWKSApp([key])
    keys.cache_control = cache_control
    clock = Clock()
    verifier = _verifier(keys=None, jwks_url=f"{serve(keys).url}/jwks.json",
                         jwks_options={"clock": clock, "ttl": 300, "min_refresh": 30})
    authenticator = JWTBearerAuthenticator(verifier)
    assert _auth(jwt_for(key), authenticator).identity == "alice"
    clock.now += refetch_after - 1
    assert _auth(jwt_for(key), authenticator).identity == "alice"
    assert keys.hits == 1
    clock.now += 1
    assert _auth(jwt_for(key), authenticator).identity == "alice"
    assert keys.hits == 2


def test_a_failing_jwks_server_keeps_the_keys_held(serve: Callable[[Any], Served]) -> None:
    key = SigningKey.generate("kept", "EdDSA")
    keys = JWKSApp([key])
    served = serve(keys)
    clock = Clock()
    authenticator = JWTBearerAuthenticator(_verifier(
        keys=None, jwks_url=f"{served.url}/jwks.json", jwks_options={"clock": clock}))
    assert _auth(jwt_for(key), authenticator).identity == "alice"
    keys.fail = True
    clock.now += 1000
    assert _auth(jwt_for(key), authenticator).identity == "alice"
    assert keys.hits == 2


def test_unreachable_jwks_refuses_tokens_with_401() -> None:
    authenticator = JWTBearerAuthenticator(_verifier(
        keys=None, jwks_url="http://127.0.0.1:9/jwks.json", jwks_options={"timeout": 1}))
    with pytest.raises(InvalidCredentialsError, match="unknown key"):
        _auth(jwt_for(KEY), authenticator)


def test_a_token_cannot_choose_its_jwks_url(serve: Callable[[Any], Served]) -> None:
    ours, attackers = SigningKey.generate("ours", "ES256"), SigningKey.generate("evil", "ES256")
    trusted, hostile = JWKSApp([ours]), JWKSApp([attackers])
    trusted_url, hostile_url = serve(trusted).url, serve(hostile).url
    authenticator = JWTBearerAuthenticator(_verifier(keys=None,
                                                     jwks_url=f"{trusted_url}/jwks.json"))
    token = jwt_for(attackers, header={"jku": f"{hostile_url}/jwks.json"})
    with pytest.raises(InvalidCredentialsError, match="unknown key"):
        _auth(token, authenticator)
    assert hostile.hits == 0


def test_jwt_over_http(serve: Callable[[Any], Served]) -> None:
    guarded = serve(GuardedApp(AuthPolicy([_authenticator(scopes=["call"])])))
    url = guarded.url + "/rpc"
    good = requests.post(url, headers={"Authorization": f"Bearer {jwt_for(KEY, scope='call')}"},
                         timeout=5)
    assert good.status_code == 200 and good.json()["identity"] == "alice"
    expired = requests.post(url, headers={
        "Authorization": f"Bearer {jwt_for(KEY, scope='call', exp=NOW - 600)}"}, timeout=5)
    assert expired.status_code == 401
    assert expired.headers["WWW-Authenticate"] == (
        'Bearer realm="a2a", error="invalid_token", error_description="the token has expired", '
        'scope="call"')
    assert requests.post(url, headers={"Authorization": f"Bearer {jwt_for(KEY)}"},
                         timeout=5).status_code == 403
    assert requests.post(url, headers={"Authorization": f"Bearer {unsigned_jwt()}"},
                         timeout=5).status_code == 401
