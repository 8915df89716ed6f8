"""Generate the OpenAPI 3.1 document of the HTTP+JSON binding from the vendored 1.0 proto.

    pip install 'googleapis-common-protos==1.76.0' protobuf
    python scripts/generate_openapi.py            # rewrites the shipped file
    python scripts/generate_openapi.py --check    # exit 1 when the shipped file differs

It reads the descriptor set generated from the unmodified proto
(``a2a_core/schemas/_generated/a2a-v1.0.binpb``, scripts/regenerate_grpc.py) and writes
``a2a_core/schemas/a2a-v1.0.openapi.json``:

* a path per ``google.api.http`` rule of the ``A2AService`` methods (the rule and its
  ``additional_bindings``: the ``/{tenant}`` forms), relative to the HTTP+JSON interface's
  URL (the ``url`` of the card's ``HTTP+JSON`` interface is the document's server);
* path parameters from the rule's variables; a ``body: "*"`` rule takes every other field
  of the request message from the JSON body, a rule without a body from the query
  (proto3 JSON names), as google.api.http says;
* one schema per message of ``lf.a2a.v1`` (proto3 JSON: lowerCamel names, enums by name,
  int64 and bytes as strings, the well-known types as their JSON forms), with the
  ``REQUIRED`` fields of ``google.api.field_behavior`` required and a ``oneof`` allowing at
  most one member; the ``*_UNSPECIFIED`` enum values are left out (the server refuses them
  and never sends them);
* the caps the server holds a request to (``a2a_core.wire._common``: identifier, list and
  page lengths), so that a request valid here is one the server accepts;
* answers: 200 with the response message (``text/event-stream`` of ``StreamResponse`` for
  the streaming methods), and the errors the binding sends as ``google.rpc.Status`` bodies
  (docs/serving.md; a2a_core/_rest/_status.py).

The same inputs always write the same bytes; tests/openapi/test_openapi_document.py checks the
shipped file against this script, the proto's annotations and the routes served.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DESCRIPTORS = ROOT / "a2a_core" / "schemas" / "_generated" / "a2a-v1.0.binpb"
OUTPUT = ROOT / "a2a_core" / "schemas" / "a2a-v1.0.openapi.json"
PACKAGE = "lf.a2a.v1"
SERVICE = "A2AService"
#: The media types of JSON bodies, both ways (application/a2a+json is the registered one).
JSON_TYPES = ("application/a2a+json", "application/json")

Schema = dict[str, Any]


#: A task id the server accepts (a2a_core.wire._common.check_task_id): letters, digits and
#: ``._~:@+=-``, not starting with ``.``, no ``..``. (Written without lookaheads, which the
#: generators of test data can only meet by filtering.)
_ID_CHAR = "[A-Za-z0-9_~:@+=-]"
TASK_ID = rf"{_ID_CHAR}+(?:\.{_ID_CHAR}+)*\.?"
#: White space as Python's str.strip and str.split see it: Unicode's, and U+001C-U+001F
#: (which regex engines other than Python's do not count in ``\s``).
_WS = r"[\s\x1c-\x1f]"
#: A tenant the server accepts (a2a_core.wire._limits): not empty, ``.`` or ``..`` once
#: stripped of white space.
NOT_BLANK_TENANT = rf"(?!{_WS}*\.{{0,2}}{_WS}*$)"
#: A path segment the router binds to a variable (a2a_core/_rest/_routes.py): no ``/``,
#: not ``.`` or ``..`` (a client removes those), not ending in a custom method.
NOT_VERB = r"(?!.*:(cancel|subscribe)$)"
SEGMENT = rf"(?!\.{{1,2}}$){NOT_VERB}[^/]+"
#: ``bytes`` as the server reads them (a2a_core.wire._json.decode_bytes): standard or
#: URL-safe base64, padded or not, white space anywhere.
_B64 = rf"{_WS}*[A-Za-z0-9+/_-]"
_PAD = rf"{_WS}*="
BASE64 = (rf"^(?:(?:(?:{_B64}){{4}})+(?:{_PAD})*|(?:(?:{_B64}){{4}})*"
          rf"(?:(?:{_B64}){{2}}(?:{_PAD}){{0,2}}|(?:{_B64}){{3}}(?:{_PAD})?))?{_WS}*$")


def _caps() -> dict[tuple[str, str], Schema]:
    """Extra keywords per (message, JSON field): the caps of a2a_core.wire._limits."""
    sys.path.insert(0, str(ROOT))
    from a2a_core.wire import _common as c

    ident: Schema = {"maxLength": c.MAX_IDENTIFIER_LENGTH}
    task_id: Schema = {"maxLength": c.MAX_TASK_ID_LENGTH, "pattern": f"^{TASK_ID}$"}
    tenant: Schema = {**ident, "pattern": f"^{NOT_BLANK_TENANT}"}
    return {
        ("Message", "messageId"): {**ident, "minLength": 1},
        ("Message", "contextId"): ident,
        # ("" is unset in proto3 JSON)
        ("Message", "taskId"): {**task_id, "pattern": f"^(?:{TASK_ID})?$"},
        ("Message", "parts"): {"minItems": 1, "maxItems": c.MAX_PARTS},
        ("Message", "referenceTaskIds"): {
            "maxItems": c.MAX_REFERENCE_TASK_IDS, "items": task_id},
        ("Message", "extensions"): {
            "maxItems": c.MAX_EXTENSION_URIS, "items": {"maxLength": c.MAX_URI_LENGTH}},
        ("Part", "filename"): {"maxLength": c.MAX_FILENAME_LENGTH},
        ("Part", "mediaType"): {"maxLength": c.MAX_MEDIA_TYPE_LENGTH},
        ("Part", "url"): {"maxLength": c.MAX_URI_LENGTH, "minLength": 1},
        # (a client's message is the user's: an agent's role is refused)
        ("Message", "role"): {"enum": ["ROLE_USER"]},
        ("SendMessageConfiguration", "acceptedOutputModes"): {
            "maxItems": c.MAX_OUTPUT_MODES, "items": {"maxLength": c.MAX_MEDIA_TYPE_LENGTH}},
        ("SendMessageConfiguration", "historyLength"): {
            "minimum": 0, "maximum": c.MAX_HISTORY_LENGTH},
        ("TaskPushNotificationConfig", "id"): ident,
        **{(message, "tenant"): tenant for message in TENANT_MESSAGES},
        ("TaskPushNotificationConfig", "url"): {"maxLength": c.MAX_URI_LENGTH, "format": "uri"},
        ("TaskPushNotificationConfig", "token"): {"maxLength": c.MAX_SECRET_LENGTH},
        # (a2a_wsgi.push._settings: an HTTP token; credentials not blank, no control character)
        ("AuthenticationInfo", "scheme"): {"maxLength": c.MAX_IDENTIFIER_LENGTH,
                                           "pattern": r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"},
        ("AuthenticationInfo", "credentials"): {
            "maxLength": c.MAX_SECRET_LENGTH,
            "pattern": r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"},  # (no _WS)
        ("ListTasksRequest", "contextId"): ident,
        ("ListTasksRequest", "pageSize"): {"minimum": 1, "maximum": 100},
        ("ListTasksRequest", "pageToken"): {"maxLength": c.MAX_PAGE_TOKEN_LENGTH},
        ("ListTasksRequest", "historyLength"): {"minimum": 0, "maximum": c.MAX_HISTORY_LENGTH},
        ("GetTaskRequest", "historyLength"): {"minimum": 0, "maximum": c.MAX_HISTORY_LENGTH},
        # (0 or absent: the server's page size; a larger one is cut to the server's)
        ("ListTaskPushNotificationConfigsRequest", "pageSize"): {"minimum": 0},
        ("ListTaskPushNotificationConfigsRequest", "pageToken"): {
            "maxLength": c.MAX_PAGE_TOKEN_LENGTH},
    }


#: The oneofs the server requires one member of (the proto's comments say so; a part
#: without content is refused).
REQUIRED_ONEOFS = {("Part", "content")}
#: Routes the server serves beyond the proto's annotations (a2a_core.optable): the spec's
#: table says POST for SubscribeToTask, the proto GET; both are served.
EXTRA_RULES = {"SubscribeToTask": ("POST", "*")}

#: Members a client must send though the proto does not require them: the server refuses
#: an authentication scheme without credentials (the Authorization header would be empty).
INPUT_REQUIRED = {("AuthenticationInfo", "credentials")}
#: Members of a nested message the server ignores, whatever they hold: the task and tenant
#: of a push config sent with a message are those of the message's request.
NESTED_IGNORED = {("TaskPushNotificationConfig", "taskId"),
                  ("TaskPushNotificationConfig", "tenant")}

#: The request messages that carry a tenant.
TENANT_MESSAGES = ("SendMessageRequest", "GetTaskRequest", "ListTasksRequest",
                   "CancelTaskRequest", "SubscribeToTaskRequest", "TaskPushNotificationConfig",
                   "GetTaskPushNotificationConfigRequest",
                   "ListTaskPushNotificationConfigsRequest",
                   "DeleteTaskPushNotificationConfigRequest", "GetExtendedAgentCardRequest")


def _path_variable(name: str, *, task_id: bool) -> Schema:
    """A path segment the router binds and the server accepts for that variable."""
    if name == "tenant":
        # (a first segment "tasks" is read as the un-prefixed /tasks/... routes)
        return {"type": "string", "maxLength": 256,
                "pattern": f"^{NOT_BLANK_TENANT}(?!tasks$){SEGMENT}$"}
    if task_id:
        return {"type": "string", "maxLength": 128, "pattern": f"^{NOT_VERB}{TASK_ID}$"}
    return {"type": "string", "maxLength": 256, "pattern": f"^{SEGMENT}$"}


def load() -> Any:
    """The FileDescriptorSet, with google.api's options readable."""
    from google.api import annotations_pb2, field_behavior_pb2  # noqa: F401 (extensions)
    from google.protobuf import descriptor_pb2

    return descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTORS.read_bytes())


