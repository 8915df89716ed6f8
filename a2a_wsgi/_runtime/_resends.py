"""Retried sends: which earlier task a repeated new-task request answers (idempotency).

A repeat (same messageId, same request) is a retry only while its task is as its
first send left it: no later user message, not canceled, not refused by a job
queue. A client that lost the answer never learned the task's id, so it cannot
have continued or canceled it; a repeat after that is a new send. Its claim is the
fingerprint chained to the task it supersedes, so its own retries find it in turn.
"""

from __future__ import annotations

from a2a_core._idempotency import request_fingerprint
from a2a_core.models import Role, SendMessageRequest, Task, TaskState

from ..stores import TaskStore
from ._defaults import Scope
from ._queued import never_queued

__all__ = ["sent_before"]

#: How many earlier tasks one repeated request may have superseded (a bound, not a quota).
_MAX_SUPERSEDED = 1000


def sent_before(store: TaskStore, request: SendMessageRequest,
                scope: Scope) -> tuple[Task | None, str]:
    """The task this new-task request already created in ``scope``, if it is one a retry
    should answer; and the key a new task claims the message under."""
    fingerprint = request_fingerprint(request)
    msg = request.message
    if msg.task_id is not None:
        return None, fingerprint
    owner, tenant = scope
    key = fingerprint
    for _ in range(_MAX_SUPERSEDED):
        found = store.find_by_message(msg.message_id, fingerprint=key, owner=owner,
                                      tenant=tenant)
        if found is None or not _moved_on(found):
            return found, key
        key = f"{fingerprint}:{found.id}"
    return None, key


def _moved_on(task: Task) -> bool:
    """Whether the task is no longer as its first send left it (continued, canceled, or
    never run: the job queue refused it)."""
    if task.status.state is TaskState.CANCELED or never_queued(task):
        return True
    return sum(1 for message in task.history if message.role is Role.USER) > 1
