"""HTTP Bearer (callback) and Basic: good, missing, malformed, wrong, oversized; over HTTP too."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
import requests
from auth_support import GuardedApp, request_with
from support.wsgi_server import Served

from a2a_core.auth import Principal
from a2a_core.models import HTTPAuthSecurityScheme
from a2a_wsgi.auth import (
    AuthPolicy,
    BasicAuthenticator,
    BearerAuthenticator,
    InvalidCredentialsError,
    PermissionDeniedError,
)

TOKENS = {"tok-alice": "alice", "tok-bob": Principal(identity="bob", tenant="acme")}


def check_token(token: str) -> Principal | str | None:
    if token == "tok-banned":
        raise PermissionDeniedError("banned")
    return TOKENS.get(token)


def check_password(user: str, password: str) -> bool:
    return (user, password) == ("alice", "s3cret: with colon")


bearer = BearerAuthenticator(check_token, bearer_format="opaque")
basic = BasicAuthenticator(check_password)


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_bearer_good() -> None:
    assert bearer.authenticate(request_with({"Authorization": "Bearer tok-alice"})) == \
        Principal(identity="alice")
    assert bearer.authenticate(request_with({"authorization": "bearer   tok-bob"})) == \
        Principal(identity="bob", tenant="acme")


def test_bearer_missing_or_other_scheme_is_not_ours() -> None:
    assert bearer.authenticate(request_with()) is None
    assert bearer.authenticate(request_with({"Authorization": _basic("a", "b")})) is None


@pytest.mark.parametrize("value", ["Bearer", "Bearer ", "Bearer tok alice", "Bearer tök"])
def test_bearer_malformed(value: str) -> None:
    with pytest.raises(InvalidCredentialsError) as caught:
        bearer.authenticate(request_with({"Authorization": value}))
    assert caught.value.error == "invalid_request"
    assert caught.value.challenges[0].startswith('Bearer realm="a2a", error="invalid_request"')


def test_bearer_wrong_token() -> None:
    with pytest.raises(InvalidCredentialsError) as caught:
        bearer.authenticate(request_with({"Authorization": "Bearer tok-mallory"}))
    assert (caught.value.http_status, caught.value.error) == (401, "invalid_token")


def test_bearer_callback_may_deny_with_403() -> None:
    with pytest.raises(PermissionDeniedError) as caught:
        bearer.authenticate(request_with({"Authorization": "Bearer tok-banned"}))
    assert caught.value.http_status == 403


def test_a_failing_callback_fails_closed() -> None:
    def broken(token: str) -> str:
        raise RuntimeError(f"database down while checking {token}")

    with pytest.raises(InvalidCredentialsError) as caught:
        BearerAuthenticator(broken).authenticate(
            request_with({"Authorization": "Bearer tok-alice"}))
    assert "tok-alice" not in str(caught.value) and caught.value.__cause__ is None


@pytest.mark.parametrize("authenticator", [bearer, basic], ids=["bearer", "basic"])
def test_oversized_authorization_is_refused_unparsed(authenticator: Any) -> None:
    calls: list[str] = []
    huge = "Bearer " + "a" * 9000
    spy = BearerAuthenticator(lambda t: calls.append(t) or "x") if authenticator is bearer \
        else BasicAuthenticator(lambda u, p: bool(calls.append(u)))
    for subject in (authenticator, spy):
        with pytest.raises(InvalidCredentialsError, match="too large"):
            subject.authenticate(request_with({"Authorization": huge}))
    assert calls == []


def test_two_authorization_headers_are_refused() -> None:
    request = request_with([("Authorization", "Bearer tok-alice"),
                            ("Authorization", "Bearer tok-bob")])
    with pytest.raises(InvalidCredentialsError, match="more than one"):
        bearer.authenticate(request)


def test_basic_good_and_password_with_colon() -> None:
    found = basic.authenticate(request_with({"Authorization": _basic("alice",
                                                                      "s3cret: with colon")}))
    assert found == Principal(identity="alice")


@pytest.mark.parametrize("value", ["Basic !!!", "Basic " + base64.b64encode(b"nocolon").decode(),
                                   "Basic " + base64.b64encode(b"\xff\xfe:x").decode()])
def test_basic_malformed(value: str) -> None:
    with pytest.raises(InvalidCredentialsError, match="malformed"):
        basic.authenticate(request_with({"Authorization": value}))


def test_basic_wrong_password_and_challenge() -> None:
    with pytest.raises(InvalidCredentialsError) as caught:
        basic.authenticate(request_with({"Authorization": _basic("alice", "guess")}))
    assert caught.value.challenges == ('Basic realm="a2a", charset="UTF-8"',)


def test_security_schemes_declared() -> None:
    assert bearer.security_schemes() == {
        "bearer": HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="opaque")}
    assert basic.security_schemes() == {"basic": HTTPAuthSecurityScheme(scheme="Basic")}
    assert bearer.requirement() == {"bearer": []}


def test_over_http(serve: Callable[[Any], Served]) -> None:
    served = serve(GuardedApp(AuthPolicy([bearer, basic])))
    url = served.url + "/"
    ok = requests.get(url, headers={"Authorization": "Bearer tok-bob"}, timeout=5)
    assert ok.status_code == 200 and ok.json() == {"identity": "bob", "tenant": "acme"}
    assert requests.get(url, auth=("alice", "s3cret: with colon"), timeout=5).json()[
        "identity"] == "alice"
    missing = requests.get(url, timeout=5)
    assert missing.status_code == 401
    assert missing.headers["WWW-Authenticate"].startswith('Bearer realm="a2a"')
    assert 'Basic realm="a2a"' in missing.headers["WWW-Authenticate"]
    wrong = requests.get(url, headers={"Authorization": "Bearer nope"}, timeout=5)
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers[
        "WWW-Authenticate"]
    assert wrong.json() == {"error": {"code": 401, "message": "credentials not accepted"}}
    assert requests.get(url, headers={"Authorization": "Bearer tok-banned"},
                        timeout=5).status_code == 403
    huge = requests.get(url, headers={"Authorization": "Bearer " + "a" * 9000}, timeout=5)
    assert huge.status_code == 401 and 'error="invalid_request"' in huge.headers[
        "WWW-Authenticate"]
