"""Helpers for the authentication tests: tokens, certificates and small real HTTP peers."""

from __future__ import annotations

import base64
import datetime as dt
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from a2a_core._http import Headers
from a2a_core.signing import SigningKey, jwks, sign_compact
from a2a_wsgi.auth import AuthError, AuthPolicy, AuthRequest

__all__ = ["GuardedApp", "JWKSApp", "NOW", "b64url_decode", "b64url_encode", "jwt_for",
           "request_with", "self_signed", "unsigned_jwt"]

#: The fixed "now" of the tests (seconds since the epoch).
NOW = 1_800_000_000.0
ISSUER = "https://idp.example"
AUDIENCE = "https://agent.example/a2a"


def b64url_encode(raw: bytes) -> str:
    """Base64url without padding, for tests that build a JWS by hand."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def request_with(headers: Iterable[tuple[str, str]] | Mapping[str, str] = (), *,
                 query: Mapping[str, str] | None = None, cookies: Mapping[str, str] | None = None,
                 remote_addr: str | None = "127.0.0.1") -> AuthRequest:
    return AuthRequest(headers=Headers(headers), query=dict(query or {}),
                       cookies=dict(cookies or {}), remote_addr=remote_addr)


def jwt_for(key: SigningKey, *, header: Mapping[str, Any] | None = None, **claims: Any) -> str:
    """A signed JWT; claims default to a valid token for AUDIENCE from ISSUER at NOW."""
    body: dict[str, Any] = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": NOW - 10,
                            "exp": NOW + 300}
    body.update(claims)
    body = {k: v for k, v in body.items() if v is not None}
    return sign_compact(json.dumps(body).encode(), key, {"typ": "JWT", **(header or {})})


def unsigned_jwt(alg: str = "none", **claims: Any) -> str:
    """An ``alg: none`` token (or any header alg with an empty signature)."""
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": NOW + 300, **claims}
    head = b64url_encode(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    return f"{head}.{b64url_encode(json.dumps(body).encode())}."


class GuardedApp:
    """A WSGI app that authenticates every request with ``policy`` and echoes the identity."""

    def __init__(self, policy: AuthPolicy) -> None:
        self.policy = policy

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        try:
            principal = self.policy.authenticate(AuthRequest.from_environ(environ))
        except AuthError as exc:
            response = exc.response()
            start_response(f"{response.status} Denied", response.headers)
            return [response.body if isinstance(response.body, bytes) else b""]
        body = json.dumps({"identity": principal.identity if principal else None,
                           "tenant": principal.tenant if principal else None}).encode()
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]


class JWKSApp:
    """Serves ``/jwks.json`` from a list of keys the test may rotate; counts the fetches."""

    def __init__(self, keys: list[SigningKey]) -> None:
        self.keys = keys
        self.hits = 0
        self.fail = False
        self._lock = threading.Lock()
        self.discovery: dict[str, Any] | None = None
        #: ``Cache-Control`` of the JWKS answer (None: the header is not sent).
        self.cache_control: str | None = None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ.get("PATH_INFO")
        if path == "/.well-known/openid-configuration" and self.discovery is not None:
            start_response("200 OK", [("Content-Type", "application/json")])
            return [json.dumps(self.discovery).encode()]
        if path != "/jwks.json":
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"no"]
        with self._lock:
            self.hits += 1
        if self.fail:
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"down"]
        cache = [("Cache-Control", self.cache_control)] if self.cache_control else []
        start_response("200 OK", [("Content-Type", "application/jwk-set+json"), *cache])
        return [json.dumps(jwks(self.keys)).encode()]


def self_signed(common_name: str = "client-1", *, not_before: float = NOW - 3600,
                not_after: float = NOW + 86400) -> tuple[Any, bytes]:
    """A self-signed client certificate and its PEM (the proxy did the chain checking)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(dt.datetime.fromtimestamp(not_before, dt.timezone.utc))
            .not_valid_after(dt.datetime.fromtimestamp(not_after, dt.timezone.utc))
            .sign(key, hashes.SHA256()))
    return cert, cert.public_bytes(serialization.Encoding.PEM)
