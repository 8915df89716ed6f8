"""Shared pieces of the hostile-input corpus: agents, apps, probes.

Kept apart from the test table so the table reads as data. Everything here
talks plain HTTP with ``requests`` (or WSGI with werkzeug's test client) and
hand-written wire shapes, never through a2a_client or a2a_core.wire.
"""

from __future__ import annotations

import http.client
import json
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import requests
from support.a2a_http import Peer

from a2a_core.models import Message
from a2a_wsgi import A2AApp, Agent, AgentContext, input_required, put_identity, reply, working

#: Text in an answer that would mean a Python exception or our internals leaked out.
INTERNAL_TEXT = re.compile(
    r"Traceback|File \"|\.py\b|site-packages|a2a_core|a2a_wsgi|werkzeug|sys\.\w+|"
    r"object at 0x|\b(?:Value|Key|Type|Attribute|Index|Recursion|Unicode\w*|Runtime|"
    r"Assertion|Name|Lookup|Overflow|ZeroDivision|JSONDecode)Error\b|Exception|codec"
)

#: The codes any JSON-RPC answer of ours may carry (-32603 would be an unhandled bug).
KNOWN_CODES = frozenset({-32700, -32600, -32601, -32602, *range(-32009, -32000)})


class CorpusAgent(Agent):
    """Echoes, except "wait" leaves the task WORKING and "ask" asks for input."""

    name = "Corpus Agent"
    description = "Target of the hostile-input corpus"

    def handle_message(self, message: Message, context: AgentContext) -> Any:
        text = "".join(getattr(part, "text", "") or "" for part in message.parts)
        if text == "wait":
            return working("waiting")
        if text == "ask":
            return input_required("more?")
        return reply(*message.parts)


def corpus_app(**options: Any) -> A2AApp:
    """The app under attack: default limits (1 MiB body, depth 64, 256 parts)."""
    return A2AApp(CorpusAgent(), **options)


class IdentityFromHeader:
    """WSGI middleware: ``X-Test-User`` becomes the caller's identity (test-only auth)."""

    def __init__(self, app: A2AApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        user = environ.get("HTTP_X_TEST_USER")
        if user:
            put_identity(environ, user)
        return self.app(environ, start_response)

    def close(self) -> None:
        self.app.close()


class OwnerTable:
    """An ``authorize_task`` callback: a task is visible to the identity recorded for it."""

    def __init__(self) -> None:
        self.owners: dict[str, str] = {}

    def __call__(self, operation: Any, task: Any, context: Any) -> bool:
        owner = self.owners.get(task.id)
        return owner is None or owner == context.identity


def random_task_id() -> str:
    """A well-formed id no server issued (what a probing client would try)."""
    return str(uuid.uuid4())


def post_raw(url: str, body: bytes, *, version: str | None = "1.0",
             content_type: str | None = "application/json",
             headers: Mapping[str, str] | None = None) -> requests.Response:
    """One POST on a fresh connection (an oversize body may leave a connection unusable)."""
    sent = {} if content_type is None else {"Content-Type": content_type}
    if version:
        sent["A2A-Version"] = version
    sent.update(headers or {})
    return requests.post(url.rstrip("/") + "/", data=body, headers=sent, timeout=10)


def rpc_body(method: str, params: Any = None, *, request_id: Any = 1, **extra: Any) -> bytes:
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}
    if params is not None:
        envelope["params"] = params
    return json.dumps(envelope).encode()


def total_tasks(url: str, headers: Mapping[str, str] | None = None) -> int:
    """ListTasks totalSize: the store-side witness that nothing was written."""
    peer = Peer(url, "1.0")
    answer = peer.rpc("list", {"pageSize": 100}, headers=dict(headers or {}))
    return int(answer["result"]["totalSize"])


def assert_alive(url: str) -> None:
    """The server still answers, quickly: the agent card within one second."""
    started = time.monotonic()
    response = requests.get(url.rstrip("/") + "/.well-known/agent-card.json", timeout=5)
    assert response.status_code == 200
    assert time.monotonic() - started < 1.0


def assert_no_internal_text(text: str) -> None:
    found = INTERNAL_TEXT.search(text)
    assert found is None, f"internal text {found.group()!r} in {text[:300]!r}"


def assert_rpc_answer(payload: Any) -> None:
    """A JSON-RPC 2.0 response object: a result, or an error with one of our codes."""
    assert isinstance(payload, dict), payload
    assert payload.get("jsonrpc") == "2.0", payload
    assert ("result" in payload) != ("error" in payload), payload
    if "error" in payload:
        error = payload["error"]
        assert isinstance(error.get("message"), str), error
        assert error.get("code") in KNOWN_CODES, error


def sse_payloads(body: bytes) -> list[Any]:
    """The JSON of each ``data:`` line of an SSE body (our events are one line each).

    SSE lines end only at CR, LF or CRLF; ``str.splitlines`` would also split at
    U+2028 and friends, which JSON text may carry raw.
    """
    lines = re.split(r"\r\n|\r|\n", body.decode())
    return [json.loads(line[5:]) for line in lines if line.startswith("data:")]


