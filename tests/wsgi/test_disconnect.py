"""The disconnect probe: a peek that never blocks, whatever mode the server's socket is in."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from a2a_wsgi._disconnect import client_gone_probe


@pytest.fixture()
def connection() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A real TCP connection on loopback: (server side, client side)."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    yield server, client
    server.close()
    client.close()


def _answers_at_once(probe: object) -> bool:
    """Call the probe on a thread; fail if it blocks (a blocking peek would hang a request)."""
    result: list[bool] = []
    worker = threading.Thread(target=lambda: result.append(probe()))  # type: ignore[operator]
    worker.start()
    worker.join(2)
    assert result, "the probe blocked"
    return result[0]


@pytest.mark.parametrize("timeout", [None, 0.0, 30.0])
def test_a_live_client_is_there_in_every_socket_mode(
        connection: tuple[socket.socket, socket.socket], timeout: float | None) -> None:
    server, _client = connection
    server.settimeout(timeout)
    probe = client_gone_probe({"gunicorn.socket": server})
    assert probe is not None and _answers_at_once(probe) is False
    assert server.gettimeout() == timeout  # the server's socket is left as it was


def test_a_pipelined_request_is_not_a_disconnect_and_is_not_consumed(
        connection: tuple[socket.socket, socket.socket]) -> None:
    server, client = connection
    client.sendall(b"GET / HTTP/1.1\r\n")
    probe = client_gone_probe({"werkzeug.socket": server})
    assert probe is not None
    assert _answers_at_once(probe) is False
    assert server.recv(100).startswith(b"GET /")


def test_an_orderly_close_and_a_reset_are_both_gone(
        connection: tuple[socket.socket, socket.socket]) -> None:
    server, client = connection
    probe = client_gone_probe({"gunicorn.socket": server})
    assert probe is not None
    client.close()
    assert _answers_at_once(probe) is True
    assert probe() is True  # once gone, always gone


def test_a_reset_is_gone() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()  # RST
    probe = client_gone_probe({"gunicorn.socket": server})
    assert probe is not None and _answers_at_once(probe) is True
    server.close()
    assert client_gone_probe({"gunicorn.socket": server}) is not None


def test_no_socket_means_unknowable() -> None:
    assert client_gone_probe({}) is None


_GEVENT_PROBE = """
from gevent import monkey; monkey.patch_all()
import socket, threading, time
from a2a_wsgi._disconnect import client_gone_probe
listener = socket.create_server(("127.0.0.1", 0))
client = socket.create_connection(listener.getsockname())
server, _ = listener.accept()
assert type(server).__module__.startswith("gevent"), type(server)
probe = client_gone_probe({"gunicorn.socket": server})
started = time.monotonic()
assert probe() is False
client.close()
time.sleep(0.05)
assert probe() is True
assert time.monotonic() - started < 1, "the probe waited"
print("ok")
"""


def test_the_probe_does_not_wait_on_a_gevent_socket() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _GEVENT_PROBE], capture_output=True,
                          text=True, timeout=30)
    assert done.stdout.strip() == "ok", done.stderr