def http_rules(fds: Any, *, extras: bool = True) -> list[tuple[Any, str, str, str]]:
    """(method, HTTP verb, path template, body) for every rule of the service, in order;
    with ``extras``, :data:`EXTRA_RULES` beside the rules they extend."""
    from google.api import annotations_pb2

    rules = []
    for file in fds.file:
        if file.package != PACKAGE:
            continue
        for service in file.service:
            if service.name != SERVICE:
                continue
            for method in service.method:
                top = method.options.Extensions[annotations_pb2.http]
                for rule in (top, *top.additional_bindings):
                    verb = rule.WhichOneof("pattern")
                    rules.append((method, verb.upper(), getattr(rule, verb), rule.body))
                    if extras and method.name in EXTRA_RULES:
                        extra_verb, extra_body = EXTRA_RULES[method.name]
                        rules.append((method, extra_verb, getattr(rule, verb), extra_body))
    return rules


def openapi_path(template: str) -> tuple[str, list[str]]:
    """``/tasks/{id=*}:cancel`` -> (``/tasks/{id}:cancel``, [``id``])."""
    out, names, rest = "", [], template
    while "{" in rest:
        head, _, tail = rest.partition("{")
        inner, _, rest = tail.partition("}")
        name, _, segment = inner.partition("=")
        if segment not in ("", "*"):  # pragma: no cover - the proto has none
            raise SystemExit(f"unsupported path segment {inner!r}")
        out += head + "{" + name + "}"
        names.append(name)
    return out + rest, names


