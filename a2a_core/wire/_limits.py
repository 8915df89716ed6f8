"""Caps on what a client puts in a request: identifiers, lists and free-form members.

The decoders also read stored tasks and agents' results, which are not held to
these caps (an agent may write a large artifact metadata, a peer may issue long
ids), so the caps are a second pass over the params of a request that has
already decoded. It reads the same members by the same rules (:class:`Fields`,
lowerCamel or snake_case, ``null`` as absent), so a path names the member the
client sent. A value the decoder skipped (the second of two spellings) may have
any type: only strings, lists and objects are measured.

Every cap is a constant of :mod:`._common`; every violation is the usual
:func:`~._common.invalid` error (-32602) naming the member's path.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping
from typing import Any

from .._jsonvalue import JSONValue
from ._common import (
    MAX_AUTH_SCHEMES,
    MAX_EXTENSION_URIS,
    MAX_FILENAME_LENGTH,
    MAX_IDENTIFIER_LENGTH,
    MAX_MEDIA_TYPE_LENGTH,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_OUTPUT_MODES,
    MAX_PAGE_TOKEN_LENGTH,
    MAX_REFERENCE_TASK_IDS,
    MAX_SECRET_LENGTH,
    MAX_URI_LENGTH,
    check_task_id,
    invalid,
    join,
    json_type,
)
from ._derived import derived_limits
from ._fields import Fields

__all__ = ["Limits", "check_request_limits", "check_metadata"]


class Limits(enum.Enum):
    """Which caps a request is held to: an operation's entry names one (:mod:`a2a_core.optable`),
    or none, and its request model's fields decide (:func:`~._derived.derived_limits`)."""

    #: A message (ids, lists, metadata, parts), its configuration, metadata, tenant.
    SEND = "send"
    #: GetTask, CancelTask, SubscribeToTask: metadata and tenant (the id has its own rule).
    TASK_ID = "task id"
    #: The ListTasks filters and page token.
    LIST_TASKS = "list tasks"
    #: A webhook (id, URL, token, authentication).
    PUSH_CONFIG = "push config"
    #: Push-config Get/Delete: the config and task ids.
    PUSH_CONFIG_TARGET = "push config target"
    #: The push-config listing's page token.
    LIST_PUSH_CONFIGS = "list push configs"
    #: Nothing but the tenant.
    TENANT_ONLY = "tenant only"


def check_request_limits(
    limits: Limits | None, params: Mapping[str, JSONValue], path: str, version: str, *,
    max_parts: int, request: type | None = None,
) -> None:
    """Refuse a decoded request whose client-controlled members exceed a cap: the
    operation's own members first (``limits`` None: the caps derived from the ``request``
    model's fields, :func:`~._derived.derived_limits`), then the tenant every request may
    carry. Besides the params, the caps depend on the version and on the part cap."""
    f = Fields(params, path)
    if limits is not None:
        _CHECKS[limits](f, version, max_parts)
    elif request is not None:
        derived_limits(request)(f)
    _tenant(f)


# -- measuring one member ----------------------------------------------------------------


def _length(f: Fields, maximum: int, *names: str) -> None:
    """The first of ``names`` present, when a string, holds at most ``maximum`` characters."""
    path, value = f.find(*names)
    if value is not None:  # (most members are absent: no call for them)
        _string_at(path, value, maximum)


def _string_at(path: str, value: object, maximum: int) -> None:
    if isinstance(value, str) and len(value) > maximum:
        raise invalid(path, f"at most {maximum} characters")


def _list(f: Fields, name: str, count: int, what: str) -> tuple[str, list[Any]]:
    """(path, items) of a list member holding at most ``count`` items; [] when absent."""
    path, value = f.find(name)
    if value is None or not isinstance(value, list):
        return path, []
    if len(value) > count:
        raise invalid(path, f"at most {count} {what}")
    return path, value


def _strings(f: Fields, name: str, count: int, what: str, each: int) -> None:
    """A list of at most ``count`` strings of at most ``each`` characters."""
    path, items = _list(f, name, count, what)
    for index, item in enumerate(items):
        _string_at(f"{path}[{index}]", item, each)


def _nested(f: Fields, *names: str) -> Fields | None:
    """The first of ``names`` present as an object to measure, else None."""
    path, value = f.find(*names)
    return Fields(value, path) if value is not None and isinstance(value, Mapping) else None


def _metadata(f: Fields) -> None:
    path, value = f.find("metadata")
    if value is not None and isinstance(value, Mapping):
        check_metadata(value, path)


def check_metadata(value: Mapping[str, JSONValue], path: str) -> None:
    """A metadata object: at most MAX_METADATA_DEPTH levels and MAX_METADATA_BYTES as JSON.

    Depth first: it is a cheap walk, and it bounds what the encoder then recurses into.
    """
    if _deeper_than(value, MAX_METADATA_DEPTH):
        raise invalid(path, f"at most {MAX_METADATA_DEPTH} levels of nesting")
    encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    if len(encoded.encode("utf-8", "surrogatepass")) > MAX_METADATA_BYTES:
        raise invalid(path, f"at most {MAX_METADATA_BYTES} bytes as JSON")


