"""Card discovery and caching: conditional GETs, 304 reuse, max-age, fallbacks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from client_peers import Peer, card_v03
from werkzeug.wrappers import Request, Response

from a2a_client import A2AClient
from a2a_client._cards import card_url_for
from a2a_client._errors import HTTPStatusError
from a2a_core._caching import CardCache
from a2a_core.errors import RemoteProtocolError


def test_card_revalidated_with_if_none_match_and_304_reused(peer: Peer) -> None:
    peer.card_etag = '"v1"'
    with A2AClient(peer.url) as client:
        first = client.get_card()
        again = client.get_card(refresh=True)
    gets = [c for c in peer.calls if c.method == "GET"]
    assert len(gets) == 2
    assert "if-none-match" not in gets[0].headers
    assert gets[1].headers["if-none-match"] == '"v1"'
    assert again == first and again.name == "Calc Agent"


def test_changed_card_replaces_the_cached_one(peer: Peer) -> None:
    peer.card_etag = '"v1"'
    with A2AClient(peer.url) as client:
        client.get_card()
        peer.card_etag = '"v2"'
        peer.card = lambda url: card_v03(url, name="Renamed")
        assert client.get_card(refresh=True).name == "Renamed"


class MaxAgeCard:
    """A card with Cache-Control max-age and Last-Modified; counts GETs."""

    def __init__(self, cache_control: str) -> None:
        self.cache_control = cache_control
        self.url = ""
        self.seen: list[dict[str, str]] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        self.seen.append({k.lower(): v for k, v in request.headers.items()})
        if "If-Modified-Since" in request.headers:
            return Response(status=304)(environ, start_response)
        headers = {
            "Cache-Control": self.cache_control,
            "Last-Modified": "Fri, 02 Jan 2026 10:00:00 GMT",
        }
        body = json.dumps(card_v03(self.url + "/"))
        return Response(body, mimetype="application/json", headers=headers)(environ, start_response)


def test_fresh_card_is_not_refetched_and_revalidates_with_if_modified_since(serve: Any) -> None:
    app = MaxAgeCard("public, max-age=300")
    app.url = serve(app).url
    with A2AClient(app.url) as client:
        client.get_card()
        client.get_card()
        assert len(app.seen) == 1  # fresh: no request at all
        client.get_card(refresh=True)
    assert app.seen[1]["if-modified-since"] == "Fri, 02 Jan 2026 10:00:00 GMT"


def test_card_cache_can_be_shared_between_clients(serve: Any) -> None:
    app = MaxAgeCard("max-age=300")
    app.url = serve(app).url
    cache = CardCache()
    for _ in range(3):
        with A2AClient(app.url, card_cache=cache) as client:
            client.get_card()
    assert len(app.seen) == 1


class MountedAtRoot:
    """Serves the card only at the origin root (a single-agent server)."""

    def __init__(self) -> None:
        self.url = ""
        self.paths: list[str] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ["PATH_INFO"]
        self.paths.append(path)
        if path != "/.well-known/agent-card.json":
            return Response("no", status=404)(environ, start_response)
        body = json.dumps(card_v03(self.url + "/agents/calc"))
        return Response(body, mimetype="application/json")(environ, start_response)


def test_mount_relative_card_falls_back_to_the_origin_root(serve: Any) -> None:
    app = MountedAtRoot()
    app.url = serve(app).url
    with A2AClient(app.url + "/agents/calc") as client:
        assert client.endpoint.url == app.url + "/agents/calc"
    assert app.paths == ["/agents/calc/.well-known/agent-card.json", "/.well-known/agent-card.json"]


def test_explicit_card_url_does_not_fall_back(serve: Any) -> None:
    app = MountedAtRoot()
    app.url = serve(app).url
    with A2AClient(app.url + "/x/card.json") as client, pytest.raises(HTTPStatusError) as caught:
        client.get_card()
    assert caught.value.status_code == 404


def test_invalid_card_is_a_remote_protocol_error(serve: Any) -> None:
    def app(environ: dict[str, Any], start_response: Any) -> Any:
        body = json.dumps({"description": "no name"})
        return Response(body, mimetype="application/json")(environ, start_response)

    with (
        A2AClient(serve(app).url) as client,
        pytest.raises(RemoteProtocolError, match="agent card"),
    ):
        client.get_card()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://h", "http://h/.well-known/agent-card.json"),
        ("http://h/", "http://h/.well-known/agent-card.json"),
        ("http://h/agents/x/", "http://h/agents/x/.well-known/agent-card.json"),
        ("http://h/cards/x.json", "http://h/cards/x.json"),
        ("http://h/.well-known/agent-card.json", "http://h/.well-known/agent-card.json"),
    ],
)
def test_card_url_for(given: str, expected: str) -> None:
    assert card_url_for(given) == expected
