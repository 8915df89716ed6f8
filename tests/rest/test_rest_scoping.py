"""HTTP+JSON scoping: tenants, identities and ``authorize_task``, retried sends, extensions.

A denied task must look exactly like a missing one (status, headers, body bar the id),
on every path that names a task; tenants are separate stores of tasks; a send retried
with the same messageId answers the task the first one made, whichever binding carried
either; extensions are negotiated by header as on JSON-RPC.
"""

from __future__ import annotations

import http.client
import json
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from rest_support import IdentityFromHeader, Rest, RestAgent, assert_status, message_json
from support.a2a_http import Peer, served, unwrap

from a2a_core.extensions import Extension
from a2a_wsgi import A2AApp
from a2a_wsgi.settings import CardSettings, ProtocolSettings, RuntimeSettings

CAPS = {"capabilities": {"push_notifications": True, "streaming": True}}


class OwnerTable:
    """``authorize_task``: a task is visible to the identity recorded for it."""

    def __init__(self) -> None:
        self.owners: dict[str, str] = {}

    def __call__(self, operation: Any, task: Any, context: Any) -> bool:
        owner = self.owners.get(task.id)
        return owner is None or owner == context.identity


@pytest.fixture(scope="module", params=["identity", "authorize_task"])
def scoped(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Alice and Bob: scoped by the store (identity) or only by the callback."""
    owners = OwnerTable()
    if request.param == "identity":
        app = A2AApp(RestAgent(), card=CardSettings(overrides=CAPS))
    else:
        app = A2AApp(
            RestAgent(),
            card=CardSettings(overrides=CAPS),
            protocol=ProtocolSettings(authorize_task=owners),
            runtime=RuntimeSettings(owner_key=lambda identity: None),
        )
    with served(IdentityFromHeader(app)) as handle:
        yield SimpleNamespace(url=handle.url, owners=owners.owners)


def _task_paths(task_id: str) -> list[tuple[str, str, Any]]:
    """Every HTTP+JSON request that names a task: (method, path, body)."""
    hooks = f"/tasks/{task_id}/pushNotificationConfigs"
    return [
        ("GET", f"/tasks/{task_id}", None),
        ("GET", f"/tasks/{task_id}?historyLength=1", None),
        ("POST", f"/tasks/{task_id}:cancel", {}),
        ("GET", f"/tasks/{task_id}:subscribe", None),
        ("POST", f"/tasks/{task_id}:subscribe", {}),
        ("POST", hooks, {"url": "https://hooks.example/bob"}),
        ("GET", hooks, None),
        ("GET", f"{hooks}/cfg-1", None),
        ("DELETE", f"{hooks}/cfg-1", None),
        ("POST", "/message:send", {"message": message_json("let me in", taskId=task_id)}),
        ("POST", "/message:stream", {"message": message_json("let me in", taskId=task_id)}),
    ]


def test_another_callers_task_is_a_missing_task(scoped: Any) -> None:
    alice = Rest(scoped.url + "/rest", {"X-Test-User": "alice"})
    bob = Rest(scoped.url + "/rest", {"X-Test-User": "bob"})
    victim = alice.send("wait", blocking=False)["id"]
    scoped.owners[victim] = "alice"
    alice.ok("POST", f"/tasks/{victim}/pushNotificationConfigs",
             body={"id": "cfg-1", "url": "https://hooks.example/alice"})
    missing = f"tsk-{uuid.uuid4().hex}"
    for method, path, body in _task_paths(victim):
        denied = bob.request(method, path, body=body)
        absent = bob.request(method, path.replace(victim, missing),
                             body=json.loads(json.dumps(body).replace(victim, missing))
                             if body is not None else None)
        label = f"{method} {path}"
        assert denied.status_code == absent.status_code == 404, label
        assert denied.headers["Content-Type"] == absent.headers["Content-Type"], label
        assert denied.content.replace(victim.encode(), b"<t>") == \
            absent.content.replace(missing.encode(), b"<t>"), label
        assert_status(denied, 404, "TASK_NOT_FOUND")
    # Bob changed nothing: the task still works, Alice's webhook is still there.
    assert alice.ok("GET", f"/tasks/{victim}")["status"]["state"] == "TASK_STATE_WORKING"
    assert len(alice.ok("GET", f"/tasks/{victim}/pushNotificationConfigs")["configs"]) == 1
    assert victim not in json.dumps(bob.ok("GET", "/tasks"))
    alice.ok("POST", f"/tasks/{victim}:cancel")


# -- tenants ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with served(A2AApp(RestAgent(), card=CardSettings(overrides=CAPS))) as handle:
        yield handle.url


def test_a_tenant_prefix_scopes_every_operation(base: str) -> None:
    rest = Rest(base + "/rest")
    task = rest.send("in t1", path="/acme/message:send")
    tid = task["id"]
    assert rest.ok("GET", f"/acme/tasks/{tid}")["id"] == tid
    for other in ("/globex", ""):
        assert_status(rest.request("GET", f"{other}/tasks/{tid}"), 404, "TASK_NOT_FOUND")
        assert tid not in json.dumps(rest.ok("GET", f"{other}/tasks"))
        response = rest.request("POST", f"{other}/tasks/{tid}/pushNotificationConfigs",
                                body={"url": "https://hooks.example/x"})
        assert_status(response, 404, "TASK_NOT_FOUND")
    assert [t["id"] for t in rest.ok("GET", "/acme/tasks")["tasks"]] == [tid]
    created = rest.ok("POST", f"/acme/tasks/{tid}/pushNotificationConfigs",
                      body={"id": "c", "url": "https://hooks.example/x"})
    assert created["taskId"] == tid
    assert rest.ok("GET", f"/acme/tasks/{tid}/pushNotificationConfigs/c") == created


def test_unprefixed_paths_win_over_a_tenant_named_like_a_route(base: str) -> None:
    """``/tasks/tasks`` is GetTask of the id "tasks", never ListTasks of a tenant "tasks"."""
    rest = Rest(base + "/rest")
    error = assert_status(rest.request("GET", "/tasks/tasks"), 404, "TASK_NOT_FOUND")
    assert error["message"] == "Task tasks not found"
    response = rest.request("POST", "/tasks/message:send", body={"message": message_json()})
    assert response.status_code == 405 and response.headers["Allow"] == "GET"


def test_the_body_tenant_must_match_the_path(base: str) -> None:
    rest = Rest(base + "/rest")
    response = rest.request("POST", "/acme/message:send",
                            body={"message": message_json(), "tenant": "globex"})
    error = assert_status(response, 400, "INVALID_PARAMS")
    assert error["message"] == "body member 'tenant' contradicts the path's tenant 'acme'"
    same = rest.ok("POST", "/acme/message:send",
                   body={"message": message_json(), "tenant": "acme"})
    assert same["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_json_rpc_tenant_and_a_rest_prefix_are_one_tenant(base: str) -> None:
    rest = Rest(base + "/rest")
    created = Peer(base, "1.0").rpc("send", {"message": message_json("rpc side"),
                                             "tenant": "initech"})
    tid = unwrap(created["result"], "1.0")["id"]
    assert rest.ok("GET", f"/initech/tasks/{tid}")["id"] == tid
    assert_status(rest.request("GET", f"/tasks/{tid}"), 404, "TASK_NOT_FOUND")


@pytest.mark.parametrize("segment", ["%2e%2e", "%2E%2E", "%2e", "%20"])
def test_a_dot_or_blank_tenant_is_400_and_lists_nothing(base: str, segment: str) -> None:
    """``/rest/%2e%2e/tasks`` decodes to the tenant ``..``: refused, not a scope of its own."""
    host = base.removeprefix("http://")
    for method, path, body in (("GET", f"/rest/{segment}/tasks", None),
                               ("POST", f"/rest/{segment}/message:send",
                                json.dumps({"message": message_json()}).encode())):
        connection = http.client.HTTPConnection(host, timeout=5)
        try:  # sent as written: requests would resolve the dot segments first
            connection.request(method, path, body=body,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            answer = json.loads(response.read())
        finally:
            connection.close()
        assert response.status == 400, (path, answer)
        assert answer["error"]["status"] == "INVALID_ARGUMENT"
        assert "tenant" in answer["error"]["message"]


@pytest.mark.parametrize("tenant", ["..", ".", "", " "])
def test_a_json_rpc_dot_or_empty_tenant_is_invalid_params(base: str, tenant: str) -> None:
    for method, params in (("send", {"message": message_json(), "tenant": tenant}),
                           ("list", {"tenant": tenant})):
        answer = Peer(base, "1.0").rpc(method, params)
        assert answer["error"]["code"] == -32602, answer
        assert "tenant" in answer["error"]["message"]


# -- retried sends ------------------------------------------------------------------------


def test_a_send_retried_with_the_same_message_id_answers_the_same_task(base: str) -> None:
    rest = Rest(base + "/rest")
    before = rest.ok("GET", "/tasks?pageSize=1")["totalSize"]
    message = message_json("once only")
    first = rest.ok("POST", "/message:send", body={"message": message})["task"]
    again = rest.ok("POST", "/message:send", body={"message": message})["task"]
    assert again["id"] == first["id"]
    streamed = rest.request("POST", "/message:stream", body={"message": message})
    assert first["id"] in streamed.text
    assert rest.ok("GET", "/tasks?pageSize=1")["totalSize"] == before + 1


def test_a_retry_may_change_binding(base: str) -> None:
    """The same request over JSON-RPC then HTTP+JSON is one send (the fingerprint is of
    the decoded request, not of the wire)."""
    rest = Rest(base + "/rest")
    message = message_json("either way")
    by_rpc = Peer(base, "1.0").rpc("send", {"message": message})
    first = unwrap(by_rpc["result"], "1.0")
    by_rest = rest.ok("POST", "/message:send", body={"message": message})["task"]
    assert by_rest["id"] == first["id"]


def test_the_same_message_id_with_another_request_is_a_new_task(base: str) -> None:
    rest = Rest(base + "/rest")
    message_id = f"msg-{uuid.uuid4()}"
    first = rest.send("one text", message_id=message_id)
    second = rest.send("another text", message_id=message_id)
    assert first["id"] != second["id"]


# -- extensions ---------------------------------------------------------------------------


class Tracing(Extension):
    uri = "https://ext.example/tracing/v1"
    description = "Adds a trace id"


class Required(Extension):
    uri = "https://ext.example/required/v1"
    required = True


#: A2AApp builds a GET's request from the card's headers only (If-None-Match,
#: If-Modified-Since, A2A-Version): A2A-Extensions and Last-Event-ID never reach the
#: dispatcher on an HTTP+JSON GET (a2a_wsgi/_app.py, A2AApp.__call__).
@pytest.mark.parametrize("method", ["POST", "GET"])
def test_requested_extensions_are_echoed(method: str) -> None:
    with served(A2AApp(RestAgent(), protocol=ProtocolSettings(extensions=(Tracing(),)))) as handle:
        rest = Rest(handle.url + "/rest")
        path, body = ("/tasks/tsk-1:subscribe", {}) if method == "POST" else ("/tasks", None)
        asked = rest.request(method, path, body=body, headers={
            "A2A-Extensions": f"{Tracing.uri}, https://ext.example/unknown"})
        assert asked.headers.get("A2A-Extensions") == Tracing.uri
        old_spelling = rest.request(method, path, body=body,
                                    headers={"X-A2A-Extensions": Tracing.uri})
        assert old_spelling.headers.get("A2A-Extensions") == Tracing.uri
        assert "A2A-Extensions" not in rest.request(method, path, body=body).headers


def test_a_required_extension_not_requested_is_refused() -> None:
    with served(A2AApp(RestAgent(), protocol=ProtocolSettings(extensions=(Required(),)))) as handle:
        rest = Rest(handle.url + "/rest")
        response = rest.request("POST", "/message:send", body={"message": message_json()})
        error = assert_status(response, 400, "EXTENSION_SUPPORT_REQUIRED",
                              grpc="FAILED_PRECONDITION")
        assert Required.uri in error["message"]
        assert error["details"][0]["metadata"]["extensions"] == Required.uri
        served_ = rest.request("POST", "/message:send", body={"message": message_json()},
                               headers={"A2A-Extensions": Required.uri})
        assert served_.status_code == 200
        assert served_.headers["A2A-Extensions"] == Required.uri
