"""``a2a push set|get|list|delete URL TASK …``: a task's push-notification configs."""

from __future__ import annotations

import argparse

from a2a_core.models import PushNotificationConfig, TaskPushNotificationConfig
from a2a_core.wire import encode

from ._cli_exits import EXIT_OK
from ._cli_output import Output
from ._client import A2AClient

__all__ = ["push_command"]


def _show(out: Output, config: TaskPushNotificationConfig) -> None:
    """One line per config: its id, its webhook, and whether a token is set (never the token)."""
    if out.as_json:
        out.json(encode(config, "1.0"))
        return
    webhook = config.push_notification_config
    token = "  token set" if webhook.token else ""
    out.line(f"{webhook.id or '-'}  {webhook.url}{token}")


def push_command(client: A2AClient, args: argparse.Namespace, out: Output) -> int:
    """Run the ``push`` action named on the command line."""
    action, task_id = args.push_command, args.task_id
    if action == "set":
        webhook = PushNotificationConfig(url=args.webhook, id=args.config_id,
                                         token=args.webhook_token)
        _show(out, client.create_task_push_notification_config(task_id, webhook))
    elif action == "get":
        _show(out, client.get_task_push_notification_config(task_id, args.config_id))
    elif action == "list":
        configs = client.list_task_push_notification_configs(task_id)
        for config in configs:
            _show(out, config)
        if not configs and not out.as_json:
            out.err.write(f"a2a: task {task_id} has no push-notification configs\n")
    else:
        client.delete_task_push_notification_config(task_id, args.config_id)
        if not out.as_json:
            out.line(f"deleted {args.config_id}")
    return EXIT_OK