def _deeper_than(value: Mapping[str, JSONValue], limit: int) -> bool:
    """Whether objects and arrays nest more than ``limit`` levels (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > limit:
            return True
        children = item.values() if isinstance(item, Mapping) else item
        stack.extend((c, level + 1) for c in children if isinstance(c, (Mapping, list)))
    return False


def _tenant(f: Fields) -> None:
    path, value = f.find("tenant")
    if value is None:
        return
    _string_at(path, value, MAX_IDENTIFIER_LENGTH)
    # A tenant names a scope (and a path segment): "", "." and ".." name none, and would
    # read as the parent or the same path to anything that joins it into one.
    if isinstance(value, str) and value.strip() in ("", ".", ".."):
        raise invalid(path, "a tenant is not empty, '.' or '..'")


# -- content -----------------------------------------------------------------------------


def _message(f: Fields, version: str, max_parts: int) -> None:
    """The ids, lists, metadata and parts of a client's message (taskId: the task-id rule)."""
    _length(f, MAX_IDENTIFIER_LENGTH, "messageId")
    _length(f, MAX_IDENTIFIER_LENGTH, "contextId")
    refs_path, refs = _list(f, "referenceTaskIds", MAX_REFERENCE_TASK_IDS, "ids")
    for index, ref in enumerate(refs):
        if isinstance(ref, str):
            check_task_id(ref, f"{refs_path}[{index}]")
    _strings(f, "extensions", MAX_EXTENSION_URIS, "URIs", MAX_URI_LENGTH)
    _metadata(f)
    parts_path, parts = _list(f, "parts", max_parts, "parts")
    for index, part in enumerate(parts):
        if isinstance(part, Mapping):
            _part(Fields(part, f"{parts_path}[{index}]"), version)


def _part(f: Fields, version: str) -> None:
    """Metadata, filename and media type, at the top (1.0) and in a 0.3 ``file``."""
    _metadata(f)
    for holder in (f, _nested(f, "file")):
        if holder is not None:
            _length(holder, MAX_FILENAME_LENGTH, "filename", "name")
            _length(holder, MAX_MEDIA_TYPE_LENGTH, "mediaType", "mimeType")
    if version == "0.3":
        _object_data(f)


def _object_data(f: Fields) -> None:
    """A 0.3 DataPart.data is a JSON object; 1.0's is any google.protobuf.Value."""
    kind = f.string("kind")
    if kind == "data" or (kind is None and f.contains("data")):
        data = f.data.get("data")
        if not isinstance(data, Mapping):
            raise invalid(
                join(f.path, "data"), f"a 0.3 data part holds an object, got {json_type(data)}"
            )


def _configuration(f: Fields) -> None:
    _strings(f, "acceptedOutputModes", MAX_OUTPUT_MODES, "media types", MAX_MEDIA_TYPE_LENGTH)
    for name in ("pushNotificationConfig", "taskPushNotificationConfig"):
        config = _nested(f, name)
        if config is not None:
            _push_config(config)


def _push_config(f: Fields) -> None:
    """A webhook, flat (1.0) or nested under ``pushNotificationConfig`` (0.3)."""
    nested = _nested(f, "pushNotificationConfig")
    if nested is not None:
        _push_config(nested)
        return
    _length(f, MAX_IDENTIFIER_LENGTH, "id")
    _length(f, MAX_URI_LENGTH, "url")
    _length(f, MAX_SECRET_LENGTH, "token")
    auth = _nested(f, "authentication")
    if auth is not None:
        _strings(auth, "schemes", MAX_AUTH_SCHEMES, "schemes", MAX_IDENTIFIER_LENGTH)
        _length(auth, MAX_IDENTIFIER_LENGTH, "scheme")
        _length(auth, MAX_SECRET_LENGTH, "credentials")


# -- one check per operation -------------------------------------------------------------


def _send(f: Fields, version: str, max_parts: int) -> None:
    message = _nested(f, "message")
    if message is not None:
        _message(message, version, max_parts)
    configuration = _nested(f, "configuration")
    if configuration is not None:
        _configuration(configuration)
    _metadata(f)


def _task_id_request(f: Fields, version: str, max_parts: int) -> None:
    """GetTask, CancelTask, SubscribeToTask: the id has its own rule."""
    _metadata(f)


def _list_tasks(f: Fields, version: str, max_parts: int) -> None:
    _length(f, MAX_IDENTIFIER_LENGTH, "contextId")
    _length(f, MAX_PAGE_TOKEN_LENGTH, "pageToken")


def _create_push_config(f: Fields, version: str, max_parts: int) -> None:
    _push_config(f)


def _push_config_target(f: Fields, version: str, max_parts: int) -> None:
    """Get/Delete: ``id`` is the config (1.0) or the task, then held to the task-id rule."""
    _length(f, MAX_IDENTIFIER_LENGTH, "id")
    _length(f, MAX_IDENTIFIER_LENGTH, "pushNotificationConfigId")


def _list_push_configs(f: Fields, version: str, max_parts: int) -> None:
    _length(f, MAX_PAGE_TOKEN_LENGTH, "pageToken")


def _tenant_only(f: Fields, version: str, max_parts: int) -> None:
    """Nothing of the operation's own: the tenant is checked for every request."""


_CHECKS: Mapping[Limits, Callable[[Fields, str, int], None]] = {
    Limits.SEND: _send,
    Limits.TASK_ID: _task_id_request,
    Limits.LIST_TASKS: _list_tasks,
    Limits.PUSH_CONFIG: _create_push_config,
    Limits.PUSH_CONFIG_TARGET: _push_config_target,
    Limits.LIST_PUSH_CONFIGS: _list_push_configs,
    Limits.TENANT_ONLY: _tenant_only,
}
