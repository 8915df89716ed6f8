"""The caller gate and the refusals the bindings write, sans-IO (no WSGI, no authenticator).

What an operation needs of the caller is decided once, in the call pipeline: an anonymous
caller of an ``authenticated`` operation gets the deployment's
``challenge``, after the capability gate and before the operation runs. Each binding writes
a :class:`~a2a_core._calls.Refused` its own way, with its status and challenge headers, both
when the gate raises it and when an adapter hands one to ``Dispatcher.refuse`` before the
body is read. tests/auth covers the same over HTTP with each authenticator.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, cast

import pytest

from a2a_core._calls import Refused
from a2a_core._http import Headers, HttpRequest, HttpResponse
from a2a_core._server import Dispatcher, DispatcherConfig
from a2a_core._service import A2AService, CallContext
from a2a_core.errors import RPCError, TaskNotFoundError
from a2a_core.models import AgentCapabilities, AgentCard
from a2a_core.optable import OPERATIONS, Operation

CHALLENGE = ("WWW-Authenticate", 'Bearer realm="a2a"')


class Unauthenticated(RPCError):
    code = -31401
    reason = "UNAUTHENTICATED"
    http_status = 401


class Forbidden(RPCError):
    code = -31403
    reason = "UNAUTHORIZED"
    http_status = 403


class Cards:
    """A service with a public card and, when ``extended``, an extended one."""

    def __init__(self, *, extended: bool = True) -> None:
        self.extended = extended
        self.extended_calls: list[Any] = []

    def agent_card(self) -> AgentCard:
        return AgentCard(name="t", description="t", version="1",
                         capabilities=AgentCapabilities(extended_agent_card=self.extended))

    def extended_agent_card(self, ctx: CallContext) -> AgentCard:
        self.extended_calls.append(ctx.identity)
        return AgentCard(name="members", description="t", version="1")

    def get_task(self, task_id: str, ctx: CallContext) -> Any:
        raise TaskNotFoundError(f"Task {task_id} not found")


def _challenge() -> Refused:
    return Refused(Unauthenticated("authentication required"), status=401,
                   headers=[("Cache-Control", "no-store"), CHALLENGE])


def _dispatcher(service: Cards, *, challenge: bool = True) -> Dispatcher:
    return Dispatcher(cast(A2AService, service), DispatcherConfig(
        base_url="http://agent/", last_modified=datetime(2026, 1, 1, tzinfo=timezone.utc)),
        challenge=_challenge if challenge else None)


def _extended_card(d: Dispatcher, binding: str, identity: Any = None) -> HttpResponse:
    if binding == "rest":
        request = HttpRequest(method="GET", path="/rest/extendedAgentCard")
    else:
        v03 = binding == "jsonrpc-0.3"
        method = "agent/getAuthenticatedExtendedCard" if v03 else "GetExtendedAgentCard"
        body = {"jsonrpc": "2.0", "id": 5, "method": method, "params": {}}
        headers = {"Content-Type": "application/json", **({} if v03 else {"A2A-Version": "1.0"})}
        request = HttpRequest(method="POST", headers=Headers(headers),
                              body=json.dumps(body).encode())
    return d.handle(request, identity=identity)


def _json(response: HttpResponse) -> Any:
    assert isinstance(response.body, bytes)
    return json.loads(response.body)


BINDINGS = ("jsonrpc-0.3", "jsonrpc-1.0", "rest")


def test_only_the_extended_card_needs_an_authenticated_caller() -> None:
    assert [op for op in OPERATIONS if op.authenticated] == [Operation.GET_EXTENDED_AGENT_CARD]


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_anonymous_caller_gets_the_challenge_in_its_bindings_shape(binding: str) -> None:
    service = Cards()
    response = _extended_card(_dispatcher(service), binding)
    assert response.status == 401
    assert response.headers[-2:] == [("Cache-Control", "no-store"), CHALLENGE]
    assert service.extended_calls == []  # refused before the operation ran
    body = _json(response)
    if binding == "rest":
        assert dict(response.headers)["Content-Type"] == "application/a2a+json"
        assert body["error"]["code"] == 401 and body["error"]["status"] == "UNAUTHENTICATED"
        assert body["error"]["details"][0]["reason"] == "UNAUTHENTICATED"
    else:
        assert body["id"] == 5  # the one parse read it
        assert body["error"]["code"] == -31401
        assert dict(response.headers)["A2A-Version"] == binding[-3:]


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_authenticated_caller_gets_the_extended_card(binding: str) -> None:
    service = Cards()
    response = _extended_card(_dispatcher(service), binding, identity="alice")
    assert response.status == 200
    assert service.extended_calls == ["alice"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_without_a_challenge_nobody_is_asked(binding: str) -> None:
    """A server that authenticates nobody itself leaves the extended card to its deployment."""
    service = Cards()
    assert _extended_card(_dispatcher(service, challenge=False), binding).status == 200
    assert service.extended_calls == [None]


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_capability_gate_answers_before_the_caller_gate(binding: str) -> None:
    """No extended card declared: anonymous callers learn that, as authenticated ones do."""
    response = _extended_card(_dispatcher(Cards(extended=False)), binding)
    assert response.status == (400 if binding == "rest" else 200)
    assert not any(name == "WWW-Authenticate" for name, _ in response.headers)


def test_other_operations_ask_nothing_of_the_caller() -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
    request = HttpRequest(method="POST", headers=Headers({"A2A-Version": "1.0"}),
                          body=json.dumps(body).encode())
    response = _dispatcher(Cards()).handle(request)
    assert response.status == 200 and _json(response)["error"]["code"] == -32001
    assert not any(name == "WWW-Authenticate" for name, _ in response.headers)


# -- refusals before the body ----------------------------------------------------------


def _forbidden() -> Refused:
    return Refused(Forbidden("scope missing"), status=403,
                   headers=[("Cache-Control", "no-store"), CHALLENGE])


@pytest.mark.parametrize(("headers", "query", "version"), [
    ({}, {}, "0.3"),
    ({"A2A-Version": "1.0"}, {}, "1.0"),
    ({}, {"A2A-Version": "1.0"}, "1.0"),
    ({"A2A-Version": "9.9"}, {}, "1.0"),  # unsupported: refused in the 1.0 shape
])
def test_a_refusal_on_the_rpc_path_is_a_json_rpc_error_with_id_null(
        headers: dict[str, str], query: dict[str, str], version: str) -> None:
    request = HttpRequest(method="POST", path="/", headers=Headers(headers), query=query)
    response = _dispatcher(Cards()).refuse(request, _forbidden())
    assert response.status == 403
    assert response.headers == [("Content-Type", "application/json"), ("A2A-Version", version),
                                ("Cache-Control", "no-store"), CHALLENGE]
    body = _json(response)
    assert body["id"] is None and body["error"]["code"] == -31403
    assert ("data" in body["error"]) == (version == "1.0")  # the 1.0 ErrorInfo


@pytest.mark.parametrize("path", ["/rest", "/rest/", "/rest/tasks/t-1", "/rest/nowhere"])
def test_a_refusal_below_the_rest_prefix_is_a_status(path: str) -> None:
    response = _dispatcher(Cards()).refuse(HttpRequest(method="GET", path=path), _forbidden())
    assert response.status == 403
    assert response.headers == [("Content-Type", "application/a2a+json"), ("A2A-Version", "1.0"),
                                ("Cache-Control", "no-store"), CHALLENGE]
    error = _json(response)["error"]
    assert (error["code"], error["status"], error["message"]) == (
        403, "PERMISSION_DENIED", "scope missing")
    assert error["details"][0]["reason"] == "UNAUTHORIZED"


@pytest.mark.parametrize("path", ["/nowhere", "/restless", "/.well-known/other.json"])
def test_a_refusal_elsewhere_is_a_small_json_error(path: str) -> None:
    response = _dispatcher(Cards()).refuse(HttpRequest(method="GET", path=path), _challenge())
    assert response.status == 401
    assert response.headers == [("Content-Type", "application/json"),
                                ("Cache-Control", "no-store"), CHALLENGE]
    assert response.body == b'{"error": {"code": 401, "message": "authentication required"}}'
