"""Push notification configs of tasks: stored checked and stamped, answered redacted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from a2a_core.errors import TaskNotFoundError
from a2a_core.models import PushNotificationConfig, TaskPushNotificationConfig

from ..push._settings import PushSettings, redact
from ..stores import PushStore

__all__ = ["PushConfigs"]


def _not_found(task_id: str, config_id: str | None) -> TaskNotFoundError:
    return TaskNotFoundError(
        f"Push notification config {config_id} not found for task {task_id}"
    )


class PushConfigs:
    """The store's push configs as the A2A operations see them (the task is checked first)."""

    def __init__(self, store: PushStore, settings: PushSettings | None,
                 new_id: Callable[[str], str]) -> None:
        self._store, self._new_id = store, new_id
        #: Checks (SSRF, header injection, cap) and stamps configs; None: stored as given.
        self.settings = settings

    def check(self, config: PushNotificationConfig, version: str) -> None:
        """-32602 for a config push delivery would refuse, before anything is written."""
        if self.settings is not None:
            self.settings.prepare(
                TaskPushNotificationConfig(task_id="", push_notification_config=config), version)

    def put(self, task_id: str, config: PushNotificationConfig, tenant: str | None,
            version: str) -> TaskPushNotificationConfig:
        """Store a config, checked and stamped with its dialect when push delivery is on."""
        if config.id is None:
            config = replace(config, id=self._new_id("pcfg"))
        stored = TaskPushNotificationConfig(task_id=task_id, push_notification_config=config,
                                            tenant=tenant, protocol_version=version)
        if self.settings is not None:
            stored = self.settings.prepare(stored, version, self._store.list_push_configs(task_id))
        self._store.put_push_config(stored)
        return stored

    def shown(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """A config as answered to callers: credentials are write-only when push is on."""
        return redact(config) if self.settings is not None else config

    def get(self, task_id: str, config_id: str | None) -> TaskPushNotificationConfig:
        """Without a config id (0.3 style) the task's first config is answered."""
        if config_id is None:
            configs = self._store.list_push_configs(task_id)
            found = configs[0] if configs else None
        else:
            found = self._store.get_push_config(task_id, config_id)
        if found is None:
            raise _not_found(task_id, config_id)
        return self.shown(found)

    def list(self, task_id: str) -> list[TaskPushNotificationConfig]:
        return [self.shown(c) for c in self._store.list_push_configs(task_id)]

    def delete(self, task_id: str, config_id: str) -> None:
        """Idempotent, as the spec requires: a config that is already gone is not an error.

        The caller has checked that the task exists and is visible to the caller.
        """
        self._store.delete_push_config(task_id, config_id)
