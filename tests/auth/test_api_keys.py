"""API keys in a header, a query parameter or a cookie; checked over HTTP too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests
from auth_support import GuardedApp, request_with
from support.wsgi_server import Served

from a2a_core.auth import Principal
from a2a_core.models import APIKeySecurityScheme
from a2a_wsgi.auth import (
    APIKeyAuthenticator,
    AuthPolicy,
    InvalidCredentialsError,
)

KEYS: dict[str, Principal | str] = {"k-alice-0123456789": "alice",
                                    "k-bob-9876543210": Principal(identity="bob", tenant="t1")}


def _located(location: str, value: str) -> Any:
    if location == "header":
        return request_with({"X-API-Key": value})
    if location == "query":
        return request_with(query={"api_key": value})
    return request_with(cookies={"session_key": value})


NAMES = {"header": "X-API-Key", "query": "api_key", "cookie": "session_key"}


@pytest.fixture(params=["header", "query", "cookie"])
def location(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _authenticator(location: str) -> APIKeyAuthenticator:
    return APIKeyAuthenticator(NAMES[location], location, keys=KEYS)


def test_good(location: str) -> None:
    assert _authenticator(location).authenticate(_located(location, "k-alice-0123456789")) == \
        Principal(identity="alice")
    assert _authenticator(location).authenticate(
        _located(location, "k-bob-9876543210")).tenant == "t1"


def test_missing(location: str) -> None:
    assert _authenticator(location).authenticate(request_with()) is None


@pytest.mark.parametrize("value", ["k-alice-012345678", "K-ALICE-0123456789", "nope"])
def test_wrong_key(location: str, value: str) -> None:
    with pytest.raises(InvalidCredentialsError, match="not accepted") as caught:
        _authenticator(location).authenticate(_located(location, value))
    assert caught.value.challenges[0].startswith('ApiKey realm="a2a", error="invalid_token"')
    assert f'in="{location}", name="{NAMES[location]}"' in caught.value.challenges[0]


@pytest.mark.parametrize("value", ["", "   "])
def test_malformed_key(location: str, value: str) -> None:
    with pytest.raises(InvalidCredentialsError, match="empty"):
        _authenticator(location).authenticate(_located(location, value))


def test_oversized_key(location: str) -> None:
    with pytest.raises(InvalidCredentialsError, match="too large"):
        _authenticator(location).authenticate(_located(location, "k" * 9000))


def test_callback_verification() -> None:
    authenticator = APIKeyAuthenticator("X-API-Key", verify=lambda key: "svc" if key == "ok"
                                        else None)
    assert authenticator.authenticate(request_with({"X-API-Key": "ok"})).identity == "svc"
    with pytest.raises(InvalidCredentialsError):
        authenticator.authenticate(request_with({"X-API-Key": "bad"}))


def test_two_key_headers_are_refused() -> None:
    request = request_with([("X-API-Key", "k-alice-0123456789"), ("X-API-Key", "x")])
    with pytest.raises(InvalidCredentialsError, match="more than one"):
        _authenticator("header").authenticate(request)


def test_declaration_and_repr_hide_the_keys(location: str) -> None:
    authenticator = _authenticator(location)
    assert authenticator.security_schemes() == {
        "apiKey": APIKeySecurityScheme(name=NAMES[location], location=location)}
    assert "k-alice" not in repr(authenticator) and "keys=2" in repr(authenticator)


def test_bad_configuration() -> None:
    with pytest.raises(ValueError, match="location"):
        APIKeyAuthenticator("k", "body", keys=KEYS)
    with pytest.raises(ValueError, match="exactly one"):
        APIKeyAuthenticator("k")


def test_over_http(serve: Callable[[Any], Served]) -> None:
    policy = AuthPolicy([APIKeyAuthenticator("X-API-Key", keys=KEYS, scheme_name="headerKey"),
                         APIKeyAuthenticator("api_key", "query", keys=KEYS,
                                             scheme_name="queryKey"),
                         APIKeyAuthenticator("session_key", "cookie", keys=KEYS,
                                             scheme_name="cookieKey")])
    url = serve(GuardedApp(policy)).url + "/"
    assert requests.get(url, headers={"X-API-Key": "k-alice-0123456789"},
                        timeout=5).json()["identity"] == "alice"
    assert requests.get(url, params={"api_key": "k-bob-9876543210"},
                        timeout=5).json()["identity"] == "bob"
    assert requests.get(url, cookies={"session_key": "k-alice-0123456789"},
                        timeout=5).json()["identity"] == "alice"
    missing = requests.get(url, timeout=5)
    assert missing.status_code == 401 and 'name="X-API-Key"' in missing.headers[
        "WWW-Authenticate"]
    assert requests.get(url, params={"api_key": "wrong"}, timeout=5).status_code == 401