class Schemas:
    """Message and enum descriptors -> OpenAPI component schemas (proto3 JSON mapping).

    A message has two schemas. What a client sends (``inputs``, named ``<Message>Input``)
    is what the server accepts: open to members it does not know (it ignores them), each
    optional member may be ``null`` (unset, as in proto3 JSON), with the server's caps.
    What the server answers (``<Message>``) is closed: no member the proto does not have.
    """

    WELL_KNOWN: dict[str, Schema] = {
        ".google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
        ".google.protobuf.Struct": {"type": "object"},
        ".google.protobuf.Value": {},
        ".google.protobuf.ListValue": {"type": "array"},
        ".google.protobuf.Empty": {"type": "object", "maxProperties": 0},
    }

    def __init__(self, fds: Any, components: dict[str, Schema], *, inputs: bool) -> None:
        self.inputs = inputs
        self.messages: dict[str, Any] = {}
        self.enums: dict[str, Any] = {}
        for file in fds.file:
            for message in file.message_type:
                self.messages[f".{file.package}.{message.name}"] = message
            for enum in file.enum_type:
                self.enums[f".{file.package}.{enum.name}"] = enum
        self.caps = _caps() if inputs else {}
        self.components = components

    def ref(self, type_name: str) -> Schema:
        """A reference to a message's schema, generating it (and what it uses) once."""
        if type_name in self.WELL_KNOWN:
            return dict(self.WELL_KNOWN[type_name])
        name = type_name.rsplit(".", 1)[1] + ("Input" if self.inputs else "")
        if name not in self.components:
            self.components[name] = {}  # (a message may refer to itself)
            self.components[name] = self.message(self.messages[type_name], nested=True)
        return {"$ref": f"#/components/schemas/{name}"}

    def message(self, message: Any, *, leave_out: frozenset[str] = frozenset(),
                nested: bool = False) -> Schema:
        """The schema of one message, without the fields named in ``leave_out``; ``nested``
        inside another (not a request's own body)."""
        from google.api import field_behavior_pb2

        properties: dict[str, Schema] = {}
        required: list[str] = []
        oneofs: dict[int, list[str]] = {}
        for field in message.field:
            if field.name in leave_out:
                continue
            schema = self.field(message, field)
            behaviors = field.options.Extensions[field_behavior_pb2.field_behavior]
            key = (message.name, field.json_name)
            if self.inputs and nested and key in NESTED_IGNORED:
                schema = {"description": "ignored by the server"}
            elif field.type_name == ".google.protobuf.Value":
                pass  # (any JSON value, null included: a null Value is set, not absent)
            elif (field_behavior_pb2.REQUIRED in behaviors
                  or (self.inputs and key in INPUT_REQUIRED)):
                required.append(field.json_name)
                if self.inputs and schema.get("type") == "string" and "enum" not in schema:
                    schema.setdefault("minLength", 1)  # ("" is unset in proto3 JSON)
            elif self.inputs:
                schema = {"anyOf": [schema, {"type": "null"}]}
            properties[field.json_name] = schema
            if field.HasField("oneof_index") and not field.proto3_optional:
                oneofs.setdefault(field.oneof_index, []).append(field.json_name)
        schema: Schema = {"type": "object", "properties": properties}
        if not self.inputs:
            schema["additionalProperties"] = False
        if required:
            schema["required"] = required
        for index in list(oneofs):
            if (message.name, message.oneof_decl[index].name) in REQUIRED_ONEOFS:
                schema["oneOf"] = [self.present(properties, member)
                                   for member in oneofs.pop(index)]
        pairs = [(a, b) for members in oneofs.values()
                 for i, a in enumerate(members) for b in members[i + 1:]]
        if pairs:
            # a oneof holds at most one of its members
            schema["not"] = {"anyOf": [self.present(properties, *pair) for pair in pairs]}
        return schema

    def present(self, properties: dict[str, Schema], *names: str) -> Schema:
        """The members are set (for inputs: and not null, which is unset, but for a
        google.protobuf.Value, whose null is a value)."""
        nullable = [name for name in names if self.inputs and properties[name] != {}]
        if not nullable:
            return {"required": list(names)}
        return {"required": list(names),
                "properties": {name: {"not": {"type": "null"}} for name in nullable}}

    def field(self, message: Any, field: Any) -> Schema:
        """One field's schema: its type, repeated or a map, with the server's caps."""
        from google.protobuf.descriptor_pb2 import FieldDescriptorProto as F

        if field.type == F.TYPE_MESSAGE and field.type_name.endswith("Entry"):
            entry = self.map_entry(message, field.type_name)
            if entry is not None:
                value = self.scalar(entry.field[1])
                return {"type": "object", "additionalProperties": value}
        schema = self.scalar(field)
        if field.label == F.LABEL_REPEATED:
            schema = {"type": "array", "items": schema}
        caps = self.caps.get((message.name, field.json_name), {})
        for key, value in caps.items():
            if key == "items":
                schema["items"] = {**schema["items"], **value}
            else:
                schema[key] = value
        return schema

    def map_entry(self, message: Any, type_name: str) -> Any:
        name = type_name.rsplit(".", 1)[1]
        for nested in message.nested_type:
            if nested.name == name and nested.options.map_entry:
                return nested
        return None

    def scalar(self, field: Any) -> Schema:
        from google.protobuf.descriptor_pb2 import FieldDescriptorProto as F

        kind = field.type
        if kind == F.TYPE_MESSAGE:
            return self.ref(field.type_name)
        if kind == F.TYPE_ENUM:
            enum = self.enums[field.type_name]
            names = [v.name for v in enum.value if not v.name.endswith("_UNSPECIFIED")]
            return {"type": "string", "enum": names}
        if kind == F.TYPE_STRING:
            return {"type": "string"}
        if kind == F.TYPE_BYTES:
            return {"type": "string", "contentEncoding": "base64", "pattern": BASE64}
        if kind == F.TYPE_BOOL:
            return {"type": "boolean"}
        if kind in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
            return {"type": "integer", "format": "int32"}
        raise SystemExit(f"field {field.name}: type {kind} has no mapping here")


