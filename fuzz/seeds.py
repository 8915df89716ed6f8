"""Write the seed corpora (``fuzz/corpus/<target>/``) from the vendored schemas and the tests'
fixtures: ``python fuzz/seeds.py``. The files are kept in the repository; run this again
when the schemas change.

From the schemas (a2a_core/schemas): one instance per definition a parser reads, with every
property filled (:func:`instance`): the params of each operation in both dialects as
JSON-RPC requests and HTTP+JSON requests, the results as responses and stream events, the
agent card. From the fixtures (tests/fixtures/signed_before_pyjwt.json): signed cards, their
key set and JWTs. A few hand-written lines for the headers, push URLs and Last-Event-ID.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from typing import Any

from _harness import CORPUS, HERE

from a2a_core.optable import OPERATIONS
from a2a_core.schemas._check import _bundle_1_0
from a2a_core.schemas._resources import load_json

_DEPTH = 6


def instance(node: Any, definitions: dict[str, Any], depth: int = 0) -> Any:
    """A value of the schema ``node`` with every property present (refs resolved, the first
    branch of a choice, one item per array), down to a fixed depth."""
    if not isinstance(node, dict):
        return None
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return instance(definitions[name], definitions, depth + 1) if depth < _DEPTH else {}
    for choice in ("oneOf", "anyOf"):
        if node.get(choice):
            return instance(node[choice][0], definitions, depth)
    if "allOf" in node:
        merged: dict[str, Any] = {}
        for part in node["allOf"]:
            value = instance(part, definitions, depth)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][-1]
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        return {key: instance(value, definitions, depth + 1) for key, value in props.items()}
    if kind == "array":
        return [instance(node.get("items", {}), definitions, depth + 1)]
    if kind == "string":
        if node.get("format") == "date-time":
            return "2026-01-01T00:00:00Z"
        return "c3Vu" if node.get("contentEncoding") == "base64" else "t-1"
    if kind == "integer":
        return 3
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    return "x"


def _defs_0_3() -> dict[str, Any]:
    return dict(load_json("a2a-v0.3.schema.json")["definitions"])


def _defs_1_0() -> tuple[dict[str, Any], dict[str, str]]:
    return _bundle_1_0()


def of(name: str, version: str) -> Any:
    """An instance of definition ``name`` (1.0: its unspaced or spaced title)."""
    if version == "0.3":
        definitions = _defs_0_3()
        return instance(definitions[name], definitions)
    definitions, titles = _defs_1_0()
    return instance(definitions[titles[name.replace(" ", "")]], definitions)


def _params_0_3() -> dict[str, Any]:
    """0.3 method -> an instance of its params, from the request definitions' ``method``."""
    definitions = _defs_0_3()
    found = {}
    for node in definitions.values():
        props = node.get("properties", {})
        method = props.get("method", {}).get("const")
        if method and "params" in props:
            found[method] = instance(props["params"], definitions)
    return found


#: Valid shapes the schema walk does not produce (its enums and oneOfs pick one branch).
TASK_1_0 = {"id": "t-1", "contextId": "c-1", "status": {
    "state": "TASK_STATE_WORKING", "timestamp": "2026-01-01T00:00:00Z",
    "message": {"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}},
    "artifacts": [{"artifactId": "a-1", "parts": [{"text": "x"}, {"data": {"k": [1, 2.5]}},
                                                  {"url": "https://f.example/x",
                                                   "mediaType": "text/plain"}]}],
    "history": [{"messageId": "m-0", "role": "ROLE_USER", "parts": [{"raw": "aGk="}],
                 "contextId": "c-1", "taskId": "t-1", "metadata": {"a": None}}],
    "metadata": {"generation": 2}}
TASK_0_3 = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {
    "state": "input-required", "message": {"kind": "message", "messageId": "m-1",
                                           "role": "agent",
                                           "parts": [{"kind": "text", "text": "hi"}]}},
    "artifacts": [{"artifactId": "a-1", "parts": [
        {"kind": "file", "file": {"uri": "https://f.example/x", "mimeType": "text/plain"}},
        {"kind": "data", "data": {"k": 1}}]}]}
SEND_1_0 = {"message": TASK_1_0["history"][0],  # type: ignore[index]
            "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 2,
                              "returnImmediately": True}}
SEND_0_3 = {"message": TASK_0_3["status"]["message"],  # type: ignore[index]
            "configuration": {"blocking": False, "historyLength": 2}}


