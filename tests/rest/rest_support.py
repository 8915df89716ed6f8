"""Speak HTTP+JSON to a served A2AApp with plain requests, and the agents the tests serve.

Deliberately independent of a2a_client and a2a_core.wire, as support.a2a_http is:
the tests check the server's bytes against hand-written wire shapes.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests
from support.a2a_http import SSEEvent, parse_sse

from a2a_core.models import AgentSkill, Message, TaskState
from a2a_wsgi import Agent, AgentContext, input_required, message, put_identity, reply, stream

__all__ = [
    "INTERNAL_TEXT",
    "Rest",
    "RestAgent",
    "IdentityFromHeader",
    "assert_status",
    "message_json",
]

#: Text in an answer that would mean a Python exception or our internals leaked out.
INTERNAL_TEXT = re.compile(
    r"Traceback|File \"|\.py\b|site-packages|a2a_core|a2a_wsgi|werkzeug|object at 0x|"
    r"\b(?:Value|Key|Type|Attribute|Index|Recursion|Unicode\w*|Runtime|Assertion|Name|"
    r"Lookup|Overflow|JSONDecode)Error\b|Exception"
)
STATUS_NAMES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 500: "INTERNAL"}

#: What a REST answer may be labelled: application/json unless Accept names a2a+json
#: (tests/rest/test_media_type.py checks which is chosen when).
JSON_TYPES = ("application/json", "application/a2a+json")


def message_json(text: str = "hi", *, message_id: str | None = None, **members: Any
                 ) -> dict[str, Any]:
    """A 1.0 user message as JSON."""
    return {"messageId": message_id or f"msg-{uuid.uuid4()}", "role": "ROLE_USER",
            "parts": [{"text": text}], **members}


class RestAgent(Agent):
    """Echoes; "wait" holds WORKING until canceled (10 s at most); "ask" asks for input;
    "direct" answers with a bare message; "count" streams three chunks; "words" emits four
    artifact chunks from its own thread, 0.2 s apart (a stream to resume)."""

    name = "REST Agent"
    description = "Target of the HTTP+JSON tests"
    skills = [AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])]

    def handle_message(self, msg: Message, ctx: AgentContext) -> Any:
        text = msg.text
        if text == "wait":
            ctx.emit_status(TaskState.WORKING, "holding")
            deadline = time.monotonic() + 10
            while not ctx.is_cancelled() and time.monotonic() < deadline:
                time.sleep(0.01)
            return None if ctx.is_cancelled() else reply("released")
        if text == "ask":
            return input_required("Which numbers?")
        if text == "direct":
            return message(f"direct: {text}")
        if text == "count":
            return stream(iter(["one ", "two ", "three"]), artifact_name="counting")
        if text == "words":
            ctx.emit_status(TaskState.WORKING)
            artifact_id = None
            for word in ("one", "two", "three", "four"):
                time.sleep(0.2)
                artifact_id = ctx.emit_artifact(word, artifact_id=artifact_id,
                                                append=artifact_id is not None)
            return None
        return reply(*msg.parts)


class IdentityFromHeader:
    """WSGI middleware: ``X-Test-User`` becomes the caller's identity (test-only auth)."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        user = environ.get("HTTP_X_TEST_USER")
        if user:
            put_identity(environ, user)
        return self.app(environ, start_response)

    def close(self) -> None:
        close = getattr(self.app, "close", None)
        if callable(close):
            close()


class Rest:
    """The HTTP+JSON interface under ``base`` (``http://host:port/rest``)."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        self.base = base.rstrip("/")
        self.headers = {"A2A-Version": "1.0", **(headers or {})}
        self.session = requests.Session()

    def request(self, method: str, path: str, *, body: Any = None, raw: bytes | None = None,
                headers: dict[str, str] | None = None, **options: Any) -> requests.Response:
        sent = dict(self.headers)
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            sent["Content-Type"] = "application/a2a+json"
        sent.update(headers or {})
        return self.session.request(method, self.base + path, data=data, headers=sent,
                                    timeout=options.pop("timeout", 10), **options)

    def ok(self, method: str, path: str, **options: Any) -> Any:
        """A 200 answer's JSON (a JSON media type, A2A-Version 1.0)."""
        response = self.request(method, path, **options)
        assert response.status_code == 200, response.text
        assert response.headers["Content-Type"] in JSON_TYPES
        assert response.headers["A2A-Version"] == "1.0"
        return response.json()

    def send(self, text: str = "hi", *, blocking: bool = True, path: str = "/message:send",
             **members: Any) -> dict[str, Any]:
        """SendMessage; the task (or message) inside the SendMessageResponse."""
        body: dict[str, Any] = {"message": message_json(text, **members)}
        if not blocking:
            body["configuration"] = {"returnImmediately": True}
        answer = self.ok("POST", path, body=body)
        assert len(answer) == 1, answer
        return dict(next(iter(answer.values())))

    @contextmanager
    def stream(self, method: str, path: str, *, body: Any = None,
               headers: dict[str, str] | None = None
               ) -> Iterator[tuple[requests.Response, Iterator[SSEEvent]]]:
        """Open an SSE answer; yields (response, events). Leaving the block hangs up."""
        response = self.request(method, path, body=body, stream=True,
                                headers={"Accept": "text/event-stream", **(headers or {})})
        try:
            yield response, parse_sse(response.iter_lines(chunk_size=1, decode_unicode=True))
        finally:
            response.close()

    def wait_parts(self, task_id: str, count: int) -> None:
        """GetTask until the task's first artifact holds ``count`` parts (5 s at most)."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            artifacts = self.ok("GET", f"/tasks/{task_id}").get("artifacts", [])
            if artifacts and len(artifacts[0]["parts"]) >= count:
                return
            time.sleep(0.01)
        raise AssertionError(f"task {task_id} never had {count} parts")

    def wait_state(self, task_id: str, state: str, *, prefix: str = "") -> dict[str, Any]:
        """GetTask until ``state`` (5 s at most)."""
        deadline = time.monotonic() + 5
        while True:
            task = self.ok("GET", f"{prefix}/tasks/{task_id}")
            if task["status"]["state"] == state or time.monotonic() > deadline:
                return dict(task)
            time.sleep(0.02)


def assert_status(response: requests.Response, status: int, reason: str, *,
                  grpc: str | None = None) -> dict[str, Any]:
    """A ``google.rpc.Status`` answer: the HTTP status, the body's code and status name,
    an ErrorInfo of domain a2a-protocol.org with ``reason`` and string metadata, a
    message, and no internal text. Returns the ``error`` object."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] in JSON_TYPES, response.headers
    assert_no_internal_text(response.text)
    error = response.json()["error"]
    assert set(error) == {"code", "status", "message", "details"}, error
    assert error["code"] == status
    assert error["status"] == (grpc or STATUS_NAMES[status])
    assert isinstance(error["message"], str) and error["message"]
    infos = [d for d in error["details"]
             if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"]
    assert len(infos) == 1, error
    assert infos[0]["reason"] == reason and infos[0]["domain"] == "a2a-protocol.org"
    assert all(isinstance(v, str) for v in infos[0]["metadata"].values()), infos[0]
    return dict(error)


def assert_no_internal_text(text: str) -> None:
    found = INTERNAL_TEXT.search(text)
    assert found is None, f"internal text {found.group()!r} in {text[:300]!r}"
