"""The shipped OpenAPI document of the HTTP+JSON binding: the generator's output, every
route of the proto's google.api.http annotations with its method and body fields, and
exactly the routes the server serves (a2a_core.optable)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from typing import Any

import jsonschema
import pytest
from support.gunicorn import ROOT

from a2a_core.optable import OPERATIONS
from a2a_core.schemas._proto import proto_messages
from a2a_core.schemas._resources import PROTO_1_0, load_text

GENERATOR = ROOT / "scripts" / "generate_openapi.py"
#: Routes the server serves beyond the proto's annotations (the generator says why).
EXTRA = {("POST", "/tasks/{id}:subscribe"), ("POST", "/{tenant}/tasks/{id}:subscribe")}
#: Query parameters the server reads that the proto does not have: GetTask's long-poll of
#: the dev-1.1 preview (served only with that preview on).
PREVIEW_QUERY = {"currentGeneration"}
_RPC = re.compile(r"rpc (\w+)\((\w+)\) returns \(\s*(?:stream\s+)?([\w.]+)\)\s*\{(.*?)\n  \}",
                  re.S)
_RULE = re.compile(r'(get|post|delete|put|patch): "([^"]+)"(?:\s*body: "([^"]*)")?')


def _document() -> dict[str, Any]:
    text = resources.files("a2a_core.schemas").joinpath("a2a-v1.0.openapi.json").read_text()
    document: dict[str, Any] = json.loads(text)
    return document


def _annotations() -> list[tuple[str, str, str, str, str]]:
    """(rpc, input message, HTTP method, path, body) read from the proto's text."""
    rules = []
    for rpc, request, _response, options in _RPC.findall(load_text(PROTO_1_0)):
        for verb, path, body in _RULE.findall(options):
            rules.append((rpc, request, verb.upper(), re.sub(r"=\*\}", "}", path), body))
    return rules


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(method.upper(), path): operation
            for path, methods in document["paths"].items()
            for method, operation in methods.items()}


def _variables(path: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", path))


def test_the_shipped_document_is_the_generators_output() -> None:
    if not (ROOT / "a2a_core").is_dir():
        pytest.skip("the tests run from a copy, outside the checkout (the wheel's check)")
    done = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_every_annotated_route_is_there_with_its_body_fields() -> None:
    operations = _operations(_document())
    messages = proto_messages()
    rules = _annotations()
    assert len(rules) == 22, rules  # (eleven methods, each also below /{tenant})
    assert {(verb, path) for _, _, verb, path, _ in rules} | EXTRA == set(operations)
    for rpc, request, verb, path, body in rules:
        operation = operations[verb, path]
        assert operation["tags"] == [rpc]
        bound = _variables(path)
        fields = {f.json_name for f in messages[request].fields if f.name not in bound}
        path_parameters = {p["name"] for p in operation["parameters"] if p["in"] == "path"}
        assert path_parameters == bound, (verb, path)
        query = {p["name"] for p in operation["parameters"] if p["in"] == "query"}
        if body == "*":
            schema = operation["requestBody"]["content"]["application/json"]["schema"]
            assert set(schema["properties"]) == fields, (verb, path)
            assert query == set()
        else:
            assert body == "" and "requestBody" not in operation
            # (the tenant travels in the path only: ?tenant= is not read)
            assert query == fields - {"tenant"}, (verb, path)


def test_the_document_has_exactly_the_routes_the_server_serves() -> None:
    operations = _operations(_document())
    served = {}
    for op in OPERATIONS:
        for route in op.routes:
            path = "/" + "/".join(route.pattern).replace("{taskId}", "{task_id}")
            for prefixed in (path, "/{tenant}" + path):
                served[route.method, prefixed] = (op.name, route)
    assert set(served) == set(operations)
    for key, (name, route) in served.items():
        operation = operations[key]
        assert operation["tags"] == [name]
        query = {p["name"] for p in operation["parameters"] if p["in"] == "query"}
        assert query == set(route.query) - PREVIEW_QUERY, key


def test_every_schema_in_it_is_a_json_schema() -> None:
    document = _document()
    assert document["openapi"].startswith("3.1.")
    for name, schema in document["components"]["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(schema), name
    for (verb, path), operation in _operations(document).items():
        for parameter in operation["parameters"]:
            jsonschema.Draft202012Validator.check_schema(parameter["schema"])
        assert "200" in operation["responses"], (verb, path)


def test_operation_ids_are_unique_and_every_link_names_one_with_its_parameters() -> None:
    operations = _operations(_document()).values()
    ids = {operation["operationId"]: operation for operation in operations}
    assert len(ids) == len(operations)
    linked = 0
    for operation in operations:
        for link in operation["responses"]["200"].get("links", {}).values():
            target = ids[link["operationId"]]
            names = {p["name"] for p in target["parameters"] if p["in"] == "path"}
            assert set(link["parameters"]) == names, link
            linked += 1
    assert linked == 14  # (SendMessage's five, CreateTaskPushNotificationConfig's two; x2)
