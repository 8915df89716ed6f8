"""``a2a card URL --check`` and ``a2a --version``, over real HTTP.

The echo example's card passes; a card with a broken member (served by a plain WSGI app,
since an A2AApp refuses to start with one) fails, naming the member's JSON path.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.wsgi_server import Served
from werkzeug.wrappers import Request, Response

import a2a_core
from a2a_client.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    """examples/echo.py's app, served as ``python examples/echo.py`` serves it."""
    from a2a_wsgi import serve

    spec = importlib.util.spec_from_file_location("echo_example", EXAMPLES / "echo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handle = serve(module.app, "127.0.0.1:0")
    yield handle.url
    handle.stop()
    module.app.close()


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def card_app(default: dict[str, Any], strict: dict[str, Any] | None = None
             ) -> Callable[..., Any]:
    """Serves ``default`` at the well-known path, ``strict`` to ``A2A-Version: 1.0``."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = Request(environ)
        if request.path != "/.well-known/agent-card.json":
            return Response("no", status=404)(environ, start_response)
        wants_1_0 = request.headers.get("A2A-Version") == "1.0" and strict is not None
        body = json.dumps(strict if wants_1_0 else default)
        return Response(body, content_type="application/json")(environ, start_response)

    return app


def served_cards(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The echo example's two variants, as it serves them."""
    import requests

    card_url = url + "/.well-known/agent-card.json"
    dual = requests.get(card_url, timeout=10).json()
    strict = requests.get(card_url, headers={"A2A-Version": "1.0"}, timeout=10).json()
    return dual, strict


def test_the_echo_example_passes_both_variants(echo_url: str, capsys: Any) -> None:
    code, out, err = run(capsys, "card", echo_url, "--check")
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0].endswith("agent-card.json: valid against the A2A 0.3 schema")
    assert lines[1].endswith("(asked with A2A-Version: 1.0): valid against the A2A 1.0 schema")
    code, out, _ = run(capsys, "card", echo_url, "--check", "--json")
    report = json.loads(out)
    assert code == 0 and report["valid"] is True
    assert [(c["schema"], c["findings"]) for c in report["cards"]] == [("0.3", []), ("1.0", [])]


def test_a_broken_strict_card_fails_naming_the_member(
        echo_url: str, serve: Callable[..., Served], capsys: Any) -> None:
    dual, strict = served_cards(echo_url)
    strict["skills"][0]["tags"] = "echo"  # a string where the schema wants a list
    url = serve(card_app(dual, strict)).url
    code, out, _ = run(capsys, "card", url, "--check")
    assert code == 7  # EXIT_PROTOCOL: the agent's answer is not valid A2A
    assert "valid against the A2A 0.3 schema" in out.splitlines()[0]
    assert "1 finding(s) against the A2A 1.0 schema" in out
    assert "  $.skills[0].tags: 'echo' is not of type 'array'" in out.splitlines()


def test_a_broken_0_3_card_lists_every_finding(
        echo_url: str, serve: Callable[..., Served], capsys: Any) -> None:
    dual, _ = served_cards(echo_url)
    del dual["name"]
    dual["capabilities"]["streaming"] = "yes"
    url = serve(card_app(dual)).url
    code, out, _ = run(capsys, "card", url, "--check", "--json")
    report = json.loads(out)
    assert code == 7 and report["valid"] is False
    (only,) = report["cards"]  # it does not decode, so no 1.0 variant is asked for
    assert only["schema"] == "0.3"
    assert {(f["path"], f["message"]) for f in only["findings"]} == {
        ("$", "'name' is a required property"),
        ("$.capabilities.streaming", "'yes' is not of type 'boolean'"),
    }


def test_version_prints_the_package_version() -> None:
    done = subprocess.run([sys.executable, "-m", "a2a_client.cli", "--version"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"a2a {a2a_core.__version__}\n"
