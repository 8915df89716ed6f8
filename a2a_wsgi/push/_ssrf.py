"""Which webhook URLs the server may POST to: the SSRF policy.

A caller who registers a push config chooses where *our* server sends
requests. Left unchecked, that is a way into the deployment's own network:
the cloud metadata service, an admin port on loopback, a database on a
private range. :class:`UrlPolicy` refuses any URL whose host resolves to an
address that is not public unicast, and :class:`Target` carries the checked
addresses on to the sender, which connects to exactly those (no second DNS
lookup, so a name that flips to 127.0.0.1 after the check does not help).
"""

# Theory of operation
# -------------------
#
# Rule 1: every address counts. A name with one public and one private A record
# is refused: the connecting code could be made to pick either.
#
# Rule 2: unwrap before judging. IPv6 can carry an IPv4 address (IPv4-mapped
# ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16); Python's ``is_global``
# calls 64:ff9b::a9fe:a9fe (the metadata IP through NAT64) global. We judge the
# embedded IPv4 address instead, and refuse the forms we cannot unwrap
# (Teredo obfuscates its client address; local-use NAT64 is site-defined).
#
# Rule 3: one spelling per address. inet_aton accepts 2130706433, 0x7f.1 and
# 127.1 for 127.0.0.1, while ipaddress does not; such hosts are refused rather
# than normalised, since no honest webhook URL uses them.
#
# Rule 4: the allow-list is explicit. ``allow_networks`` permits address ranges
# (e.g. loopback for tests); ``allow_hosts`` permits named hosts whatever they
# resolve to, except multicast, unspecified and metadata addresses, which are
# never a webhook.

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

__all__ = [
    "IPAddress",
    "IPNetwork",
    "LOOPBACK_NETWORKS",
    "METADATA_ADDRESSES",
    "Resolver",
    "Target",
    "UnresolvableHostError",
    "UnsafeURLError",
    "UrlPolicy",
    "address_problem",
    "system_resolver",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: ``resolver(host, port)`` -> every address the host resolves to (as text).
Resolver = Callable[[str, int], Sequence[str]]

#: Cloud instance-metadata and platform endpoints. Some are "global" to ipaddress
#: (Azure's 168.63.129.16), so they are named here rather than trusted to ranges.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean IMDS
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.123",  # AWS time sync
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::123",
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server (a public address)
        "192.0.0.192",  # Oracle Cloud
    )
)

#: Loopback in both families: what a test or a conformance kit's receiver listens on.
LOOPBACK_NETWORKS = ("127.0.0.0/8", "::1/128")

_SCHEMES = {"http": 80, "https": 443}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_TEREDO = ipaddress.ip_network("2001::/32")
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
_HOSTNAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$")
_MAX_URL = 2048


class UnsafeURLError(ValueError):
    """The URL may not be used as a webhook; ``reason`` says why, in words a caller can act on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnresolvableHostError(UnsafeURLError):
    """The host does not resolve (now): no SSRF risk, but nowhere to deliver either."""


@dataclass(frozen=True, slots=True)
class Target:
    """A checked webhook: where to connect (``addresses``) and what to ask for there."""

    scheme: str
    host: str
    port: int
    #: Path and query, as sent on the request line.
    path: str
    #: The checked addresses, in resolver order; the sender connects to these only.
    addresses: tuple[str, ...]

    @property
    def host_header(self) -> str:
        """``Host`` as the URL spelled it (IPv6 literals bracketed, default port omitted)."""
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if _SCHEMES[self.scheme] == self.port else f"{name}:{self.port}"


def system_resolver(host: str, port: int) -> list[str]:
    """Every A/AAAA address of ``host`` from the system resolver, without scope ids."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0]).split("%", 1)[0]
        if address not in found:
            found.append(address)
    return found


def address_problem(address: IPAddress) -> str | None:
    """Why ``address`` is not a public unicast address, or None when it is one."""
    embedded = _embedded_ipv4(address)
    if isinstance(embedded, str):
        return embedded
    if embedded is not None:
        form, inner_address = embedded
        inner = address_problem(inner_address)
        return None if inner is None else f"{inner} ({inner_address}) in {form} form"
    for test, reason in _CHECKS:
        if test(address):
            return reason
    return None


_CHECKS: tuple[tuple[Callable[[IPAddress], bool], str], ...] = (
    (lambda a: a.is_unspecified, "unspecified address"),
    (lambda a: a.is_loopback, "loopback address"),
    (lambda a: a in METADATA_ADDRESSES, "cloud metadata address"),
    (lambda a: a.is_link_local, "link-local address"),
    (lambda a: a.is_multicast, "multicast address"),
    (lambda a: isinstance(a, ipaddress.IPv4Address) and a in _CGNAT,
     "shared (CGNAT) address"),
    (lambda a: isinstance(a, ipaddress.IPv6Address) and a.is_site_local,
     "site-local address"),
    (lambda a: a.is_reserved, "reserved address"),
    (lambda a: a.is_private, "private address"),
    (lambda a: not a.is_global, "address that is not globally routable"),
)