def _query_schema(schema: Schema) -> Schema:
    """A query parameter's schema: an empty value counts as absent (proto3: "" is unset)."""
    if schema.get("type") == "string" and "pattern" not in schema and "enum" not in schema \
            and "format" not in schema:
        return schema
    return {"anyOf": [schema, {"type": "string", "maxLength": 0}]}


def _status_schema() -> Schema:
    """google.rpc.Status as the binding sends it (AIP-193), under ``error``."""
    return {
        "type": "object", "required": ["error"], "additionalProperties": False,
        "properties": {"error": {
            "type": "object", "required": ["code", "status", "message"],
            "properties": {
                "code": {"type": "integer"},
                "status": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "array", "items": {
                    "type": "object", "required": ["@type"],
                    "properties": {"@type": {"type": "string"}}}},
            },
        }},
    }


#: The errors every route may answer, as the binding sends them (a2a_core/_rest/_status.py):
#: 400 a request it cannot read or a refused value, 404 no such task or route, 405 another
#: method at this path, 409 a task not cancelable, 413 a body past the limit, 415 a form
#: content type, 500 an agent's failure.
ERRORS = {
    "400": "The request is malformed, or a value is refused (InvalidParams, VersionNotSupported, "
           "UnsupportedOperation, ContentTypeNotSupported...)",
    "401": "Authentication is required (the agent card's security schemes)",
    "403": "The caller may not do this",
    "404": "No such task or push notification config (TaskNotFound)",
    "405": "This path serves another method (Allow says which)",
    "409": "The task cannot be canceled in its state (TaskNotCancelable)",
    "413": "The request body is past the server's limit",
    "415": "A browser form content type; send application/a2a+json or application/json",
    "500": "The agent or the server failed (Internal)",
}


