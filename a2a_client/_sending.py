"""The SendMessageRequest that ``send_message`` and ``stream_message`` put on the wire."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from a2a_core.models import (
    Message,
    PushNotificationConfig,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TextPart,
)

from ._coerce import as_model, as_push_config

__all__ = ["send_request", "user_message"]


def user_message(message: str | Message | Mapping[str, Any], context_id: str | None,
                 task_id: str | None) -> Message:
    """A user message from text (fresh UUID), or the caller's (a model or a plain dict)
    with ids filled in."""
    if isinstance(message, str):
        return Message(
            message_id=str(uuid.uuid4()),
            role=Role.USER,
            parts=(TextPart(text=message),),
            context_id=context_id,
            task_id=task_id,
        )
    if not isinstance(message, Message):
        if not isinstance(message, Mapping):
            raise TypeError(f"message must be a str, a Message or a dict, "
                            f"not {type(message).__name__}")
        message = as_model(Message, message, "message")
    if context_id:
        message = dataclasses.replace(message, context_id=context_id)
    if task_id:
        message = dataclasses.replace(message, task_id=task_id)
    return message


def send_request(
    message: str | Message | Mapping[str, Any],
    *,
    context_id: str | None,
    task_id: str | None,
    blocking: bool,
    history_length: int | None,
    accepted_output_modes: Sequence[str],
    push_notification_config: PushNotificationConfig | Mapping[str, Any] | str | None,
    metadata: Mapping[str, Any] | None,
) -> SendMessageRequest:
    """The request both send_message and stream_message send."""
    if isinstance(accepted_output_modes, str):
        raise TypeError("accepted_output_modes must be a sequence of media types, not a str")
    configuration = SendMessageConfiguration(
        accepted_output_modes=tuple(accepted_output_modes),
        history_length=history_length,
        push_notification_config=None if push_notification_config is None else as_push_config(
            push_notification_config, "push_notification_config"),
        blocking=blocking,
    )
    return SendMessageRequest(
        message=user_message(message, context_id, task_id),
        configuration=configuration,
        metadata=dict(metadata) if metadata else None,
    )
