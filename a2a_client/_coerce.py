"""Plain values where the client's methods take a model: a dict, or a URL for a push config.

A caller who read the A2A spec writes ``{"url": "https://…/hook", "token": "t"}`` rather
than building :class:`~a2a_core.models.PushNotificationConfig`; the wire decoder reads
that dict (either dialect's spelling, which for these members is also the Python one).
Anything else is a :class:`TypeError` that names the type it got, at the call, instead
of an ``AttributeError`` deep inside the encoder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from a2a_core.errors import InvalidParamsError
from a2a_core.models import AgentCard, PushNotificationConfig, TaskPushNotificationConfig
from a2a_core.wire import decode

__all__ = ["as_model", "as_push_config", "as_url_or_card"]

T = TypeVar("T")


def as_model(cls: type[T], value: object, name: str) -> T:
    """``value`` as a ``cls``: itself, or decoded from a mapping.

    :raises TypeError: ``value`` is neither (the message names both types).
    :raises ValueError: the mapping does not describe a ``cls`` (the message says where).
    """
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        try:
            return decode(cls, dict(value), path=name)
        except InvalidParamsError as exc:
            raise ValueError(f"{name}: not a valid {cls.__name__}: {exc.message}") from None
    raise TypeError(f"{name} must be a {cls.__name__} or a dict, not {type(value).__name__}")


def as_push_config(value: Any, name: str = "config") -> PushNotificationConfig:
    """A push config from a model, a dict, a TaskPushNotificationConfig, or a webhook URL."""
    if isinstance(value, str):
        return PushNotificationConfig(url=value)
    if isinstance(value, TaskPushNotificationConfig):
        return value.push_notification_config
    if isinstance(value, (PushNotificationConfig, Mapping)):
        return as_model(PushNotificationConfig, value, name)
    raise TypeError(f"{name} must be a PushNotificationConfig, a dict or a URL string, "
                    f"not {type(value).__name__}")


def as_url_or_card(value: object) -> str | AgentCard:
    """What ``A2AClient`` is pointed at: a URL, a card, or the card's JSON as a dict."""
    if isinstance(value, (str, AgentCard)):
        return value
    if isinstance(value, Mapping):
        return as_model(AgentCard, value, "url_or_card")
    raise TypeError("url_or_card must be a URL string, an AgentCard or a dict, "
                    f"not {type(value).__name__}")
