"""Which card interface the gRPC binding speaks to, and at which target."""

from __future__ import annotations

import pytest

from a2a_client.grpc_binding import grpc_target, select_grpc_endpoint, speaks_grpc
from a2a_core.models import AgentCard, AgentInterface


@pytest.mark.parametrize(("url", "expected"), [
    ("127.0.0.1:50051", ("127.0.0.1:50051", False)),
    ("grpc://agent.example:443", ("agent.example:443", False)),
    ("http://agent.example:8080/", ("agent.example:8080", False)),
    ("grpcs://agent.example:443", ("agent.example:443", True)),
    ("https://agent.example:8443", ("agent.example:8443", True)),
    ("[::1]:50051", ("[::1]:50051", False)),
])
def test_interface_urls_become_targets(url: str, expected: tuple[str, bool]) -> None:
    assert grpc_target(url) == expected


@pytest.mark.parametrize("url", ["ftp://agent:21", "agent.example", "grpc://agent.example",
                                 "https://agent:notaport"])
def test_urls_that_name_no_grpc_target_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        grpc_target(url)


def _card(*interfaces: AgentInterface) -> AgentCard:
    return AgentCard(name="a", supported_interfaces=list(interfaces))


def test_the_first_1x_grpc_interface_is_chosen_with_its_tenant() -> None:
    card = _card(
        AgentInterface(url="http://h/", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url="h:1", protocol_binding="GRPC", protocol_version="0.3"),
        AgentInterface(url="h:2", protocol_binding="grpc", protocol_version="1.0", tenant="t"),
        AgentInterface(url="h:3", protocol_binding="GRPC", protocol_version="1.0"),
    )
    chosen = select_grpc_endpoint(card)
    assert chosen is not None
    assert (chosen.url, chosen.version, chosen.tenant, chosen.binding) == ("h:2", "1.0", "t",
                                                                           "GRPC")
    assert not speaks_grpc(card.supported_interfaces[1])


def test_a_card_without_grpc_has_no_grpc_endpoint() -> None:
    card = _card(AgentInterface(url="http://h/", protocol_binding="JSONRPC",
                                protocol_version="1.0"))
    assert select_grpc_endpoint(card) is None
