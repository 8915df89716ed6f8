"""Push-notification configs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field

from ._base import _model


@_model
class AuthenticationInfo:
    """Credentials the server sends to a webhook as ``Authorization: <scheme> <credentials>``.

    0.3 lists several ``schemes``; 1.0 has one ``scheme``. We keep the list; the
    1.0 codec sends its first entry.
    """

    schemes: Sequence[str]
    credentials: str | None = None


@_model
class PushNotificationConfig:
    url: str
    id: str | None = None
    token: str | None = None
    authentication: AuthenticationInfo | None = None


@_model
class TaskPushNotificationConfig:
    """``protocol_version`` is the dialect the config was created in ("0.3"/"1.0"):
    the server sends that dialect's payload to it. Server bookkeeping: never on the
    wire, and not part of equality."""

    task_id: str
    push_notification_config: PushNotificationConfig
    tenant: str | None = None
    protocol_version: str | None = field(default=None, compare=False)