def _rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _ok(result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": result}


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def jsonrpc() -> Iterator[bytes]:
    yield _dump(_rpc("SendMessage", SEND_1_0))
    yield _dump(_rpc("message/send", SEND_0_3))
    yield _dump(_rpc("tasks/get", {"id": "t-1", "historyLength": 1}))
    yield _dump(_ok(TASK_1_0))
    yield _dump(_ok(TASK_0_3))
    yield _dump(_ok({"task": TASK_1_0}))
    params_0_3 = _params_0_3()
    for op in OPERATIONS:
        yield _dump(_rpc(op.name, of(op.request.__name__, "1.0")))
        if op.name_0_3 in params_0_3:
            yield _dump(_rpc(op.name_0_3, params_0_3[op.name_0_3]))
    for name in ("Task", "Message", "Send Message Response", "List Tasks Response",
                 "Task Push Notification Config", "Agent Card",
                 "List Task Push Notification Configs Response"):
        yield _dump(_ok(of(name, "1.0")))
    for name in ("SendMessageSuccessResponse", "GetTaskSuccessResponse",
                 "SendStreamingMessageSuccessResponse", "JSONRPCErrorResponse",
                 "ListTaskPushNotificationConfigSuccessResponse"):
        yield _dump(of(name, "0.3"))


def rest() -> Iterator[bytes]:
    yield b"POST /message:send\napplication/json\n\n" + _dump(SEND_1_0)
    yield b"GET /tasks?status=TASK_STATE_WORKING&pageSize=5&includeArtifacts=true\n\n"
    for op in OPERATIONS:
        body = _dump(of(op.request.__name__, "1.0"))
        for route in op.routes:
            path = "/".join(seg.replace("{id}", "t-1").replace("{taskId}", "t-1")
                            for seg in route.pattern)
            query = "&".join(f"{name}=1" for name in route.query)
            target = f"/{path}?{query}" if query else f"/{path}"
            yield f"{route.method} {target}\napplication/json\n\n".encode() + (
                body if route.body else b"")
            yield f"{route.method} /tenant-a{target}\napplication/a2a+json\n\n".encode()
    yield _dump({"error": {"code": 404, "status": "NOT_FOUND", "message": "no task",
                           "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                        "reason": "TASK_NOT_FOUND", "domain": "a2a"}]}})


def _fixture() -> Any:
    return json.loads((HERE.parent / "tests" / "fixtures" / "signed_before_pyjwt.json")
                      .read_text("utf-8"))


def card() -> Iterator[bytes]:
    yield _dump(of("Agent Card", "1.0"))
    yield _dump(of("AgentCard", "0.3"))
    yield from (_dump(c) for c in _fixture()["cards"].values())


def signed_card() -> Iterator[bytes]:
    fixture = _fixture()
    yield from (_dump(c) for c in fixture["cards"].values())
    yield _dump(fixture["card_jwks"])
    yield from (token.encode() for token in fixture["jwt"]["tokens"].values())
    yield from (push["jwt"].encode() for push in fixture["pushes"])


def client_sse() -> Iterator[bytes]:
    events_1_0 = [of(name, "1.0") for name in ("Task", "Task Status Update Event",
                                                 "Task Artifact Update Event", "Message")]
    yield b"\x0cid: 1\ndata: " + _dump(_ok({"task": TASK_1_0})) + b"\n\n"
    yield b"\x02data: " + _dump(_ok(TASK_0_3)) + b"\n\n"
    yield b"\x03data: " + _dump({"task": TASK_1_0}) + b"\n\n"
    wrapped = [{"task": events_1_0[0]}, {"statusUpdate": events_1_0[1]},
               {"artifactUpdate": events_1_0[2]}, {"message": events_1_0[3]}]
    events_0_3 = [of("SendStreamingMessageSuccessResponse", "0.3")]
    rpc = b"".join(b"id: %d\ndata: %s\n\n" % (i, _dump(_ok(e))) for i, e in enumerate(wrapped))
    yield b"\x0e" + rpc
    yield b"\x00" + b"".join(b"data: " + _dump(e) + b"\n\n" for e in events_0_3)
    yield b"\x0b" + b"".join(b"data: " + _dump(e) + b"\n\r\n" for e in wrapped)
    yield b"\x13: hello\r\nretry: 10\r\nevent: x\r\ndata: {\"error\": {\"code\": 404}}\r\n\r\n"
    yield b"\x20" + b"data: " + _dump({"jsonrpc": "2.0", "id": 1,
                                       "error": {"code": -32001, "message": "gone"}}) + b"\n\n"


def push_url() -> Iterator[bytes]:
    yield b"https://hooks.example/a2a?x=1\n93.184.216.34"
    yield b"http://hooks.example:8080/\n93.184.216.34\n2606:2800:220:1::1"
    yield b"http://127.0.0.1:9000/hook"
    yield b"http://[::ffff:169.254.169.254]/\n"
    yield b"https://user:pw@hooks.example/\n10.0.0.1"
    yield b"http://0x7f.1/\n127.0.0.1"


def headers() -> Iterator[bytes]:
    yield b"1.0\n\nhttps://a2a-protocol.org/extensions/timestamp/v1"
    yield b"0.3\n1.0\nurn:a, urn:b\nurn:b,urn:c"
    yield b"\n0.3"
    yield b"v1.0.2\n"


def last_event_id() -> Iterator[bytes]:
    yield from (b"0", b"12", b" 7 ", b"abc", b"", b"9223372036854775807")


SEEDS = {"jsonrpc": jsonrpc, "rest": rest, "card": card, "signed_card": signed_card,
         "client_sse": client_sse, "push_url": push_url, "headers": headers,
         "last_event_id": last_event_id}


def main() -> None:
    for target, make in SEEDS.items():
        folder = CORPUS / target
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for data in make():
            (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
        print(f"{target}: {len(list(folder.iterdir()))} seeds")


if __name__ == "__main__":
    main()
