"""Speak A2A over real HTTP to a served app, in either wire version, with plain requests.

Deliberately independent of a2a_client and a2a_core.wire: the end-to-end
tests check the server's bytes against hand-written wire shapes and the
official schemas, not against our own codec.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # so `import examples.echo` works under any runner
    sys.path.insert(0, str(ROOT))

from a2a_wsgi._serve import ServerHandle, serve  # noqa: E402

#: Operation -> method name per version.
METHODS = {
    "send": {"0.3": "message/send", "1.0": "SendMessage"},
    "stream": {"0.3": "message/stream", "1.0": "SendStreamingMessage"},
    "get": {"0.3": "tasks/get", "1.0": "GetTask"},
    "cancel": {"0.3": "tasks/cancel", "1.0": "CancelTask"},
    "subscribe": {"0.3": "tasks/resubscribe", "1.0": "SubscribeToTask"},
    "list": {"0.3": None, "1.0": "ListTasks"},
    "push_set": {"0.3": "tasks/pushNotificationConfig/set",
                 "1.0": "CreateTaskPushNotificationConfig"},
    "push_get": {"0.3": "tasks/pushNotificationConfig/get",
                 "1.0": "GetTaskPushNotificationConfig"},
    "push_list": {"0.3": "tasks/pushNotificationConfig/list",
                  "1.0": "ListTaskPushNotificationConfigs"},
    "push_delete": {"0.3": "tasks/pushNotificationConfig/delete",
                    "1.0": "DeleteTaskPushNotificationConfig"},
    "extended_card": {"0.3": "agent/getAuthenticatedExtendedCard", "1.0": "GetExtendedAgentCard"},
}

_ids = itertools.count(1)


def user_message(text: str, version: str, *, message_id: str | None = None,
                 task_id: str | None = None, context_id: str | None = None) -> dict[str, Any]:
    """A user message in the wire shape of ``version``."""
    msg: dict[str, Any] = {"messageId": message_id or f"msg-{next(_ids)}"}
    if version == "0.3":
        msg.update(kind="message", role="user", parts=[{"kind": "text", "text": text}])
    else:
        msg.update(role="ROLE_USER", parts=[{"text": text}])
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    return msg


def state_of(task: dict[str, Any]) -> str:
    """A task's state, normalized to the 0.3 spelling ("input-required")."""
    raw = task["status"]["state"]
    if raw.startswith("TASK_STATE_"):
        raw = raw[len("TASK_STATE_"):].lower().replace("_", "-")
    return str(raw)


def texts(parts: list[dict[str, Any]]) -> list[str]:
    return [p["text"] for p in parts if "text" in p]


@dataclass
class SSEEvent:
    data: Any
    id: str | None = None
    event: str | None = None
    raw_lines: list[str] = field(default_factory=list)


def parse_sse(lines: Iterator[str]) -> Iterator[SSEEvent]:
    """Events from decoded SSE lines (comments skipped, multi-line data joined)."""
    current: list[str] = []
    for line in lines:
        if line == "":
            if current:
                yield _event(current)
                current = []
            continue
        if not line.startswith(":"):
            current.append(line)
    if current:
        yield _event(current)


def _event(lines: list[str]) -> SSEEvent:
    data = [ln[5:].lstrip(" ") if ln.startswith("data:") else None for ln in lines]
    fields = {ln.split(":", 1)[0]: ln.split(":", 1)[1].lstrip(" ") for ln in lines}
    payload = "\n".join(d for d in data if d is not None)
    return SSEEvent(json.loads(payload), fields.get("id"), fields.get("event"), lines)


class Peer:
    """One JSON-RPC endpoint, one version; records the last HTTP response."""

    def __init__(self, url: str, version: str = "1.0", session: requests.Session | None = None):
        self.url = url.rstrip("/") + "/"
        self.version = version
        self.session = session or requests.Session()
        self.last: requests.Response | None = None

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.version == "1.0":
            headers["A2A-Version"] = "1.0"
        return {**headers, **(extra or {})}

    def method(self, op: str) -> str:
        name = METHODS[op][self.version]
        assert name is not None, f"{op} has no {self.version} method"
        return name

    def rpc(self, op: str, params: Any = None, *, headers: dict[str, str] | None = None,
            request_id: Any = "req-1") -> dict[str, Any]:
        """POST one call by operation name; the decoded JSON-RPC response object."""
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": self.method(op)}
        if params is not None:
            body["params"] = params
        return self.post(body, headers=headers)

    def post(self, body: Any, *, headers: dict[str, str] | None = None) -> dict[str, Any]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.last = self.session.post(self.url, data=data, headers=self.headers(headers),
                                      timeout=10)
        assert self.last.status_code == 200, self.last.text
        assert self.last.headers["Content-Type"].startswith("application/json")
        return dict(self.last.json())

    def send(self, text: str = "hi", *, blocking: bool = True, **message: Any) -> dict[str, Any]:
        """SendMessage; the unwrapped result (a Task or Message object)."""
        params: dict[str, Any] = {"message": user_message(text, self.version, **message)}
        if not blocking:
            params["configuration"] = ({"blocking": False} if self.version == "0.3"
                                       else {"returnImmediately": True})
        response = self.rpc("send", params)
        assert "result" in response, response
        return unwrap(response["result"], self.version)

    @contextmanager
    def stream(self, op: str, params: Any, *, headers: dict[str, str] | None = None,
               request_id: Any = "stream-1",
               ) -> Iterator[tuple[requests.Response, Iterator[SSEEvent]]]:
        """Open a streaming call; yields (response, events). Leaving the block hangs up."""
        body = {"jsonrpc": "2.0", "id": request_id, "method": self.method(op), "params": params}
        response = self.session.post(self.url, json=body, stream=True, timeout=10,
                                     headers=self.headers({"Accept": "text/event-stream",
                                                           **(headers or {})}))
        try:
            lines = response.iter_lines(chunk_size=1, decode_unicode=True)
            yield response, parse_sse(lines)
        finally:
            response.close()


def unwrap(result: dict[str, Any], version: str) -> dict[str, Any]:
    """The object inside a 1.0 one-of wrapper ({"task": ...}); 0.3 results are bare."""
    if version == "1.0":
        assert len(result) == 1, result
        return dict(next(iter(result.values())))
    return result


@contextmanager
def served(app: Any) -> Iterator[ServerHandle]:
    """``serve(app)`` on an ephemeral port, stopped (and the app's pool closed) afterwards."""
    handle = serve(app, "127.0.0.1:0")
    try:
        yield handle
    finally:
        handle.stop()
        close = getattr(app, "close", None)
        if callable(close):
            close()
