"""Helpers for the A2AApp authentication tests: one caller per binding, and the agent they call.

A :class:`Caller` speaks to a served app with plain requests, in one binding
(``jsonrpc-0.3``, ``jsonrpc-1.0`` or ``rest``), carrying one set of
credentials (headers, query parameters, cookies). Its operations return the
raw ``requests.Response``; :func:`result` and :func:`error_of` read it back
in the binding's shape, and :func:`assert_refused` checks a 401/403.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import requests

from a2a_core.models import AgentSkill, Message, TaskState
from a2a_wsgi import Agent, AgentContext, reply

__all__ = ["BINDINGS", "Caller", "WhoAgent", "assert_refused", "caller_name", "error_of",
           "result"]

BINDINGS = ("jsonrpc-0.3", "jsonrpc-1.0", "rest")

_METHODS = {
    "send": ("message/send", "SendMessage"),
    "get": ("tasks/get", "GetTask"),
    "cancel": ("tasks/cancel", "CancelTask"),
    "list": (None, "ListTasks"),
    "subscribe": ("tasks/resubscribe", "SubscribeToTask"),
    "push_set": ("tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"),
    "push_get": ("tasks/pushNotificationConfig/get", "GetTaskPushNotificationConfig"),
    "push_list": ("tasks/pushNotificationConfig/list", "ListTaskPushNotificationConfigs"),
    "push_delete": ("tasks/pushNotificationConfig/delete", "DeleteTaskPushNotificationConfig"),
    "extended_card": ("agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"),
}


def caller_name(identity: Any) -> str:
    """What the agent answers about its caller: a Principal's identity, or ``anonymous``."""
    if identity is None:
        return "anonymous"
    return str(getattr(identity, "identity", identity))


class WhoAgent(Agent):
    """Answers ``caller=<identity>``; ``wait`` holds WORKING until canceled (10 s at most)."""

    name = "Who Agent"
    description = "Says who called it"
    skills = [AgentSkill(id="who", name="Who", description="Names the caller", tags=["auth"])]

    def __init__(self) -> None:
        #: The identity objects the agent saw, in call order.
        self.seen: list[Any] = []

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        self.seen.append(ctx.identity)
        if msg.text == "wait":
            ctx.emit_status(TaskState.WORKING, "holding")
            deadline = time.monotonic() + 10
            while not ctx.is_cancelled() and time.monotonic() < deadline:
                time.sleep(0.01)
            return None if ctx.is_cancelled() else reply("released")
        return reply(f"caller={caller_name(ctx.identity)}")


def _message(text: str, version: str, task_id: str | None = None,
             context_id: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"messageId": f"msg-{uuid.uuid4()}"}
    if task_id is not None:
        msg["taskId"] = task_id
    if context_id is not None:
        msg["contextId"] = context_id
    if version == "0.3":
        msg.update(kind="message", role="user", parts=[{"kind": "text", "text": text}])
    else:
        msg.update(role="ROLE_USER", parts=[{"text": text}])
    return msg


