"""Credentials never reach reprs, exception messages or logs, whatever the outcome."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from auth_support import NOW, jwt_for, request_with, self_signed

from a2a_core.models import OAuthFlows
from a2a_core.signing import SigningKey
from a2a_wsgi.auth import (
    APIKeyAuthenticator,
    AuthError,
    AuthPolicy,
    BasicAuthenticator,
    BearerAuthenticator,
    JWTBearerAuthenticator,
    JWTVerifier,
    MutualTLSAuthenticator,
    OAuth2Authenticator,
)

SECRET = "Sup3rSecretValue-7f3a9c"
KEY = SigningKey.generate("k", "ES256")


def _leaky_verify(*args: Any) -> None:
    raise RuntimeError(f"backend rejected {args!r}")  # a careless callback quoting the secret


CASES: dict[str, tuple[Any, dict[str, str]]] = {
    "bearer-wrong": (BearerAuthenticator(lambda t: None), {"Authorization": f"Bearer {SECRET}"}),
    "bearer-raises": (BearerAuthenticator(_leaky_verify), {"Authorization": f"Bearer {SECRET}"}),
    "bearer-malformed": (BearerAuthenticator(lambda t: None),
                         {"Authorization": f"Bearer {SECRET} {SECRET}"}),
    "bearer-oversized": (BearerAuthenticator(lambda t: None),
                         {"Authorization": f"Bearer {SECRET * 400}"}),
    "basic-wrong": (BasicAuthenticator(lambda u, p: False), {"Authorization": "Basic " +
                    base64.b64encode(f"alice:{SECRET}".encode()).decode()}),
    "basic-raises": (BasicAuthenticator(_leaky_verify), {"Authorization": "Basic " +
                     base64.b64encode(f"alice:{SECRET}".encode()).decode()}),
    "jwt-expired": (JWTBearerAuthenticator(JWTVerifier(
        issuer="https://idp.example", audience="https://agent.example/a2a", keys=[KEY],
        clock=lambda: NOW)), {"Authorization": f"Bearer {jwt_for(KEY, exp=NOW - 999)}"}),
    "oauth-introspect-raises": (OAuth2Authenticator(flows=OAuthFlows(), introspect=_leaky_verify),
                                {"Authorization": f"Bearer {SECRET}"}),
    "apikey-wrong": (APIKeyAuthenticator("X-API-Key", keys={"other": "x"}),
                     {"X-API-Key": SECRET}),
    "apikey-raises": (APIKeyAuthenticator("X-API-Key", verify=_leaky_verify),
                      {"X-API-Key": SECRET}),
    "mtls-untrusted": (MutualTLSAuthenticator(trusted_proxies=["10.9.9.9"]),
                       {"X-Client-Cert": quote(self_signed()[1].decode()) + SECRET}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_no_credential_in_errors_reprs_or_logs(case: str, caplog: pytest.LogCaptureFixture
                                               ) -> None:
    authenticator, headers = CASES[case]
    secret = SECRET if "jwt" not in case else headers["Authorization"].split()[1]
    caplog.set_level(logging.DEBUG)
    policy = AuthPolicy([authenticator])
    request = request_with(headers)
    with pytest.raises(AuthError) as caught:
        policy.authenticate(request)
    error = caught.value
    shown: list[Callable[[], str]] = [
        lambda: str(error), lambda: repr(error), lambda: " ".join(error.challenges),
        lambda: repr(error.response()), lambda: repr(request), lambda: repr(authenticator),
        lambda: repr(policy), lambda: caplog.text,
        lambda: repr(error.__cause__), lambda: repr(error.__context__),
    ]
    for text in shown:
        assert secret not in text()
    assert caplog.records, "a failure is logged"
    with pytest.raises(AuthError) as direct:  # the authenticator's own error, not the policy's
        authenticator.authenticate(request)
    chained = [direct.value.__cause__, direct.value.__context__]
    assert all(secret not in repr(link) for link in chained)
