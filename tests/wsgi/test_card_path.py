"""Every card request takes the one path (the route table, then the card endpoint) and is
answered from the one cache (the endpoint's prepared cards): a repeated GET gets the same
bytes and headers, and never a stale or wrong one (another host, mount, version, signer,
card), whether or not anyone logs it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from support import wsgi_calls

from a2a_core._card_endpoint import CardEndpoint
from a2a_core._http import Headers, HttpRequest
from a2a_core.models import Message
from a2a_core.signing import CardSigner, SigningKey
from a2a_wsgi import A2AApp, Agent, AgentContext, put_base_url, reply
from a2a_wsgi._telemetry import ACCESS_LOGGER

CARD_PATH = "/.well-known/agent-card.json"


class Hello(Agent):
    name = "Hello"
    description = "Says hello"

    def handle_message(self, msg: Message, ctx: AgentContext) -> object:
        return reply("hello")


@pytest.fixture
def app() -> Iterator[A2AApp]:
    served = A2AApp(Hello())
    yield served
    served.close()


def environ(method: str = "GET", **options: Any) -> dict[str, Any]:
    return wsgi_calls.environ(method, CARD_PATH, **options)


def call(app: A2AApp, env: dict[str, Any]) -> tuple[str, dict[str, str], bytes]:
    status, given, data = wsgi_calls.call(app, env)
    headers = [(k, v) for k, v in given if k != "X-Request-Id"]
    assert len(headers) == len(dict(headers))  # no header twice
    return status, dict(headers), data


def url_of(body: bytes) -> str:
    return str(json.loads(body)["supportedInterfaces"][0]["url"])


@pytest.mark.parametrize("headers", [{}, {"a2a_version": "1.0"}, {"a2a_version": "0.3"}])
def test_a_repeated_card_get_is_the_first_answer_again(app: A2AApp,
                                                       headers: dict[str, str]) -> None:
    first = call(app, environ(**headers))
    assert first[0] == "200 OK" and first[1]["Content-Length"] == str(len(first[2]))
    for _ in range(3):
        assert call(app, environ(**headers)) == first
    etag = first[1]["ETag"]
    revalidated = call(app, environ(if_none_match=etag, **headers))
    assert revalidated[0] == "304 Not Modified" and revalidated[2] == b""
    # RFC 9110 §15.4.5: ETag, Cache-Control and Vary again; not the representation's
    # Content-Type, nor Last-Modified beside an ETag; no Content-Length (§8.6: it would have
    # to be the 200's)
    assert revalidated[1] == {k: v for k, v in first[1].items()
                              if k not in ("Content-Type", "Last-Modified", "Content-Length")}
    assert call(app, environ(if_none_match=etag, **headers)) == revalidated


def test_each_variant_and_version_spelling_keeps_its_own_answer(app: A2AApp) -> None:
    dual = call(app, environ())
    strict = call(app, environ(a2a_version="1.0"))
    by_query = call(app, environ(query="A2A-Version=1.0"))
    assert strict[1]["ETag"] != dual[1]["ETag"]
    assert by_query == strict
    # a blank header is no version: the query's counts, as on the JSON-RPC path
    assert call(app, environ(a2a_version=" ", query="A2A-Version=1.0")) == strict
    assert call(app, environ(a2a_version=" ")) == dual
    assert call(app, environ()) == dual
    assert call(app, environ(a2a_version="1.0")) == strict
    # A tag of the other variant is not ours: a 200 with the full card.
    crossed = call(app, environ(if_none_match=dual[1]["ETag"], a2a_version="1.0"))
    assert crossed == strict


def test_other_validators_are_read_as_rfc_9110_says(app: A2AApp) -> None:
    first = call(app, environ())
    etag, modified = first[1]["ETag"], first[1]["Last-Modified"]
    assert call(app, environ(if_none_match=f'"other", W/{etag}'))[0] == "304 Not Modified"
    assert call(app, environ(if_none_match="*"))[0] == "304 Not Modified"
    assert call(app, environ(if_modified_since=modified))[0] == "304 Not Modified"
    assert call(app, environ(if_modified_since="Mon, 01 Jan 1990 00:00:00 GMT")) == first
    # If-None-Match wins over a date that would say "not modified".
    assert call(app, environ(if_none_match='"other"', if_modified_since=modified)) == first


def test_each_host_and_mount_gets_its_own_url(app: A2AApp) -> None:
    assert url_of(call(app, environ())[2]) == "http://127.0.0.1:8000/"
    assert url_of(call(app, environ(host="localhost:9000"))[2]) == "http://localhost:9000/"
    assert url_of(call(app, environ(script="/agents/a"))[2]) == "http://127.0.0.1:8000/agents/a/"
    assert url_of(call(app, environ())[2]) == "http://127.0.0.1:8000/"


def test_an_untrusted_host_is_refused_after_a_trusted_one_was_served(app: A2AApp) -> None:
    assert call(app, environ())[0] == "200 OK"
    assert call(app, environ(host="evil.example"))[0].startswith("400")


def test_a_per_request_base_url_always_takes_the_long_way(app: A2AApp) -> None:
    call(app, environ())
    tenant = environ()
    put_base_url(tenant, "https://tenant.example/a2a")
    assert url_of(call(app, tenant)[2]) == "https://tenant.example/a2a/"
    assert url_of(call(app, environ())[2]) == "http://127.0.0.1:8000/"


def test_a_new_base_url_is_served_at_once(app: A2AApp) -> None:
    call(app, environ())
    app.base_url = "https://public.example/agent"
    assert url_of(call(app, environ())[2]) == "https://public.example/agent/"


def test_head_is_answered_without_a_body(app: A2AApp) -> None:
    got = call(app, environ())
    status, headers, body = call(app, environ("HEAD"))
    assert (status, body) == ("200 OK", b"")
    assert headers["ETag"] == got[1]["ETag"]


def test_a_new_signer_is_used_for_the_next_card(app: A2AApp) -> None:
    unsigned = call(app, environ())
    assert "signatures" not in json.loads(unsigned[2])
    app.dispatcher.card.signer = CardSigner([SigningKey.generate("k1")])
    signed = call(app, environ())
    assert json.loads(signed[2])["signatures"]
    assert signed[1]["ETag"] != unsigned[1]["ETag"]


def test_a_guessed_memory_store_refuses_many_processes_after_a_card_was_served(
        app: A2AApp) -> None:
    assert call(app, environ())[0] == "200 OK"
    many = environ()
    many["wsgi.multiprocess"] = True
    assert call(app, many)[0].startswith("500")


def test_a_prepared_card_is_kept_until_the_card_or_the_signer_changes(app: A2AApp) -> None:
    card = app.card
    current = [card]
    endpoint = CardEndpoint(lambda: current[0], last_modified=app.dispatcher.card.last_modified,
                            versions=("1.0",))
    prepared = endpoint.prepared("http://h/", "1.0")
    assert endpoint.prepared("http://h/", "1.0") is prepared
    current[0] = replace(card, description="Says hello, differently")
    again = endpoint.prepared("http://h/", "1.0")
    assert again is not prepared and again.body != prepared.body
    assert endpoint.prepared("http://h/", "1.0") is again
    endpoint.signer = CardSigner([SigningKey.generate("k2")])
    signed = endpoint.prepared("http://h/", "1.0")
    assert signed is not again and json.loads(signed.body)["signatures"]
    request = HttpRequest(method="GET", path=CARD_PATH, headers=Headers({}))
    assert endpoint.response(request, "http://h/").body == signed.body


def request_ids(app: A2AApp, env: dict[str, Any]) -> tuple[str, str]:
    seen: dict[str, Any] = {}
    app(env, lambda status, headers, exc_info=None: seen.update(status=status, headers=headers))
    ids = [v for k, v in seen["headers"] if k == "X-Request-Id"]
    assert len(ids) == 1, seen["headers"]
    return str(seen["status"]), ids[0]


@pytest.mark.parametrize("access_level", [logging.WARNING, logging.INFO])
def test_a_kept_answer_carries_its_request_id_whether_or_not_it_is_logged(
        app: A2AApp, access_level: int, caplog: pytest.LogCaptureFixture) -> None:
    # WARNING: nobody logs a 200 or 304, so the app answers before making a record;
    # INFO: the answer is observed and logged. The wire is the same either way.
    caplog.set_level(access_level, logger=ACCESS_LOGGER)
    etag = call(app, environ())[1]["ETag"]
    made = [request_ids(app, environ(**validators))
            for validators in ({}, {}, {"if_none_match": etag}, {"if_none_match": etag})]
    assert [status for status, _ in made] == ["200 OK", "200 OK"] + ["304 Not Modified"] * 2
    assert all(len(rid) == 16 and int(rid, 16) >= 0 for _, rid in made)
    assert len({rid for _, rid in made}) == 4
    assert request_ids(app, environ(x_request_id="req-abc-123"))[1] == "req-abc-123"
    assert request_ids(app, environ(x_request_id="no spaces"))[1] != "no spaces"
    logged = [r for r in caplog.records if r.name == ACCESS_LOGGER]
    assert len(logged) == (7 if access_level == logging.INFO else 0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_worker_starts_its_own_work_at_its_first_card_get() -> None:
    # Nobody logs the card GET (WARNING), so it is answered without a record; the forked
    # worker still starts its own push loop then, as for any request.
    app = A2AApp(Hello(), push=True)
    try:
        assert call(app, environ())[0] == "200 OK"
        deliverer = app.deliverer
        assert deliverer is not None
        parent_pid = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child
            ok = call(app, environ())[0] == "200 OK" and deliverer._pid == os.getpid()
            os._exit(0 if ok and os.getpid() != parent_pid else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        app.close()
