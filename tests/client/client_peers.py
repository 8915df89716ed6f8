"""Bare WSGI peers written by hand: wire JSON typed out, so the client's decoder is
checked against shapes it did not produce itself (both dialects, bare and wrapped).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from werkzeug.wrappers import Request, Response

__all__ = [
    "Call",
    "Err",
    "Peer",
    "card_v03",
    "card_v10",
    "sse",
    "sse_event",
    "task_json",
    "status_json",
]

STATES_0_3 = {
    "TASK_STATE_SUBMITTED": "submitted",
    "TASK_STATE_WORKING": "working",
    "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_AUTH_REQUIRED": "auth-required",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_REJECTED": "rejected",
}


def card_v10(
    url: str, name: str = "Calc Agent", skills: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "description": "test peer",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills
        if skills is not None
        else [{"id": "calc", "name": "Calc", "description": "Adds numbers", "tags": ["math"]}],
    }


def card_v03(
    url: str, name: str = "Calc Agent", skills: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "description": "test peer",
        "version": "1.0.0",
        "protocolVersion": "0.3.0",
        "url": url,
        "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills
        if skills is not None
        else [{"id": "calc", "name": "Calc", "description": "Adds numbers", "tags": ["math"]}],
    }


def _message(text: str, role: str, v03: bool) -> dict[str, Any]:
    if v03:
        return {
            "kind": "message",
            "messageId": "m-" + text[:8],
            "role": role,
            "parts": [{"kind": "text", "text": text}],
        }
    return {"messageId": "m-" + text[:8], "role": "ROLE_" + role.upper(), "parts": [{"text": text}]}


def status_json(state: str, text: str | None = None, *, v03: bool = False) -> dict[str, Any]:
    status: dict[str, Any] = {"state": STATES_0_3[state] if v03 else state}
    if text is not None:
        status["message"] = _message(text, "agent", v03)
    return status


def task_json(
    task_id: str,
    state: str = "TASK_STATE_COMPLETED",
    *,
    output: str | None = None,
    status_text: str | None = None,
    history_text: str | None = None,
    v03: bool = False,
) -> dict[str, Any]:
    """A task in 1.0 shape (or 0.3 with kind tags and lower-case states)."""
    task: dict[str, Any] = {
        "id": task_id,
        "contextId": "ctx-1",
        "status": status_json(state, status_text, v03=v03),
    }
    if output is not None:
        part = {"kind": "text", "text": output} if v03 else {"text": output}
        task["artifacts"] = [{"artifactId": "art-1", "parts": [part]}]
    if history_text is not None:
        task["history"] = [_message("question", "user", v03), _message(history_text, "agent", v03)]
    if v03:
        task["kind"] = "task"
    return task


def sse_event(result: Any, *, request_id: Any = 1, event_id: str | None = None) -> bytes:
    """One SSE event carrying a JSON-RPC success envelope."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})
    return f"{head}data: {body}\n\n".encode()


def sse(chunks: Iterable[bytes], *, fail_after: bool = False) -> Response:
    """A streamed text/event-stream response; ``fail_after`` aborts the connection at the end."""

    def body() -> Iterable[bytes]:
        yield from chunks
        if fail_after:
            raise ConnectionAbortedError("peer drops the connection")

    return Response(body(), mimetype="text/event-stream", headers={"Cache-Control": "no-cache"})


@dataclass
class Call:
    """One request the peer received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None

    @property
    def rpc_method(self) -> str | None:
        return self.body.get("method") if isinstance(self.body, dict) else None

    @property
    def params(self) -> Any:
        return self.body.get("params") if isinstance(self.body, dict) else None


@dataclass
class Err:
    """A handler's JSON-RPC error answer."""

    code: int
    message: str
    data: Any = None
    http_status: int = 200


Handler = Callable[[Call], Any]


@dataclass
class Peer:
    """A scripted agent: a card on GET, and JSON-RPC handlers by method name on POST.

    A handler returns a JSON result, an :class:`Err`, or a ready werkzeug Response.
    Unhandled methods answer -32601. ``gate`` blocks stalling handlers until teardown.
    """

    url: str = ""
    card: Callable[[str], dict[str, Any]] | None = None
    handlers: dict[str, Handler] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    response_headers: dict[str, str] = field(default_factory=dict)
    card_etag: str | None = None
    gate: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.gate.set()

    def rpc_calls(self, method: str | None = None) -> list[Call]:
        return [
            c
            for c in self.calls
            if c.method == "POST" and (method is None or c.rpc_method == method)
        ]

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        request = Request(environ)
        raw = request.get_data()
        call = Call(
            method=request.method,
            path=request.path,
            headers={k.lower(): v for k, v in request.headers.items()},
            body=json.loads(raw) if raw else None,
        )
        self.calls.append(call)
        response = self._card(call) if request.method == "GET" else self._rpc(call)
        response.headers.update(self.response_headers)
        return response(environ, start_response)

    def _card(self, call: Call) -> Response:
        if call.path != "/.well-known/agent-card.json":
            return Response("not here", status=404)
        if self.card_etag is not None and call.headers.get("if-none-match") == self.card_etag:
            return Response(status=304, headers={"ETag": self.card_etag})
        document = (self.card or card_v10)(self.url + "/")
        headers = {"ETag": self.card_etag} if self.card_etag else {}
        return Response(json.dumps(document), mimetype="application/json", headers=headers)

    def _rpc(self, call: Call) -> Response:
        body = call.body or {}
        handler = self.handlers.get(body.get("method", ""))
        out: Any = Err(-32601, "Method not found") if handler is None else handler(call)
        if isinstance(out, Response):
            return out
        if isinstance(out, Err):
            error: dict[str, Any] = {"code": out.code, "message": out.message}
            if out.data is not None:
                error["data"] = out.data
            envelope = {"jsonrpc": "2.0", "id": body.get("id"), "error": error}
            return Response(
                json.dumps(envelope), status=out.http_status, mimetype="application/json"
            )
        envelope = {"jsonrpc": "2.0", "id": body.get("id"), "result": out}
        return Response(json.dumps(envelope), mimetype="application/json")
