"""The inspector's schema check of the card (``POST <prefix>/card-check``), over real HTTP,
and its findings on the Card tab in a real browser."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from inspector_support import composed, new_agent_app
from support.wsgi_server import Served

from a2a_wsgi import serve
from a2a_wsgi._inspector import inspector_app


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    """The inspector test agent with the page mounted beside it."""
    app = new_agent_app()
    with serve(composed(app), "127.0.0.1:0") as handle:
        yield handle.url
    app.close()


def cards(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    card_url = url + "/.well-known/agent-card.json"
    return (requests.get(card_url, timeout=10).json(),
            requests.get(card_url, headers={"A2A-Version": "1.0"}, timeout=10).json())


def check(url: str, body: bytes) -> requests.Response:
    return requests.post(url + "/inspector/card-check", data=body, timeout=10,
                         headers={"Content-Type": "application/json"})


def test_both_served_variants_are_valid(echo: str) -> None:
    dual, strict = cards(echo)
    for document, schema in ((dual, "0.3"), (strict, "1.0")):
        answer = check(echo, json.dumps(document).encode())
        assert answer.status_code == 200
        assert answer.headers["Content-Type"] == "application/json"
        assert answer.json() == {"schema": schema, "findings": []}


def test_a_broken_member_is_named(echo: str) -> None:
    _, strict = cards(echo)
    strict["skills"][0]["tags"] = "echo"
    del strict["version"]
    answer = check(echo, json.dumps(strict).encode()).json()
    assert answer["schema"] == "1.0"
    assert {(f["path"], f["message"]) for f in answer["findings"]} == {
        ("$", "REQUIRED field 'version' of AgentCard missing"),
        ("$.skills[0].tags", "'echo' is not of type 'array'"),
    }


def test_only_posted_json_of_a_card_size_is_checked(echo: str) -> None:
    assert requests.get(echo + "/inspector/card-check", timeout=10).status_code == 405
    assert check(echo, b"{not json").status_code == 400
    too_big = check(echo, b'{"name": "' + b"x" * (1 << 20) + b'"}')
    assert too_big.status_code == 413 and "at most" in too_big.json()["error"]


@pytest.mark.slow
def test_the_card_tab_shows_the_findings(browser: Any, expect: Any) -> None:
    """A page for an agent whose 1.0 card breaks the schema (a plain WSGI app serves it: an
    A2AApp would refuse to start) lists the finding; its 0.3 card is valid."""
    app = new_agent_app()
    with serve(app, "127.0.0.1:0") as real:
        dual, strict = cards(real.url)
    app.close()
    strict["skills"][0]["tags"] = "echo"

    def broken(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        wants_1_0 = environ.get("HTTP_A2A_VERSION") == "1.0"
        body = json.dumps(strict if wants_1_0 else dual).encode()
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]

    served = Served(composed(broken, inspector_app()))
    try:
        context = browser.new_context()
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(served.url + "/inspector/")
        page.wait_for_selector("body[data-ready=true]")
        result = page.locator("#card-schema")
        expect(result).to_contain_text("Without A2A-Version: valid against the A2A 0.3 schema")
        expect(result).to_contain_text(
            "With A2A-Version: 1.0: 1 finding against the A2A 1.0 schema")
        expect(result.locator("li code")).to_have_text("$.skills[0].tags")
        context.close()
        assert errors == []
    finally:
        served.stop()
