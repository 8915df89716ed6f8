"""The ceiling: a bare WSGI app doing the least each scenario needs, no framework, no protocol.

    gunicorn -k gthread --threads 16 benchmarks.apps.bare:app

* ``GET /.well-known/agent-card.json``: a precomputed byte string with an
  ETag; ``If-None-Match`` matching it gets 304. The bytes are our own card
  (``BENCH_CARD_FILE``, written by ``run.py``), so the payload is identical.
* ``POST /``: parse the JSON-RPC body, answer a completed task echoing the
  message's parts (ids from ``uuid4``, like a real server), serialised with
  ``json.dumps``; ``"stream N"`` with ``Accept: text/event-stream`` answers
  N + 3 SSE events of the same shapes our server sends.

Nothing here validates, stores or versions anything: it is what a WSGI
server can do at best for the same bytes in and out.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["app"]

_CARD_PATH = "/.well-known/agent-card.json"


def _load_card() -> bytes:
    """Our card's bytes when run.py provides them, else a small stand-in card."""
    path = os.environ.get("BENCH_CARD_FILE")
    if path and os.path.exists(path):
        with open(path, "rb") as handle:
            return handle.read()
    return json.dumps({"name": "Echo Agent", "description": "Answers with the text it is sent",
                       "version": "1.0.0"}, separators=(",", ":")).encode()


CARD = _load_card()
ETAG = '"' + hashlib.sha256(CARD).hexdigest() + '"'
CARD_HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(CARD))),
                ("ETag", ETAG), ("Cache-Control", "public, max-age=300")]
NOT_MODIFIED_HEADERS = [("ETag", ETAG), ("Cache-Control", "public, max-age=300")]


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _event(rpc_id: Any, seq: int, result: dict[str, Any]) -> bytes:
    return b"id: %d\ndata: %s\n\n" % (seq, _dump({"jsonrpc": "2.0", "id": rpc_id,
                                                  "result": result}))


def _stream(rpc_id: Any, message: dict[str, Any], count: int) -> Iterator[bytes]:
    """N + 3 events: the task, working, N artifact chunks, completed."""
    task_id, context_id = uuid.uuid4().hex, uuid.uuid4().hex
    ids = {"taskId": task_id, "contextId": context_id}
    yield _event(rpc_id, 0, {"task": {"id": task_id, "contextId": context_id,
                                      "status": {"state": "TASK_STATE_SUBMITTED"},
                                      "history": [message]}})
    yield _event(rpc_id, 1, {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_WORKING"}}})
    artifact_id = uuid.uuid4().hex
    for index in range(count):
        chunk: dict[str, Any] = {**ids, "artifact": {"artifactId": artifact_id,
                                                     "parts": [{"text": f"chunk {index}"}]}}
        if index:
            chunk["append"] = True
        if index == count - 1:
            chunk["lastChunk"] = True
        yield _event(rpc_id, index + 2, {"artifactUpdate": chunk})
    yield _event(rpc_id, count + 2,
                 {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_COMPLETED"}}})


def _send(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    request = json.loads(environ["wsgi.input"].read(length))
    message = request["params"]["message"]
    text = message["parts"][0].get("text", "")
    if text.startswith("stream ") and "event-stream" in environ.get("HTTP_ACCEPT", ""):
        start_response("200 OK", [("Content-Type", "text/event-stream"),
                                  ("Cache-Control", "no-cache")])
        return _stream(request.get("id"), message, int(text.split()[1]))
    task_id, context_id = uuid.uuid4().hex, uuid.uuid4().hex
    body = _dump({"jsonrpc": "2.0", "id": request.get("id"), "result": {"task": {
        "id": task_id, "contextId": context_id, "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": uuid.uuid4().hex, "parts": message["parts"]}],
        "history": [{**message, "taskId": task_id, "contextId": context_id},
                    {"messageId": uuid.uuid4().hex, "role": "ROLE_AGENT",
                     "parts": message["parts"], "taskId": task_id,
                     "contextId": context_id}]}}})
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Route on method and path; everything else is 404."""
    method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "/")
    if method == "GET" and path == _CARD_PATH:
        if environ.get("HTTP_IF_NONE_MATCH") == ETAG:
            start_response("304 Not Modified", NOT_MODIFIED_HEADERS)
            return [b""]
        start_response("200 OK", CARD_HEADERS)
        return [CARD]
    if method == "POST" and path == "/":
        return _send(environ, start_response)
    start_response("404 Not Found", [("Content-Length", "0")])
    return [b""]
