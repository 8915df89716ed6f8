"""The watchdog behind the header-block deadline (a2a_client._deadlines), where it applies
(the client's own session, not one the caller lends), and that it holds over TLS too."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
import time
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hostile_server import HostileServer, Request, card_json, slowloris_head

from a2a_client import A2AClient
from a2a_client._deadlines import DeadlineAdapter, Watchdog
from a2a_client._errors import ReadTimeout
from a2a_client._transport import Transport


def test_an_armed_action_runs_and_a_cancelled_one_does_not() -> None:
    watchdog = Watchdog()
    ran, cancelled = threading.Event(), threading.Event()
    handle = watchdog.arm(0.2, cancelled.set)
    watchdog.arm(0.05, ran.set)
    watchdog.cancel(handle)
    assert ran.wait(10)
    later = threading.Event()
    watchdog.arm(0.3, later.set)  # runs after the cancelled one's time
    assert later.wait(10)
    assert not cancelled.is_set()


def test_cancelled_actions_do_not_pile_up() -> None:
    watchdog = Watchdog()
    handles = [watchdog.arm(3600, lambda: None) for _ in range(10_000)]
    for handle in handles:
        watchdog.cancel(handle)
    assert len(watchdog._heap) <= 128


def test_only_the_clients_own_session_gets_the_deadline_adapter() -> None:
    own = Transport()
    assert isinstance(own._session.get_adapter("https://agent.example/"), DeadlineAdapter)
    lent = requests.Session()
    Transport(session=lent)
    assert not isinstance(lent.get_adapter("https://agent.example/"), DeadlineAdapter)
    own.close()
    lent.close()


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_over_tls_a_card_is_read_and_a_trickled_header_block_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert_file, key_file = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert_file))
    server = HostileServer({"good": ("card", _good_card), "slow": ("card", slowloris_head)},
                           tls=context)
    try:
        with A2AClient(f"{server.url}/good", timeout=5) as agent:
            assert agent.get_card().name == "Hostile Agent"
        began = time.monotonic()
        with A2AClient(f"{server.url}/slow", timeout=1) as agent, \
                pytest.raises(ReadTimeout, match="Read timed out"):
            agent.get_card()
        assert time.monotonic() - began < 10  # (the trickle itself never ends)
    finally:
        server.close()


def _good_card(server: HostileServer, conn: socket.socket, req: Request) -> None:
    body = card_json(f"{server.url}/good")
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                 + str(len(body)).encode() + b"\r\n\r\n" + body)
