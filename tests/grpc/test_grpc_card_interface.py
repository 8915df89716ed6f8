"""The card lists the gRPC interface another process serves: ``ProtocolSettings(grpc_url=)``,
else ``$A2A_GRPC_URL`` (what ``a2a serve --grpc`` exports), after the HTTP interfaces, in 1.0
only. Read over HTTP from a served app."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from a2a_wsgi import A2AApp, serve
from a2a_wsgi.settings import ProtocolSettings
from examples.echo import EchoAgent

GRPC = {"url": "grpcs://agent.example:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}


def _card(app: A2AApp) -> dict[str, Any]:
    with serve(app, "127.0.0.1:0") as handle:
        answer = requests.get(handle.url + "/.well-known/agent-card.json", timeout=10)
    answer.raise_for_status()
    card: dict[str, Any] = answer.json()
    return card


def test_the_setting_lists_grpc_after_the_http_interfaces(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A2A_GRPC_URL", raising=False)
    card = _card(A2AApp(EchoAgent(), protocol=ProtocolSettings(
        grpc_url="grpcs://agent.example:443")))
    interfaces = card["supportedInterfaces"]
    assert interfaces[-1] == GRPC
    assert [i["protocolBinding"] for i in interfaces[:-1]] == ["JSONRPC", "JSONRPC", "HTTP+JSON"]
    # The 0.3 members of the dual card name 0.3 interfaces only: no gRPC (0.3's is another proto).
    assert card["preferredTransport"] == "JSONRPC"
    assert all(i["transport"] != "GRPC" for i in card.get("additionalInterfaces", []))


def test_the_environment_names_it_when_the_setting_does_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A2A_GRPC_URL", "grpcs://agent.example:443")
    assert _card(A2AApp(EchoAgent()))["supportedInterfaces"][-1] == GRPC


def test_no_grpc_url_lists_no_grpc_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("A2A_GRPC_URL", raising=False)
    interfaces = _card(A2AApp(EchoAgent()))["supportedInterfaces"]
    assert "GRPC" not in {i["protocolBinding"] for i in interfaces}


def test_an_app_serving_only_0_3_lists_no_grpc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A2A_GRPC_URL", "grpcs://agent.example:443")
    card = _card(A2AApp(EchoAgent(), protocol=ProtocolSettings(versions=("0.3",))))
    assert all(i.get("transport") != "GRPC" for i in card.get("additionalInterfaces", []))
    assert "GRPC" not in {i["protocolBinding"] for i in card.get("supportedInterfaces", [])}