class Caller:
    """One binding of one served app, with one caller's credentials."""

    def __init__(self, base: str, binding: str, *, headers: Mapping[str, str] | None = None,
                 query: Mapping[str, str] | None = None,
                 cookies: Mapping[str, str] | None = None) -> None:
        assert binding in BINDINGS, binding
        self.base = base.rstrip("/")
        self.binding = binding
        self.version = "0.3" if binding == "jsonrpc-0.3" else "1.0"
        self.extra_headers = dict(headers or {})
        self.query = dict(query or {})
        self.cookies = dict(cookies or {})

    def __repr__(self) -> str:
        return f"Caller({self.binding})"

    # -- transport ----------------------------------------------------------------------

    def _headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.version == "1.0":
            headers["A2A-Version"] = "1.0"
        return {**headers, **self.extra_headers, **(extra or {})}

    def rpc(self, op: str, params: Any = None, *, stream: bool = False) -> requests.Response:
        method = _METHODS[op][0 if self.version == "0.3" else 1]
        assert method is not None, f"{op} has no {self.version} method"
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": f"req-{uuid.uuid4().hex[:8]}",
                                "method": method}
        if params is not None:
            body["params"] = params
        accept = {"Accept": "text/event-stream"} if stream else None
        return requests.post(self.base + "/", data=json.dumps(body), params=self.query,
                             cookies=self.cookies, headers=self._headers(accept),
                             stream=stream, timeout=10)

    def rest(self, method: str, path: str, body: Any = None, *,
             stream: bool = False) -> requests.Response:
        accept = {"Accept": "text/event-stream"} if stream else None
        return requests.request(method, self.base + "/rest" + path, params=self.query,
                                cookies=self.cookies, headers=self._headers(accept),
                                data=None if body is None else json.dumps(body),
                                stream=stream, timeout=10)

    # -- operations ---------------------------------------------------------------------

    def send(self, text: str = "hi", *, blocking: bool = True,
             task_id: str | None = None, context_id: str | None = None) -> requests.Response:
        params: dict[str, Any] = {"message": _message(text, self.version, task_id, context_id)}
        if not blocking:
            params["configuration"] = ({"blocking": False} if self.version == "0.3"
                                       else {"returnImmediately": True})
        if self.binding == "rest":
            return self.rest("POST", "/message:send", params)
        return self.rpc("send", params)

    def get(self, task_id: str) -> requests.Response:
        if self.binding == "rest":
            return self.rest("GET", f"/tasks/{task_id}")
        return self.rpc("get", {"id": task_id})

    def cancel(self, task_id: str) -> requests.Response:
        if self.binding == "rest":
            return self.rest("POST", f"/tasks/{task_id}:cancel", {})
        return self.rpc("cancel", {"id": task_id})

    def list(self) -> requests.Response:
        if self.binding == "rest":
            return self.rest("GET", "/tasks")
        return self.rpc("list", {})

    @contextmanager
    def subscribe(self, task_id: str) -> Iterator[requests.Response]:
        """The subscription's answer, left open (a stream) until the block ends."""
        if self.binding == "rest":
            response = self.rest("GET", f"/tasks/{task_id}:subscribe", stream=True)
        else:
            response = self.rpc("subscribe", {"id": task_id}, stream=True)
        try:
            yield response
        finally:
            response.close()

    def push_set(self, task_id: str, config_id: str, url: str) -> requests.Response:
        if self.binding == "rest":
            return self.rest("POST", f"/tasks/{task_id}/pushNotificationConfigs",
                             {"id": config_id, "url": url})
        if self.version == "0.3":
            return self.rpc("push_set", {"taskId": task_id,
                                         "pushNotificationConfig": {"id": config_id, "url": url}})
        return self.rpc("push_set", {"taskId": task_id, "id": config_id, "url": url})

    def push_get(self, task_id: str, config_id: str) -> requests.Response:
        if self.binding == "rest":
            return self.rest("GET", f"/tasks/{task_id}/pushNotificationConfigs/{config_id}")
        if self.version == "0.3":
            return self.rpc("push_get", {"id": task_id, "pushNotificationConfigId": config_id})
        return self.rpc("push_get", {"taskId": task_id, "id": config_id})

    def push_list(self, task_id: str) -> requests.Response:
        if self.binding == "rest":
            return self.rest("GET", f"/tasks/{task_id}/pushNotificationConfigs")
        if self.version == "0.3":
            return self.rpc("push_list", {"id": task_id})
        return self.rpc("push_list", {"taskId": task_id})

    def push_delete(self, task_id: str, config_id: str) -> requests.Response:
        if self.binding == "rest":
            return self.rest("DELETE", f"/tasks/{task_id}/pushNotificationConfigs/{config_id}")
        if self.version == "0.3":
            return self.rpc("push_delete", {"id": task_id, "pushNotificationConfigId": config_id})
        return self.rpc("push_delete", {"taskId": task_id, "id": config_id})

    def extended_card(self) -> requests.Response:
        if self.binding == "rest":
            return self.rest("GET", "/extendedAgentCard")
        return self.rpc("extended_card", None if self.version == "0.3" else {})


# -- reading answers ---------------------------------------------------------------------


def result(response: requests.Response, binding: str) -> Any:
    """The successful answer: the JSON-RPC ``result`` or the HTTP+JSON body."""
    assert response.status_code == 200, (response.status_code, response.text)
    body = response.json()
    if binding == "rest":
        return body
    assert "result" in body, body
    return body["result"]


def task_of(answer: Any, binding: str) -> dict[str, Any]:
    """The Task in a SendMessage answer (0.3 bare, 1.0 and REST wrapped in ``task``)."""
    task = answer if binding == "jsonrpc-0.3" else answer["task"]
    assert isinstance(task, dict)
    return task


def texts_of(task: Mapping[str, Any]) -> list[str]:
    return [part["text"] for artifact in task.get("artifacts", [])
            for part in artifact["parts"] if "text" in part]


def error_of(response: requests.Response, binding: str) -> dict[str, Any]:
    """The error of an answer: JSON-RPC ``error`` or the Status ``error`` member."""
    body = response.json()
    assert "error" in body, body
    error = body["error"]
    assert isinstance(error, dict)
    return error


def assert_refused(response: requests.Response, binding: str, *, status: int = 401,
                   scheme: str | None = None) -> dict[str, Any]:
    """A 401/403 in the binding's shape, with a challenge naming ``scheme``; its error."""
    assert response.status_code == status, (response.status_code, response.text)
    challenges = [c.strip() for c in response.headers.get("WWW-Authenticate", "").split("\n")]
    if scheme is not None:
        assert scheme.lower() in response.headers.get("WWW-Authenticate", "").lower(), \
            response.headers
    assert challenges
    assert response.headers["Cache-Control"] == "no-store"
    error = error_of(response, binding)
    reason = "UNAUTHENTICATED" if status == 401 else "UNAUTHORIZED"
    if binding == "rest":
        assert response.headers["Content-Type"].startswith("application/a2a+json")
        assert error["code"] == status
        assert error["status"] == ("UNAUTHENTICATED" if status == 401 else "PERMISSION_DENIED")
        assert error["details"][0]["reason"] == reason
        return error
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body
    assert error["code"] == (-31401 if status == 401 else -31403)
    if binding == "jsonrpc-1.0":
        assert error["data"][0]["reason"] == reason
        assert response.headers["A2A-Version"] == "1.0"
    else:
        assert "data" not in error
        assert response.headers["A2A-Version"] == "0.3"
    return error
