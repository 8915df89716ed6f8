"""``A2AClient(url, binding="GRPC")`` against an app whose card lists its gRPC interface:
credentials only to the agent's own origins (the gRPC one named, or pinned), custom
headers expanded per call, the gRPC channels closed with the client."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from grpc_support import grpc_app
from support.gunicorn import free_port

from a2a_client import A2AClient, HTTPStatusError
from a2a_core.models import Task
from a2a_wsgi import serve
from a2a_wsgi._telemetry import ACCESS_LOGGER
from a2a_wsgi.auth import BearerAuthenticator
from a2a_wsgi.grpc import serve_grpc
from a2a_wsgi.settings import ProtocolSettings

TOKENS = {"alice-token": "alice"}


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, str]]:
    """(HTTP URL, gRPC target) of one app, its card listing the target."""
    target = f"127.0.0.1:{free_port()}"
    app = grpc_app(auth=[BearerAuthenticator(lambda token: TOKENS.get(token))],
                   protocol=ProtocolSettings(grpc_url=target))
    http = serve(app, "127.0.0.1:0")
    server = serve_grpc(app, target, base_url=http.url)
    try:
        yield http.url, target
    finally:
        server.stop(0)
        http.stop()
        app.close()


def test_credentials_do_not_go_to_a_grpc_origin_the_caller_did_not_name(
        agent: tuple[str, str]) -> None:
    url, target = agent
    with A2AClient(url, binding="GRPC", auth="alice-token") as client:
        assert client.endpoint.url == target
        with pytest.raises(HTTPStatusError) as raised:
            client.send_message("hi")
    assert raised.value.status_code == 401


def test_credentials_go_to_the_grpc_origin_named_in_auth_origins(
        agent: tuple[str, str]) -> None:
    url, target = agent
    with A2AClient(url, binding="GRPC", auth="alice-token",
                   auth_origins=[f"http://{target}"]) as over_grpc, \
            A2AClient(url, binding="JSONRPC", auth="alice-token") as over_rpc:
        sent = over_grpc.send_message("hi")
        assert isinstance(sent, Task)
        assert over_rpc.get_task(sent.id).id == sent.id  # alice's task, over either binding


def test_a_pinned_grpc_endpoint_is_trusted_and_needs_no_card(agent: tuple[str, str]) -> None:
    _, target = agent
    # The URL answers nothing: no card is read, the calls go to the pinned target.
    with A2AClient("http://127.0.0.1:9", endpoint=target, binding="GRPC",
                   auth="alice-token") as client:
        sent = client.send_message("pinned")
        assert isinstance(sent, Task)
        assert client.get_task(sent.id).status.state == sent.status.state


def test_custom_headers_are_expanded_into_metadata_per_call(
        agent: tuple[str, str], caplog: pytest.LogCaptureFixture) -> None:
    _, target = agent
    caplog.set_level(logging.INFO, ACCESS_LOGGER)
    environ = {"RID": "first-id"}
    with A2AClient("http://127.0.0.1:9", endpoint=target, binding="GRPC", auth="alice-token",
                   headers={"X-Request-Id": "${RID}"}, environ=environ) as client:
        client.send_message("one")
        environ["RID"] = "second-id"
        client.send_message("two")
    ids = [r.request_id for r in caplog.records  # type: ignore[attr-defined]
           if r.name == ACCESS_LOGGER and getattr(r, "operation", None) == "SendMessage"]
    assert ids == ["first-id", "second-id"]


def test_close_closes_the_grpc_channels(agent: tuple[str, str]) -> None:
    _, target = agent
    client = A2AClient("http://127.0.0.1:9", endpoint=target, binding="GRPC",
                       auth="alice-token")
    client.send_message("before")
    binding = client._channels.get("GRPC")
    held = dict(binding.grpc._channels)  # type: ignore[attr-defined]
    assert len(held) == 1
    client.close()
    assert not binding.grpc._channels  # type: ignore[attr-defined]
    (channel,) = held.values()
    with pytest.raises(ValueError):  # grpcio: "Cannot invoke RPC on closed channel!"
        channel.unary_unary("/x/y")(b"", timeout=1)
