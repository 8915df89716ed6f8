"""The inspector page as served: its files, its headers, who may open it (no browser).

The page runs under ``Content-Security-Policy: default-src 'self'``, so the
files themselves must hold no inline script or style and name nothing on
another origin; these tests read them to make sure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from importlib.resources import files
from typing import Any

import pytest
import requests
from inspector_support import composed, new_agent_app
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.test import Client

from a2a_inspector import ASSET_TYPES, assets
from a2a_wsgi import put_identity, serve
from a2a_wsgi._inspector import inspector_app, inspector_response, is_loopback

STATIC = files("a2a_inspector")


def _static_names() -> set[str]:
    return {entry.name for entry in STATIC.iterdir()
            if entry.is_file() and not entry.name.endswith((".py", ".pyc", "py.typed"))}


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    app = new_agent_app()
    with serve(composed(app)) as handle:
        yield handle.url
    app.close()


# -- the files ---------------------------------------------------------------------------


def test_every_file_of_the_page_is_served_and_nothing_else() -> None:
    assert _static_names() == set(ASSET_TYPES)
    assert all(asset.body for asset in assets().values())


class _Markup(HTMLParser):
    """Collects what a strict CSP would refuse in the page's HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.in_script = False
        self.scripts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        for name, value in attrs:
            if name.startswith("on") or name == "style":
                self.problems.append(f"<{tag} {name}=...>")
            if name in ("src", "href") and value and re.match(r"^(https?:)?//", value):
                self.problems.append(f"<{tag} {name}={value}> is on another origin")
        if tag == "style":
            self.problems.append("<style> element")
        if tag == "script":
            self.in_script = True
            if not named.get("src"):
                self.problems.append("<script> without src")
            else:
                self.scripts.append(str(named["src"]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and data.strip():
            self.problems.append("inline script text")


def test_the_html_has_no_inline_script_style_or_foreign_url() -> None:
    parser = _Markup()
    parser.feed(assets()["index.html"].body.decode())
    assert parser.problems == []
    assert parser.scripts == ["app.js"]


def test_scripts_and_styles_name_no_other_origin_and_import_only_page_files() -> None:
    for name, asset in assets().items():
        text = asset.body.decode()
        if name.endswith(".css"):
            assert "@import" not in text and "url(" not in text, name
        if name.endswith(".js"):
            imports = re.findall(r'^import .* from "([^"]+)";', text, re.MULTILINE)
            for target in imports:
                assert target.startswith("./") and target[2:] in ASSET_TYPES, (name, target)
            assert "innerHTML" not in text and "eval(" not in text, name
            assert not re.search(r"""["'`]https?://""", text), name


# -- serving -----------------------------------------------------------------------------


def test_the_page_and_its_files_carry_a_strict_csp(served: str) -> None:
    for name, asset in assets().items():
        response = requests.get(f"{served}/inspector/{name}", timeout=5)
        assert response.status_code == 200, name
        assert response.headers["Content-Type"] == asset.content_type
        assert response.content == asset.body
        csp = response.headers["Content-Security-Policy"]
        assert csp.startswith("default-src 'self'; script-src 'self'; style-src 'self';")
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    page = requests.get(f"{served}/inspector/", timeout=5)
    assert page.content == assets()["index.html"].body


def test_the_bare_prefix_redirects_below_it_and_files_revalidate(served: str) -> None:
    response = requests.get(f"{served}/inspector", allow_redirects=False, timeout=5)
    assert response.status_code == 308
    assert response.headers["Location"] == "/inspector/"
    etag = requests.get(f"{served}/inspector/app.js", timeout=5).headers["ETag"]
    again = requests.get(f"{served}/inspector/app.js", headers={"If-None-Match": etag}, timeout=5)
    assert again.status_code == 304 and again.content == b""
    assert requests.get(f"{served}/inspector/nope.js", timeout=5).status_code == 404
    assert requests.post(f"{served}/inspector/", timeout=5).status_code == 405


def test_config_says_the_agent_is_the_mount_the_page_is_under(served: str) -> None:
    config = requests.get(f"{served}/inspector/config.json", timeout=5).json()
    assert config == {"agentUrl": None, "cardUrl": None, "proxy": None}


def test_an_agent_on_another_origin_is_added_to_connect_src() -> None:
    client = Client(inspector_app("https://agents.example.com/echo/"))
    response = client.get("/inspector/config.json")
    assert json.loads(response.data)["agentUrl"] == "https://agents.example.com/echo/"
    assert "connect-src 'self' https://agents.example.com;" in response.headers[
        "Content-Security-Policy"]


def test_mounted_below_a_prefix_the_redirect_keeps_the_mount() -> None:
    site = DispatcherMiddleware(_not_found, {"/a2a": inspector_app()})
    response = Client(site).get("/a2a/inspector")
    assert response.status_code == 308
    assert response.headers["Location"] == "/a2a/inspector/"


def _not_found(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Length", "0")])
    return [b""]


# -- who may open it ---------------------------------------------------------------------


def _environ(path: str = "/inspector/", remote: str = "127.0.0.1", host: str = "127.0.0.1:8000",
             **extra: str) -> dict[str, Any]:
    return {"REQUEST_METHOD": "GET", "PATH_INFO": path, "SCRIPT_NAME": "", "REMOTE_ADDR": remote,
            "HTTP_HOST": host, "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000",
            "wsgi.url_scheme": "http", **extra}


def _answer(environ: dict[str, Any]) -> tuple[str, bytes] | None:
    seen: list[str] = []
    body = inspector_response(environ, lambda status, headers: seen.append(status))
    return None if body is None else (seen[0], b"".join(body))


def test_other_paths_are_left_to_the_app() -> None:
    assert _answer(_environ("/")) is None
    assert _answer(_environ("/inspectorx")) is None
    assert _answer(_environ("/.well-known/agent-card.json")) is None


def test_a_local_visitor_gets_the_page() -> None:
    answer = _answer(_environ())
    assert answer is not None and answer[0] == "200 OK" and b"A2A Inspector" in answer[1]
    assert _answer(_environ(remote="::1", host="[::1]:8000"))[0] == "200 OK"  # type: ignore[index]
    assert _answer(_environ(host="localhost:8000"))[0] == "200 OK"  # type: ignore[index]


@pytest.mark.parametrize("environ", [
    _environ(remote="10.1.2.3"),
    _environ(remote="203.0.113.7", host="localhost:8000"),
    _environ(HTTP_X_FORWARDED_FOR="203.0.113.7"),  # a proxy on this host relays a visitor
    _environ(HTTP_FORWARDED="for=203.0.113.7"),
    _environ(host="attacker.example:8000"),  # a rebound DNS name
    _environ(remote="not an address"),
], ids=["remote", "remote-with-local-host", "x-forwarded-for", "forwarded", "rebound-host",
        "garbage-address"])
def test_anyone_else_is_refused(environ: dict[str, Any]) -> None:
    answer = _answer(environ)
    assert answer is not None and answer[0] == "403 Forbidden"
    assert b"put_identity" in answer[1]


def test_an_authenticated_remote_caller_gets_the_page() -> None:
    environ = _environ(remote="203.0.113.7", host="agents.example.com")
    put_identity(environ, "alice")
    answer = _answer(environ)
    assert answer is not None and answer[0] == "200 OK"


def test_loopback_is_the_peer_address_and_the_host_together() -> None:
    assert is_loopback(_environ(remote="127.0.0.5", host="127.0.0.1"))
    assert is_loopback(_environ(remote="::ffff:127.0.0.1", host="app.localhost:5000"))
    assert not is_loopback(_environ(remote="::ffff:10.0.0.1"))
    assert not is_loopback(_environ(host="127.0.0.1.nip.io"))
    assert not is_loopback({"REMOTE_ADDR": "127.0.0.1"})
