"""Real sockets on 127.0.0.1: every peer is a WSGI app served by werkzeug in a thread."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from client_peers import Peer
from support.wsgi_server import Served


@pytest.fixture(autouse=True)
def _quiet_werkzeug() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[..., Any]], Served]]:
    """serve(app) -> Served; every server is stopped at teardown."""
    servers: list[Served] = []
    releases: list[Callable[[], None]] = []

    def start(app: Callable[..., Any]) -> Served:
        served = Served(app)
        servers.append(served)
        release = getattr(app, "release", None)
        if release is not None:
            releases.append(release)
        return served

    yield start
    for release in releases:
        release()
    for served in servers:
        served.stop()


@pytest.fixture
def peer(serve: Callable[[Callable[..., Any]], Served]) -> Peer:
    """A scripted JSON-RPC agent (see peers.Peer) already listening."""
    p = Peer()
    p.url = serve(p).url
    return p


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str) -> ModuleType:
    """examples/<name>.py (not a package), loaded by path."""
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_calc() -> ModuleType:
    """examples/calc.py, loaded by path."""
    return load_example("calc")


@contextmanager
def _serving(app: Any) -> Iterator[str]:
    """``app`` (an A2AApp) over HTTP via a2a_wsgi.serve(); its URL; stopped and closed after."""
    from a2a_wsgi import serve as serve_app

    handle = serve_app(app)
    try:
        yield handle.url
    finally:
        handle.stop()
        app.close()


@pytest.fixture(scope="module")
def calc_url() -> Iterator[str]:
    """The seed's Calc Agent on the real A2AApp."""
    from a2a_wsgi import A2AApp

    with _serving(A2AApp(load_calc().CalcAgent())) as url:
        yield url


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    """examples/echo.py's app (push on)."""
    with _serving(load_example("echo").app) as url:
        yield url


@pytest.fixture(scope="module")
def echo_0_3_url() -> Iterator[str]:
    """The same Echo Agent restricted to A2A 0.3 (its card offers only 0.3)."""
    from a2a_wsgi import A2AApp
    from a2a_wsgi.settings import ProtocolSettings

    app = A2AApp(load_example("echo").EchoAgent(), push=True,
                 protocol=ProtocolSettings(versions=("0.3",)))
    with _serving(app) as url:
        yield url
