"""The webhook URL policy: hostile URLs are refused, at config time and at delivery."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core.errors import InvalidParamsError
from a2a_core.models import AuthenticationInfo, PushNotificationConfig, TaskPushNotificationConfig
from a2a_wsgi.push import PushSettings, UnsafeURLError, UrlPolicy, address_problem
from a2a_wsgi.push._ssrf import UnresolvableHostError, system_resolver

#: Names we control: what a hostile DNS zone could answer.
ZONE = {
    "public.example": ["93.184.216.34"],
    "v6.example": ["2606:2800:220:1:248:1893:25c8:1946"],
    "meta.example": ["169.254.169.254"],
    "private.example": ["10.1.2.3"],
    "mixed.example": ["93.184.216.34", "192.168.1.1"],
    "mapped.example": ["::ffff:127.0.0.1"],
    "nat64.example": ["64:ff9b::a9fe:a9fe"],
    "loop.example": ["127.0.0.1"],
}


def zone_resolver(host: str, port: int) -> list[str]:
    if host.rstrip(".") not in ZONE:
        raise OSError("NXDOMAIN")
    return ZONE[host.rstrip(".")]


POLICY = UrlPolicy.create(resolver=zone_resolver)


def config_for(url: str, config_id: str = "c") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id="t", push_notification_config=PushNotificationConfig(url=url, id=config_id))

HOSTILE = [
    # (url, words the reason must contain)
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://[fd00:ec2::254]/", "metadata"),
    ("http://168.63.129.16/", "metadata"),  # Azure wire server: a "global" address
    ("http://127.0.0.1:8080/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://10.0.0.1/", "private"),
    ("http://172.16.5.4/", "private"),
    ("http://192.168.0.10/", "private"),
    ("http://100.64.0.1/", "CGNAT"),
    ("http://169.254.1.1/", "link-local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://224.0.0.1/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://240.0.0.1/", "reserved"),
    ("http://[fec0::1]/", "site-local"),
    ("http://[fc00::1]/", "private"),
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),
    ("http://[::ffff:169.254.169.254]/", "metadata"),
    ("http://[64:ff9b::a9fe:a9fe]/", "NAT64"),
    ("http://[64:ff9b::7f00:1]/", "loopback"),
    ("http://[64:ff9b:1::1]/", "NAT64"),
    ("http://[2002:a9fe:a9fe::1]/", "6to4"),
    ("http://[2002:c0a8:0101::1]/", "private"),
    ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo"),
    ("http://2130706433/", "non-standard"),
    ("http://0x7f.1/", "non-standard"),
    ("http://0177.0.0.1/", "non-standard"),
    ("http://127.1/", "non-standard"),
    ("http://[fe80::1%25eth0]/", "zone"),
    ("file:///etc/passwd", "scheme"),
    ("gopher://public.example/", "scheme"),
    ("ftp://public.example/", "scheme"),
    ("http://user:pass@public.example/", "credentials"),
    ("http://public.example@169.254.169.254/", "credentials"),
    ("http://public.example/\r\nX-Injected: 1", "control"),
    ("http:///nohost", "no host"),
    ("http://public.example:0/", "port"),
    ("http://public.example:99999/", "port"),
    ("http://exämple.com/", "host name"),
    ("http://meta.example/", "meta.example resolves to 169.254.169.254"),
    ("http://private.example/", "private"),
    ("http://mixed.example/", "192.168.1.1"),
    ("http://mapped.example/", "loopback"),
    ("http://nat64.example/", "metadata"),
    ("http://loop.example./", "loopback"),
]


@pytest.mark.parametrize(("url", "reason"), HOSTILE)
def test_hostile_urls_are_refused(url: str, reason: str) -> None:
    with pytest.raises(UnsafeURLError) as info:
        POLICY.check(url)
    assert reason.lower() in info.value.reason.lower()


@pytest.mark.parametrize(("url", "reason"), HOSTILE)
def test_hostile_urls_are_a_clear_invalid_params_at_config_time(url: str, reason: str) -> None:
    settings = PushSettings(policy=POLICY)
    config = config_for(url)
    with pytest.raises(InvalidParamsError) as info:
        settings.prepare(config, "1.0")
    assert info.value.code == -32602
    violation = info.value.field_violations["params.url"]
    assert reason.lower() in violation.lower() and "refused" in violation


def test_localhost_by_the_system_resolver_is_refused() -> None:
    policy = UrlPolicy()
    assert system_resolver("localhost", 80)  # the machine resolves it...
    with pytest.raises(UnsafeURLError, match="loopback"):
        policy.check("http://localhost:8888/webhook")  # ...to loopback, which is refused


@pytest.mark.parametrize("url", [
    "https://public.example/hook",
    "http://public.example:8443/a/b?c=d",
    "https://v6.example/",
    "http://93.184.216.34/",
    "http://[2606:4700::1111]/",
    "http://[64:ff9b::808:808]/",  # NAT64 of a public address
    "http://[2002:808:808::1]/",  # 6to4 of a public address
])
def test_public_urls_pass_and_carry_the_checked_addresses(url: str) -> None:
    target = POLICY.check(url)
    assert target.addresses
    for address in target.addresses:
        assert address_problem(ipaddress.ip_address(address)) is None


def test_target_keeps_the_name_for_host_header_and_path() -> None:
    target = POLICY.check("http://PUBLIC.example:8080/x/y?z=1#frag")
    assert (target.host, target.port, target.path) == ("public.example", 8080, "/x/y?z=1")
    assert target.host_header == "public.example:8080"
    assert target.addresses == ("93.184.216.34",)
    assert POLICY.check("https://[2606:4700::1111]/").host_header == "[2606:4700::1111]"


def test_allow_networks_permits_allowing_loopback() -> None:
    policy = UrlPolicy.allowing_loopback(resolver=zone_resolver)
    assert policy.check("http://127.0.0.1:9/").addresses == ("127.0.0.1",)
    assert policy.check("http://loop.example/").addresses == ("127.0.0.1",)
    for url in ("http://10.0.0.1/", "http://169.254.169.254/", "http://meta.example/"):
        with pytest.raises(UnsafeURLError):
            policy.check(url)


def test_allow_hosts_permits_a_named_internal_host_but_never_metadata() -> None:
    policy = UrlPolicy.create(allow_hosts=["Private.Example"], resolver=zone_resolver)
    assert policy.check("http://private.example/").addresses == ("10.1.2.3",)
    with pytest.raises(UnsafeURLError):
        policy.check("http://10.1.2.3/")  # the address itself is not allow-listed
    meta = UrlPolicy.create(allow_hosts=["meta.example"], resolver=zone_resolver)
    with pytest.raises(UnsafeURLError, match="metadata"):
        meta.check("http://meta.example/")


def test_https_only_and_port_allow_list() -> None:
    policy = UrlPolicy.create(https_only=True, ports=[443], resolver=zone_resolver)
    assert policy.check("https://public.example/").port == 443
    with pytest.raises(UnsafeURLError, match="https"):
        policy.check("http://public.example/")
    with pytest.raises(UnsafeURLError, match="port 8443"):
        policy.check("https://public.example:8443/")


def test_unresolvable_host_is_its_own_error() -> None:
    with pytest.raises(UnresolvableHostError):
        POLICY.check("https://nowhere.example/")


def test_config_time_accepts_an_unresolvable_host_and_stamps_the_dialect() -> None:
    """DNS being down is no SSRF risk; delivery checks again."""
    settings = PushSettings(policy=POLICY)
    config = config_for("https://nowhere.example/")
    assert settings.prepare(config, "0.3").protocol_version == "0.3"


@pytest.mark.parametrize(("push", "field"), [
    (PushNotificationConfig(url="https://public.example/", token="a\r\nX-Evil: 1"), "token"),
    (PushNotificationConfig(url="https://public.example/", id="x\ny"), "id"),
    (PushNotificationConfig(url="https://public.example/", authentication=AuthenticationInfo(
        schemes=["Bearer"], credentials="abc\r\nX-Evil: 1")), "credentials"),
    (PushNotificationConfig(url="https://public.example/", authentication=AuthenticationInfo(
        schemes=["Bearer"], credentials="")), "credentials"),
    (PushNotificationConfig(url="https://public.example/", authentication=AuthenticationInfo(
        schemes=["Bearer"])), "credentials"),
    (PushNotificationConfig(url="https://public.example/", authentication=AuthenticationInfo(
        schemes=["Bear er"], credentials="x")), "scheme"),
    (PushNotificationConfig(url="https://public.example/", authentication=AuthenticationInfo(
        schemes=[], credentials="x")), "scheme"),
])
def test_header_bound_fields_are_checked(push: PushNotificationConfig, field: str) -> None:
    settings = PushSettings(policy=POLICY)
    with pytest.raises(InvalidParamsError, match=field):
        settings.prepare(TaskPushNotificationConfig(task_id="t", push_notification_config=push),
                         "1.0")


def test_per_task_cap_counts_replacements_once() -> None:
    settings = PushSettings(policy=POLICY, max_configs_per_task=2)
    existing = [config_for("https://public.example/", i) for i in ("a", "b")]
    again = config_for("https://public.example/x", "a")
    assert settings.prepare(again, "1.0", existing).push_notification_config.id == "a"
    third = config_for("https://public.example/x", "c")
    with pytest.raises(InvalidParamsError, match="at most 2"):
        settings.prepare(third, "1.0", existing)


# -- properties: an IPv6 wrapping never changes the verdict on an IPv4 address ---------------

ipv4 = st.integers(min_value=0, max_value=2**32 - 1).map(ipaddress.IPv4Address)


@given(ipv4)
def test_wrapped_ipv4_gets_the_verdict_of_the_plain_address(v4: ipaddress.IPv4Address) -> None:
    plain = address_problem(v4) is None
    wrappers = [
        ipaddress.IPv6Address(f"::ffff:{v4}"),
        ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(v4)),
        ipaddress.IPv6Address((0x2002 << 112) | (int(v4) << 80) | 1),
    ]
    for wrapped in wrappers:
        assert (address_problem(wrapped) is None) == plain, wrapped


@given(ipv4)
def test_a_refused_address_is_refused_in_every_spelling_of_the_url(
        v4: ipaddress.IPv4Address) -> None:
    allowed = address_problem(v4) is None
    for host in (str(v4), f"[::ffff:{v4}]"):
        try:
            POLICY.check(f"http://{host}/")
            passed = True
        except UnsafeURLError:
            passed = False
        assert passed == allowed, host
