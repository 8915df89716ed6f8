"""Mutual TLS behind a TLS-terminating proxy: the client certificate arrives in a header.

The proxy (nginx ``$ssl_client_escaped_cert``, HAProxy, Traefik, an ingress)
verified the chain and forwards the client's certificate, PEM (URL-escaped or
not) or base64 DER, in ``header``. That header is only as trustworthy as the
proxy: it is accepted from peers in ``trusted_proxies`` (addresses or
networks; ``None`` means any peer, for when the proxy is the only way in and
strips the header from client requests), and refused with 401 from anyone
else, since a client that sends it itself is forging a certificate.

The certificate must be within its validity period. The identity is given by
``fingerprints`` (SHA-256 of the DER, hex -> identity), by ``verify(cert)``
(a :class:`cryptography.x509.Certificate`), or else is the subject's RFC 4514
name. ``cryptography`` is the ``signing`` extra.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any
from urllib.parse import unquote

from a2a_core.auth import Principal
from a2a_core.models import MutualTLSSecurityScheme, SecurityScheme

from ._base import DEFAULT_MAX_CREDENTIAL_BYTES, Authenticator, AuthRequest, VerifyResult

__all__ = ["MutualTLSAuthenticator", "DEFAULT_CERT_HEADER"]

#: The header nginx setups most often use for ``$ssl_client_escaped_cert``.
DEFAULT_CERT_HEADER = "X-Client-Cert"
_BEGIN, _END = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"


class MutualTLSAuthenticator(Authenticator):
    """A client certificate forwarded by a trusted proxy; card scheme ``mutualTLS``."""

    challenge_scheme = "MutualTLS"

    def __init__(self, *, trusted_proxies: Sequence[str] | None,
                 header: str = DEFAULT_CERT_HEADER,
                 fingerprints: Mapping[str, Principal | str] | None = None,
                 verify: Callable[[Any], VerifyResult] | None = None,
                 verified_header: str | None = None, verified_value: str = "SUCCESS",
                 clock: Callable[[], float] = time.time, scheme_name: str = "mtls",
                 realm: str = "a2a", description: str | None = None,
                 max_bytes: int = 4 * DEFAULT_MAX_CREDENTIAL_BYTES) -> None:
        if fingerprints is not None and verify is not None:
            raise ValueError("give fingerprints= or verify=, not both")
        super().__init__(scheme_name=scheme_name, realm=realm, description=description)
        self.header = header
        self.trusted = None if trusted_proxies is None else \
            [ipaddress.ip_network(p, strict=False) for p in trusted_proxies]
        self.fingerprints = {k.lower().replace(":", ""): v for k, v in (fingerprints or {}).items()}
        self._pinned = fingerprints is not None
        self._verify = verify
        self.verified_header = verified_header
        self.verified_value = verified_value
        self._clock = clock
        self.max_bytes = max_bytes

    def __repr__(self) -> str:
        return f"MutualTLSAuthenticator(header={self.header!r}, scheme_name={self.scheme_name!r})"

    def _from_trusted_peer(self, remote_addr: str | None) -> bool:
        if self.trusted is None:
            return True
        try:
            peer = ipaddress.ip_address(remote_addr or "")
        except ValueError:
            return False
        return any(peer in network for network in self.trusted)

    def authenticate(self, request: AuthRequest) -> Principal | None:
        value = request.headers.get(self.header)
        if value is None:
            return None
        if not self._from_trusted_peer(request.remote_addr):
            raise self.invalid("client certificate header from an untrusted peer")
        if len(value) > self.max_bytes:
            raise self.invalid("client certificate header too large", "invalid_request")
        if self.verified_header is not None and \
                request.headers.get(self.verified_header) != self.verified_value:
            raise self.invalid("the proxy did not verify the client certificate")
        cert, der = self._certificate(value)
        self._check_validity(cert)
        if self._pinned:
            fingerprint = hashlib.sha256(der).hexdigest()
            return self.principal_from(self.fingerprints.get(fingerprint), None)
        if self._verify is not None:
            return self._verified(cert)
        return Principal(identity=cert.subject.rfc4514_string(),
                         claims={"fingerprint": hashlib.sha256(der).hexdigest()})

    def _verified(self, cert: Any) -> Principal:
        verify = self._verify
        assert verify is not None
        return self.call_verifier(lambda _: verify(cert), "certificate")

    def _certificate(self, value: str) -> tuple[Any, bytes]:
        from cryptography import x509

        text = unquote(value.strip())
        if _BEGIN in text:
            text = text.split(_BEGIN, 1)[1].split(_END, 1)[0]
        try:
            der = base64.b64decode("".join(text.split()), validate=True)
            return x509.load_der_x509_certificate(der), der
        except (binascii.Error, ValueError):
            raise self.invalid("malformed client certificate", "invalid_request") from None

    def _check_validity(self, cert: Any) -> None:
        now = datetime.fromtimestamp(self._clock(), timezone.utc)
        if now < cert.not_valid_before_utc:
            raise self.invalid("the client certificate is not valid yet")
        if now > cert.not_valid_after_utc:
            raise self.invalid("the client certificate has expired")

    def security_scheme(self) -> SecurityScheme:
        return MutualTLSSecurityScheme(description=self.description)
