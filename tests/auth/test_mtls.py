"""Mutual TLS via a trusted proxy's client-certificate header."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
import requests
from auth_support import NOW, GuardedApp, request_with, self_signed
from cryptography.hazmat.primitives.serialization import Encoding
from support.wsgi_server import Served

from a2a_core.auth import Principal
from a2a_core.models import MutualTLSSecurityScheme
from a2a_wsgi.auth import AuthPolicy, InvalidCredentialsError, MutualTLSAuthenticator

CERT, PEM = self_signed("client-1")
DER_SHA256 = hashlib.sha256(CERT.public_bytes(Encoding.DER)).hexdigest()


def _mtls(**options: Any) -> MutualTLSAuthenticator:
    settings: dict[str, Any] = {"trusted_proxies": ["127.0.0.0/8", "10.1.2.3"],
                                "clock": lambda: NOW}
    settings.update(options)
    return MutualTLSAuthenticator(**settings)


def _request(value: str, remote: str = "127.0.0.1", **headers: str) -> Any:
    return request_with({"X-Client-Cert": value, **headers}, remote_addr=remote)


@pytest.mark.parametrize("encoding", ["escaped-pem", "pem", "pem-one-line", "der-base64"])
def test_good_certificate_in_each_proxy_encoding(encoding: str) -> None:
    text = PEM.decode()
    body = "".join(text.strip().splitlines()[1:-1])
    value = {"escaped-pem": quote(text), "pem": text.replace("\n", "\t"),
             "pem-one-line": text.replace("\n", " "), "der-base64": body}[encoding]
    principal = _mtls().authenticate(_request(value))
    assert principal is not None and principal.identity == "CN=client-1"
    assert principal.claims["fingerprint"] == DER_SHA256


def test_missing_header_is_not_ours() -> None:
    assert _mtls().authenticate(request_with()) is None


def test_header_from_an_untrusted_peer_is_a_forgery() -> None:
    with pytest.raises(InvalidCredentialsError, match="untrusted peer"):
        _mtls().authenticate(_request(quote(PEM.decode()), remote="203.0.113.9"))
    with pytest.raises(InvalidCredentialsError, match="untrusted peer"):
        _mtls().authenticate(_request(quote(PEM.decode()), remote=""))
    assert _mtls(trusted_proxies=None).authenticate(
        _request(quote(PEM.decode()), remote="203.0.113.9")) is not None


@pytest.mark.parametrize("value", ["garbage", quote("-----BEGIN CERTIFICATE-----\nAAAA\n"
                                                    "-----END CERTIFICATE-----")])
def test_malformed_certificate(value: str) -> None:
    with pytest.raises(InvalidCredentialsError, match="malformed"):
        _mtls().authenticate(_request(value))


def test_expired_and_not_yet_valid_certificates() -> None:
    _, old = self_signed(not_before=NOW - 7200, not_after=NOW - 3600)
    _, future = self_signed(not_before=NOW + 3600, not_after=NOW + 7200)
    with pytest.raises(InvalidCredentialsError, match="expired"):
        _mtls().authenticate(_request(quote(old.decode())))
    with pytest.raises(InvalidCredentialsError, match="not valid yet"):
        _mtls().authenticate(_request(quote(future.decode())))


def test_pinned_fingerprints_and_wrong_certificate() -> None:
    pinned = _mtls(fingerprints={DER_SHA256.upper(): Principal(identity="svc-a")})
    assert pinned.authenticate(_request(quote(PEM.decode()))) == Principal(identity="svc-a")
    _, other = self_signed("client-1")  # same name, another key: not the pinned certificate
    with pytest.raises(InvalidCredentialsError, match="not accepted"):
        pinned.authenticate(_request(quote(other.decode())))


def test_verify_callback_sees_the_certificate() -> None:
    seen: list[Any] = []

    def verify(cert: Any) -> str | None:
        seen.append(cert)
        return "ok-client" if cert.subject.rfc4514_string() == "CN=client-1" else None

    assert _mtls(verify=verify).authenticate(_request(quote(PEM.decode()))).identity == "ok-client"
    assert seen[0].serial_number == CERT.serial_number
    _, stranger = self_signed("stranger")
    with pytest.raises(InvalidCredentialsError):
        _mtls(verify=verify).authenticate(_request(quote(stranger.decode())))


def test_proxy_verification_header() -> None:
    authenticator = _mtls(verified_header="X-Client-Verify")
    good = _request(quote(PEM.decode()), **{"X-Client-Verify": "SUCCESS"})
    assert authenticator.authenticate(good) is not None
    with pytest.raises(InvalidCredentialsError, match="did not verify"):
        authenticator.authenticate(_request(quote(PEM.decode()),
                                            **{"X-Client-Verify": "FAILED:unknown ca"}))


def test_oversized_header() -> None:
    with pytest.raises(InvalidCredentialsError, match="too large"):
        _mtls().authenticate(_request("A" * 40000))


def test_declaration() -> None:
    assert _mtls().security_schemes() == {"mtls": MutualTLSSecurityScheme()}
    assert _mtls().requirement() == {"mtls": []}


def test_over_http(serve: Callable[[Any], Served]) -> None:
    """werkzeug's test server is the 'proxy' here: the request comes from 127.0.0.1."""
    import time

    url = serve(GuardedApp(AuthPolicy([MutualTLSAuthenticator(
        trusted_proxies=["127.0.0.1"])]))).url + "/"
    _, current = self_signed(not_before=time.time() - 60, not_after=time.time() + 3600)
    ok = requests.get(url, headers={"X-Client-Cert": quote(current.decode())}, timeout=5)
    assert ok.status_code == 200 and ok.json()["identity"] == "CN=client-1"
    missing = requests.get(url, timeout=5)
    assert missing.status_code == 401
    assert missing.headers["WWW-Authenticate"] == 'MutualTLS realm="a2a"'