#: What a stateful test may chain: an answer's ids into the next request (OpenAPI links).
LINKS: dict[str, dict[str, dict[str, str]]] = {
    "SendMessage": {
        "GetTask": {"id": "$response.body#/task/id"},
        "CancelTask": {"id": "$response.body#/task/id"},
        "SubscribeToTask": {"id": "$response.body#/task/id"},
        "CreateTaskPushNotificationConfig": {"task_id": "$response.body#/task/id"},
        "ListTaskPushNotificationConfigs": {"task_id": "$response.body#/task/id"},
    },
    "CreateTaskPushNotificationConfig": {
        "GetTaskPushNotificationConfig": {"task_id": "$response.body#/taskId",
                                          "id": "$response.body#/id"},
        "DeleteTaskPushNotificationConfig": {"task_id": "$response.body#/taskId",
                                             "id": "$response.body#/id"},
    },
}


def _operation_id(name: str, verb: str, variables: list[str]) -> str:
    """The method's name, ``…WithTenant`` below ``/{tenant}``; an extra rule's verb added
    (``SubscribeToTaskPost``), so that every operation id is unique."""
    extra = EXTRA_RULES.get(name)
    suffix = verb.capitalize() if extra is not None and extra[0] == verb else ""
    return name + suffix + ("WithTenant" if "tenant" in variables else "")