def normalized(body: bytes, task_id: str) -> bytes:
    """A body with one task id replaced, to compare answers about two different ids."""
    return body.replace(task_id.encode(), b"<task>")


def chunks(data: bytes, size: int = 65536) -> Iterable[bytes]:
    """A generator body: requests sends it with Transfer-Encoding: chunked."""
    for start in range(0, len(data), size):
        yield data[start:start + size]


def assert_names_field(payload: Any, field: str, version: str) -> None:
    """A -32602 whose message starts with the field's path, as does 1.0's BadRequest."""
    error = payload["error"]
    assert error["message"].startswith(f"{field}: "), error
    if version == "1.0":
        violations = [violation["field"] for detail in error["data"]
                      if detail["@type"].endswith("google.rpc.BadRequest")
                      for violation in detail["fieldViolations"]]
        assert violations == [field], error


# -- the HTTP+JSON column ----------------------------------------------------------------

#: A REST request: (HTTP method, path below the interface URL, query, JSON body or None).
RestRequest = tuple[str, str, dict[str, str], Any]

_PATH_ID = {"GetTask": "id", "CancelTask": "id", "SubscribeToTask": "id"}
_PUSH_OPS = {"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
             "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"}


def rest_request(method: str, params: Mapping[str, Any]) -> RestRequest | None:
    """The HTTP+JSON request carrying a 1.0 JSON-RPC call, written out by hand (the
    spec's table, not our route code); None when a GET or DELETE cannot carry a member
    (an object in a query)."""
    rest = dict(params)
    tenant = rest.pop("tenant", None)
    prefix = f"/{_segment(tenant)}" if isinstance(tenant, str) else ""
    if method in ("SendMessage", "SendStreamingMessage"):
        verb = "send" if method == "SendMessage" else "stream"
        return "POST", f"{prefix}/message:{verb}", {}, rest
    if method == "ListTasks":
        return _query_request("GET", f"{prefix}/tasks", rest)
    if method in _PATH_ID:
        task = f"{prefix}/tasks/{_segment(rest.pop('id', ''))}"
        if method == "GetTask":
            return _query_request("GET", task, rest)
        return "POST", task + (":cancel" if method == "CancelTask" else ":subscribe"), {}, rest
    if method in _PUSH_OPS:
        hooks = f"{prefix}/tasks/{_segment(rest.pop('taskId', ''))}/pushNotificationConfigs"
        if method == "CreateTaskPushNotificationConfig":
            return "POST", hooks, {}, rest
        if method == "ListTaskPushNotificationConfigs":
            return _query_request("GET", hooks, rest)
        verb = "GET" if method == "GetTaskPushNotificationConfig" else "DELETE"
        return _query_request(verb, f"{hooks}/{_segment(rest.pop('id', ''))}", rest)
    return None


def _segment(value: Any) -> str:
    return quote(str(value), safe="")


def _query_request(verb: str, path: str, members: Mapping[str, Any]) -> RestRequest | None:
    query: dict[str, str] = {}
    for name, value in members.items():
        if isinstance(value, bool):
            query[name] = "true" if value else "false"
        elif isinstance(value, (int, str)):
            query[name] = str(value)
        else:
            return None
    return verb, path, query, None


def rest_send(url: str, request: RestRequest, *, raw: bytes | None = None,
              content_type: str | None = "application/a2a+json",
              headers: Mapping[str, str] | None = None) -> requests.Response:
    """One HTTP+JSON request on a fresh connection, below ``<url>/rest``."""
    verb, path, query, body = request
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    sent = {"A2A-Version": "1.0"}
    if content_type is not None and data is not None:
        sent["Content-Type"] = content_type
    sent.update(headers or {})
    return requests.request(verb, url.rstrip("/") + "/rest" + path, params=query, data=data,
                            headers=sent, timeout=10)


def raw_target(url: str, target: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """Send ``target`` byte for byte (no client-side dot-segment removal or quoting)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        connection.putrequest(method, target, skip_accept_encoding=True)
        connection.putheader("A2A-Version", "1.0")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def assert_status_body(status: int, headers: Mapping[str, str], body: bytes, code: int,
                       reason: str) -> dict[str, Any]:
    """A google.rpc.Status answer with ``code`` and an A2A ErrorInfo of ``reason``."""
    assert status == code, body[:300]
    assert headers.get("Content-Type") in ("application/json", "application/a2a+json"), headers
    text = body.decode()
    assert_no_internal_text(text)
    error = json.loads(text)["error"]
    assert error["code"] == code and isinstance(error["message"], str), error
    infos = [d for d in error["details"] if d.get("@type", "").endswith("google.rpc.ErrorInfo")]
    assert [(i["reason"], i["domain"]) for i in infos] == [(reason, "a2a-protocol.org")], error
    return dict(error)


def total_tasks_rest(url: str) -> int:
    """ListTasks totalSize over HTTP+JSON (the same store the JSON-RPC witness reads)."""
    response = requests.get(url.rstrip("/") + "/rest/tasks?pageSize=1", timeout=10)
    return int(response.json()["totalSize"])
