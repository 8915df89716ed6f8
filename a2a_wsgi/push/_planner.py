"""What to POST for a task update: the runtime's ``push_planner`` hook.

The runtime calls the planner inside the same save that stores the events, so
the outbox rows it returns are committed with them (a crash loses none). It
must be pure: on a compare-and-set retry it is called again.

Bodies follow the dialect the config was created in:

* **1.0**: one ``StreamResponse`` per event (``{"statusUpdate": …}``,
  ``{"artifactUpdate": …}``), ``Content-Type: application/a2a+json``;
* **0.3**: the ``Task`` as it stands after the update, with ``"kind": "task"``
  (the 0.3 spec's example and the SDK's practice), one per save, as
  ``application/json``.

Credentials are *not* copied into the outbox: the sender reads them from the
config at delivery time, so a deleted config gets nothing more and a secret is
stored once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from a2a_core import wire
from a2a_core._generations import without_generations
from a2a_core.models import StreamEvent, Task, TaskPushNotificationConfig

from ..stores._base import OutboxEntry

__all__ = ["IDEMPOTENCY_HEADER", "PushPlanner", "idempotency_key"]

IDEMPOTENCY_HEADER = "Idempotency-Key"
_CONTENT_TYPES = {"1.0": "application/a2a+json", "0.3": "application/json"}


def idempotency_key(task_id: str, config_id: str, seq: int) -> str:
    """Stable per (task, config, event): every retry of one delivery carries the same key."""
    raw = f"{task_id}\x00{config_id}\x00{seq}".encode()
    return hashlib.sha256(raw).hexdigest()[:32]


class PushPlanner:
    """``planner(task, [(seq, event), ...], configs) -> [OutboxEntry, ...]``."""

    def __init__(self, *, default_version: str = "1.0") -> None:
        self.default_version = default_version

    def __call__(
        self,
        task: Task,
        events: Sequence[tuple[int, StreamEvent]],
        configs: Sequence[TaskPushNotificationConfig],
    ) -> list[OutboxEntry]:
        entries: list[OutboxEntry] = []
        if not events:
            return entries
        for config in configs:
            config_id = config.push_notification_config.id
            if config_id is None:
                continue
            version = config.protocol_version or self.default_version
            if version == "0.3":
                entries.append(self._entry(task.id, config, config_id, events[-1][0],
                                           wire.encode(without_generations(task), "0.3"),
                                           version))
            else:
                entries.extend(
                    self._entry(task.id, config, config_id, seq,
                                wire.encode_stream_event(without_generations(event), "1.0"),
                                version)
                    for seq, event in events
                )
        return entries

    def _entry(self, task_id: str, config: TaskPushNotificationConfig, config_id: str, seq: int,
               payload: dict[str, Any], version: str) -> OutboxEntry:
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        headers = (
            ("Content-Type", _CONTENT_TYPES.get(version, "application/json")),
            (IDEMPOTENCY_HEADER, idempotency_key(task_id, config_id, seq)),
            ("A2A-Version", version),
        )
        return OutboxEntry(task_id=task_id, config_id=config_id, seq=seq,
                           url=config.push_notification_config.url, headers=headers, body=body)
