"""The common shape of SendMessage params, decoded and held to its caps in one pass.

:func:`~a2a_core.wire.decode_params` reads a request in two passes: the tolerant
decoder (both dialects, both spellings, ``null`` as absent; :mod:`._decode`), then
the caps (:mod:`._limits`), each looking every member up by name. Most sends have
one plain shape: a message of text parts, maybe a configuration without a webhook,
metadata, a tenant, every member spelled in lowerCamel. :func:`quick_send_request`
reads that shape in one walk over the members present and returns the request the
two passes would return. It never refuses anything: a member it does not know, a
spelling or value kind it does not take, or a value the caps or the decoder would
refuse, and it returns None, so the params take the two passes and any error is
worded and placed as ever. ``tests/core/test_wire_quick.py`` compares both ways
on generated params.
"""

from __future__ import annotations

from collections.abc import Mapping

from .._jsonvalue import JSONObject, JSONValue
from ..errors import InvalidParamsError
from ..models import Message, Role, SendMessageConfiguration, SendMessageRequest, TextPart
from ._common import (
    MAX_HISTORY_LENGTH,
    MAX_IDENTIFIER_LENGTH,
    MAX_MEDIA_TYPE_LENGTH,
    MAX_OUTPUT_MODES,
    check_task_id,
)
from ._enums import parse_role
from ._limits import check_metadata

__all__ = ["quick_send_request"]

#: The role spellings taken here, read by the decoder's own rule (any other: the long way).
_ROLES: Mapping[str, Role] = {
    spelling: parse_role(spelling, "role")
    for spelling in ("ROLE_USER", "ROLE_AGENT", "user", "agent", "USER", "AGENT")
}
_TENANTS_REFUSED = ("", ".", "..")


def quick_send_request(
    params: Mapping[str, JSONValue], max_parts: int
) -> SendMessageRequest | None:
    """``params`` as the SendMessageRequest both passes make of it, or None: take them."""
    if params.__class__ is not dict:
        return None
    message = configuration = metadata = tenant = None
    for name, value in params.items():
        if value is None:  # null is absent
            continue
        if name == "message":
            message = _message(value, max_parts)
            if message is None:
                return None
        elif name == "configuration":
            configuration = _configuration(value)
            if configuration is None:
                return None
        elif name == "metadata":
            metadata = _struct(value)
            if metadata is None:
                return None
        elif name == "tenant":
            if (value.__class__ is not str or len(value) > MAX_IDENTIFIER_LENGTH
                    or value.strip() in _TENANTS_REFUSED):
                return None
            tenant = value
        else:
            return None
    if message is None:
        return None
    return SendMessageRequest(message=message, configuration=configuration, metadata=metadata,
                              tenant=tenant)


def _message(data: object, max_parts: int) -> Message | None:
    if data.__class__ is not dict:
        return None
    message_id = role = context_id = task_id = metadata = None
    parts: tuple[TextPart, ...] | None = None
    for name, value in data.items():
        if value is None:
            continue
        if name == "messageId":
            if value.__class__ is not str or not value or len(value) > MAX_IDENTIFIER_LENGTH:
                return None
            message_id = value
        elif name == "role":
            role = _ROLES.get(value) if value.__class__ is str else None
            if role is None:
                return None
        elif name == "parts":
            if value.__class__ is not list or not value or len(value) > max_parts:
                return None
            decoded: list[TextPart] = []
            for item in value:
                part = _text_part(item)
                if part is None:
                    return None
                decoded.append(part)
            parts = tuple(decoded)
        elif name == "contextId":
            if value.__class__ is not str or len(value) > MAX_IDENTIFIER_LENGTH:
                return None
            context_id = value or None
        elif name == "taskId":
            if value.__class__ is not str:
                return None
            if value:
                try:
                    check_task_id(value, "")
                except InvalidParamsError:
                    return None
            task_id = value or None
        elif name in ("referenceTaskIds", "extensions"):
            if value.__class__ is not list or value:  # only an empty list is read here
                return None
        elif name == "metadata":
            metadata = _struct(value)
            if metadata is None:
                return None
        elif name != "kind" or value != "message":
            return None
    if message_id is None or role is None or parts is None:
        return None
    return Message(message_id=message_id, role=role, parts=parts, context_id=context_id,
                   task_id=task_id, metadata=metadata)


def _text_part(data: object) -> TextPart | None:
    """A text part, 1.0 (``{"text"}``) or 0.3 (``{"kind": "text", "text"}``)."""
    if data.__class__ is not dict:
        return None
    text = media_type = metadata = None
    for name, value in data.items():
        if value is None:
            if name == "mediaType" or name == "metadata":
                continue  # null is absent
            return None  # a null content member ("data": null) still counts as one
        if name == "text":
            if value.__class__ is not str:
                return None
            text = value
        elif name == "mediaType":
            if value.__class__ is not str or len(value) > MAX_MEDIA_TYPE_LENGTH:
                return None
            media_type = value or None
        elif name == "metadata":
            metadata = _struct(value)
            if metadata is None:
                return None
        elif name != "kind" or (value != "text" and value != ""):  # "": inferred from text
            return None
    if text is None:
        return None
    return TextPart(text=text, media_type=media_type, metadata=metadata)


def _configuration(data: object) -> SendMessageConfiguration | None:
    """Output modes, blocking or returnImmediately, history length: no webhook."""
    if data.__class__ is not dict:
        return None
    modes: tuple[str, ...] = ()
    history = blocking = immediately = None
    for name, value in data.items():
        if value is None:
            continue
        if name == "acceptedOutputModes":
            if value.__class__ is not list or len(value) > MAX_OUTPUT_MODES:
                return None
            for mode in value:
                if mode.__class__ is not str or len(mode) > MAX_MEDIA_TYPE_LENGTH:
                    return None
            modes = tuple(value)
        elif name == "blocking":
            if value.__class__ is not bool:
                return None
            blocking = value
        elif name == "returnImmediately":
            if value.__class__ is not bool:
                return None
            immediately = value
        elif name == "historyLength":
            if value.__class__ is not int or not 0 <= value <= MAX_HISTORY_LENGTH:
                return None
            history = value
        else:
            return None
    return SendMessageConfiguration(
        accepted_output_modes=modes, history_length=history,
        blocking=blocking if blocking is not None else not immediately,
    )


def _struct(value: object) -> JSONObject | None:
    """A metadata object within its caps, copied as the decoder copies it."""
    if value.__class__ is not dict:
        return None
    if value:  # {} is within every cap
        try:
            check_metadata(value, "metadata")
        except InvalidParamsError:
            return None
    return dict(value)