def _link_id(name: str, tenant: bool) -> str:
    return name + ("WithTenant" if tenant else "")


def _json_content(schema: Schema) -> Schema:
    return {media: {"schema": schema} for media in JSON_TYPES}


def build() -> Schema:
    """The whole document."""
    fds = load()
    components: dict[str, Schema] = {}
    schemas = Schemas(fds, components, inputs=False)
    inputs = Schemas(fds, components, inputs=True)
    paths: dict[str, Schema] = {}
    for method, verb, template, body in http_rules(fds):
        path, variables = openapi_path(template)
        request = schemas.messages[method.input_type]
        operation: Schema = {
            "operationId": _operation_id(method.name, verb, variables),
            "tags": [method.name],
            "parameters": [
                {"name": name, "in": "path", "required": True,
                 "schema": _path_variable(name, task_id=name == "task_id" or (
                     name == "id" and "pushNotificationConfigs" not in path))}
                for name in variables],
        }
        bound = frozenset(variables)
        if body == "*":
            operation["requestBody"] = {
                "required": True,
                "content": _json_content(inputs.message(request, leave_out=bound))}
        elif body:  # pragma: no cover - the proto has only "*" bodies
            raise SystemExit(f"{method.name}: body {body!r} is not supported")
        else:
            for field in request.field:
                # (the server reads a tenant from the path only: ?tenant= is ignored)
                if field.name in bound or field.name == "tenant":
                    continue
                operation["parameters"].append({
                    "name": field.json_name, "in": "query", "required": False,
                    "schema": _query_schema(inputs.field(request, field))})
        if method.server_streaming:
            # (OpenAPI 3.2's itemSchema: one Server-Sent Event, its data a StreamResponse)
            event = {"type": "object", "required": ["data"], "properties": {
                "data": {"type": "string", "contentMediaType": "application/json",
                         "contentSchema": schemas.ref(f".{PACKAGE}.StreamResponse")},
                "event": {"type": "string"}, "id": {"type": "string"},
                "retry": {"type": "integer", "minimum": 0}}}
            ok = {"description": "A stream of StreamResponse events (Server-Sent Events, each "
                                 "event's data one JSON object)",
                  "content": {"text/event-stream": {"itemSchema": event}}}
        elif method.output_type == ".google.protobuf.Empty":
            ok = {"description": "Done", "content": _json_content(
                dict(Schemas.WELL_KNOWN[method.output_type]))}
        else:
            ok = {"description": method.output_type.rsplit(".", 1)[1],
                  "content": _json_content(schemas.ref(method.output_type))}
        tenant = "tenant" in variables
        links = {_link_id(target, tenant): {
                     "operationId": _link_id(target, tenant),
                     "parameters": {**values, **({"tenant": "$request.path.tenant"}
                                                 if tenant else {})}}
                 for target, values in LINKS.get(method.name, {}).items()}
        if links:
            ok["links"] = links
        responses: Schema = {"200": ok}
        for code, description in ERRORS.items():
            responses[code] = {"description": description,
                               "content": _json_content({"$ref": "#/components/schemas/Status"})}
        responses["414"] = {
            "description": "The request line is past the HTTP server's limit (4094 bytes "
                           "under a2a serve): that server's own answer",
            "content": {"text/html": {"schema": {"type": "string"}}}}
        operation["responses"] = dict(sorted(responses.items()))
        paths.setdefault(path, {})[verb.lower()] = operation
    components = dict(sorted(components.items()))
    components["Status"] = _status_schema()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "A2A HTTP+JSON binding (protocol 1.0)",
            "version": "1.0",
            "description": (
                "Generated by scripts/generate_openapi.py from the vendored a2a-v1.0.proto's "
                "google.api.http annotations. Paths are relative to the url of the agent "
                "card's HTTP+JSON interface."),
        },
        "servers": [{"url": "/", "description": "the HTTP+JSON interface's URL"}],
        "paths": paths,
        "components": {"schemas": components},
    }


def render() -> str:
    return json.dumps(build(), indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the shipped file instead of writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT.relative_to(ROOT)} differs from the generator's output; run "
                  "python scripts/generate_openapi.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