def _embedded_ipv4(address: IPAddress) -> tuple[str, ipaddress.IPv4Address] | str | None:
    """(form, IPv4 address) an IPv6 address carries; a refusal text for forms we cannot unwrap."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _NAT64_LOCAL:
        return "local-use NAT64 address"
    if address in _SIX_TO_FOUR and address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address in _TEREDO:
        return "Teredo address"
    return None


def _never_allowed(address: IPAddress) -> bool:
    """Addresses no host allow-list can make a webhook (Rule 4)."""
    embedded = _embedded_ipv4(address)
    if isinstance(embedded, tuple):
        address = embedded[1]
    return address.is_multicast or address.is_unspecified or address in METADATA_ADDRESSES


@dataclass(frozen=True, slots=True)
class UrlPolicy:
    """Where webhooks may point. The default allows public http(s) hosts only.

    ``allow_networks`` lets addresses in those ranges through (``"127.0.0.0/8"``
    for a test receiver); ``allow_hosts`` lets named hosts through whatever
    they resolve to. ``ports``, when set, is the only ports allowed.
    ``https_only`` refuses plain http. ``resolver`` is injectable for tests.
    """

    allow_hosts: frozenset[str] = frozenset()
    allow_networks: tuple[IPNetwork, ...] = ()
    ports: frozenset[int] | None = None
    https_only: bool = False
    resolver: Resolver = field(default=system_resolver, compare=False)

    @classmethod
    def create(
        cls,
        *,
        allow_hosts: Iterable[str] = (),
        allow_networks: Iterable[str | IPNetwork] = (),
        ports: Iterable[int] | None = None,
        https_only: bool = False,
        resolver: Resolver | None = None,
    ) -> UrlPolicy:
        """A policy from plain values (host names are compared case-insensitively)."""
        return cls(
            allow_hosts=frozenset(_host_key(h) for h in allow_hosts),
            allow_networks=tuple(ipaddress.ip_network(n, strict=False) for n in allow_networks),
            ports=None if ports is None else frozenset(ports),
            https_only=https_only,
            resolver=resolver or system_resolver,
        )

    @classmethod
    def allowing_loopback(cls, *, resolver: Resolver | None = None) -> UrlPolicy:
        """Public hosts plus this machine's loopback (a local test or conformance receiver)."""
        return cls.create(allow_networks=LOOPBACK_NETWORKS, resolver=resolver)

    def check(self, url: str) -> Target:
        """The checked target for ``url``; :class:`UnsafeURLError` when it may not be used."""
        parts = _split(url)
        scheme = parts.scheme.lower()
        if scheme not in _SCHEMES:
            raise UnsafeURLError(f"scheme {scheme or '(none)'!r} is not allowed; use http or https")
        if self.https_only and scheme != "https":
            raise UnsafeURLError("only https webhooks are allowed")
        host, port = _host_and_port(parts, _SCHEMES[scheme])
        if self.ports is not None and port not in self.ports:
            raise UnsafeURLError(f"port {port} is not allowed")
        addresses = self._checked_addresses(host, port)
        path = parts.path or "/"
        if parts.query:
            path = f"{path}?{parts.query}"
        return Target(scheme=scheme, host=host, port=port, path=path, addresses=addresses)

    def check_address(self, host: str, address: str) -> None:
        """Refuse ``address`` (one that ``host`` resolved to) unless it is allowed."""
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            raise UnsafeURLError(f"{host} resolved to something that is not an address") from None
        if any(ip in net for net in self.allow_networks if net.version == ip.version):
            return
        if _host_key(host) in self.allow_hosts and not _never_allowed(ip):
            return
        problem = address_problem(ip)
        if problem is None:
            return
        if _is_ip_literal(host):
            raise UnsafeURLError(f"{host} is a {problem}")
        raise UnsafeURLError(f"{host} resolves to {address}, a {problem}")

    def _checked_addresses(self, host: str, port: int) -> tuple[str, ...]:
        if _is_ip_literal(host):
            found: Sequence[str] = [host]
        else:
            try:
                found = self.resolver(host, port)
            except (OSError, UnicodeError):
                raise UnresolvableHostError(f"host {host!r} does not resolve") from None
            if not found:
                raise UnresolvableHostError(f"host {host!r} does not resolve")
        for address in found:
            self.check_address(host, address)
        return tuple(found)


def _split(url: str) -> SplitResult:
    """Parse, refusing what no webhook URL needs: control characters, userinfo, huge URLs."""
    if not isinstance(url, str) or not url:
        raise UnsafeURLError("the URL is empty")
    if len(url) > _MAX_URL:
        raise UnsafeURLError(f"the URL is longer than {_MAX_URL} characters")
    if any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in url):
        raise UnsafeURLError("the URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise UnsafeURLError("the URL cannot be parsed") from None
    if "@" in parts.netloc:
        raise UnsafeURLError("credentials in the URL (user@host) are not allowed")
    return parts


def _host_and_port(parts: SplitResult, default_port: int) -> tuple[str, int]:
    host = (parts.hostname or "").lower()
    if not host:
        raise UnsafeURLError("the URL has no host")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port is None:
        port = default_port
    if not 1 <= port <= 65535:
        raise UnsafeURLError("the URL's port is not a number from 1 to 65535")
    if "%" in host:
        raise UnsafeURLError("IPv6 zone ids are not allowed")
    if not _is_ip_literal(host):
        if not host.isascii() or not _HOSTNAME.match(host):
            raise UnsafeURLError(f"{host!r} is not a valid host name (use punycode for IDNs)")
        if _is_legacy_ipv4(host):
            raise UnsafeURLError(f"{host!r} is a non-standard spelling of an IPv4 address")
    return host, port


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_legacy_ipv4(host: str) -> bool:
    """2130706433, 0x7f.1, 0177.0.0.1, 127.1: what inet_aton reads as IPv4 (Rule 3)."""
    try:
        socket.inet_aton(host.rstrip("."))
    except OSError:
        return False
    return True


def _host_key(host: str) -> str:
    return host.strip().lower().rstrip(".")
