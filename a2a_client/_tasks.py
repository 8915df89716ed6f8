"""The task operations of :class:`~a2a_client.A2AClient`: get, cancel, list, wait, push configs.

A mixin, so that ``client.py`` keeps discovery, the binding, sending and streaming. Each
operation here is the same small step (a request model in, the decoded answer out,
through the client's ``_call``), except the two listings, which follow page tokens, and
:meth:`~TaskOperations.wait`, which takes the fastest path the agent offers
(:mod:`a2a_client._waiting`).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, TypeVar

from a2a_core.errors import RemoteProtocolError
from a2a_core.models import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    ListTasksResponse,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a_core.optable import Operation, OperationSpec

from ._coerce import as_model, as_push_config
from ._polling import DEFAULT_LATENESS, DEFAULT_POLL_EVERY, DEFAULT_WAIT_TIMEOUT, wait_for_task
from ._rpc import TimeoutLike
from ._waiting import LongPoll, Subscribe, wait_until_settled

__all__ = ["TaskOperations"]

Req = TypeVar("Req")
Res = TypeVar("Res")


class TaskOperations:
    """GetTask, CancelTask, ListTasks, polling, and the push-notification-config operations."""

    def _call(
        self, op: OperationSpec[Req, Res], request: Req, timeout: TimeoutLike | None = None
    ) -> Res:
        """One call, decoded into the operation's result model; the client supplies it."""
        raise NotImplementedError

    def _wait_paths(self, history_length: int | None) -> tuple[LongPoll | None, Subscribe | None]:
        """The long-poll and stream paths this agent offers (None: it does not)."""
        return None, None

    # -- tasks ----------------------------------------------------------------------------

    def get_task(
        self, task_id: str, *, history_length: int | None = None, timeout: TimeoutLike | None = None
    ) -> Task:
        """GetTask (``tasks/get``)."""
        request = GetTaskRequest(id=task_id, history_length=history_length)
        return self._call(Operation.GET_TASK, request, timeout)

    def cancel_task(
        self,
        task_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        timeout: TimeoutLike | None = None,
    ) -> Task:
        """CancelTask (``tasks/cancel``)."""
        request = CancelTaskRequest(id=task_id, metadata=dict(metadata) if metadata else None)
        return self._call(Operation.CANCEL_TASK, request, timeout)

    def list_tasks_page(
        self, request: ListTasksRequest | Mapping[str, Any] | None = None
    ) -> ListTasksResponse:
        """One ListTasks page, for callers who manage ``page_token`` themselves.

        ``request`` may be a plain dict in the spec's spelling (``{"pageSize": 10}``).
        """
        request = ListTasksRequest() if request is None else as_model(
            ListTasksRequest, request, "request")
        return self._call(Operation.LIST_TASKS, request)

    def list_tasks(
        self,
        *,
        context_id: str | None = None,
        status: TaskState | None = None,
        page_size: int | None = None,
        history_length: int | None = None,
        status_timestamp_after: datetime | None = None,
        include_artifacts: bool = False,
    ) -> Iterator[Task]:
        """ListTasks across every page, lazily (each page is fetched when needed)."""
        request = ListTasksRequest(
            context_id=context_id,
            status=status,
            page_size=page_size,
            history_length=history_length,
            status_timestamp_after=status_timestamp_after,
            include_artifacts=include_artifacts,
        )
        seen_tokens: set[str] = set()
        while True:
            page = self.list_tasks_page(request)
            yield from page.tasks
            token = page.next_page_token
            if not token:
                return
            if token in seen_tokens:
                raise RemoteProtocolError(f"ListTasks returned page token {token!r} twice")
            seen_tokens.add(token)
            request = dataclasses.replace(request, page_token=token)

    # -- polling --------------------------------------------------------------------------

    def wait(
        self,
        task_id: str,
        *,
        poll_every: float = DEFAULT_POLL_EVERY,
        timeout: float = DEFAULT_WAIT_TIMEOUT,
        backoff: float = 1.5,
        max_interval: float = 10.0,
        lateness: float = DEFAULT_LATENESS,
        history_length: int | None = None,
        on_update: Callable[[Task, float], None] | None = None,
        cancel: threading.Event | None = None,
        first: Task | None = None,
    ) -> Task:
        """Wait until the task is terminal or interrupted (input/auth required).

        Long-polls GetTask when the agent serves task generations, else follows a
        SubscribeToTask stream when the card declares streaming, else polls GetTask
        (``poll_every``, ``backoff``, ``max_interval`` and ``lateness`` shape only that).

        :raises WaitTimeout: ``timeout`` seconds passed first; the remote task keeps
            running (cancel it with :meth:`cancel_task` if you no longer want it).
        """
        def get_task() -> Task:
            return self.get_task(task_id, history_length=history_length)

        long_poll, subscribe = self._wait_paths(history_length)
        poll = functools.partial(wait_for_task, get_task, poll_every=poll_every,
                                 backoff=backoff, max_interval=max_interval, lateness=lateness)
        return wait_until_settled(
            task_id,
            get_task,
            first=first,
            subscribe=subscribe,
            long_poll=long_poll,
            poll=poll,
            timeout=timeout,
            on_update=on_update,
            cancel=cancel,
        )

    # -- push notification configs --------------------------------------------------------

    def create_task_push_notification_config(
        self, task_id: str, config: PushNotificationConfig | Mapping[str, Any] | str
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig (``tasks/pushNotificationConfig/set``).

        ``config`` is a model, a plain dict (``{"url": …, "token": …}``) or the webhook URL.
        """
        request = TaskPushNotificationConfig(task_id=task_id,
                                             push_notification_config=as_push_config(config))
        return self._call(Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG, request)

    def get_task_push_notification_config(
        self, task_id: str, config_id: str | None = None
    ) -> TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig (``tasks/pushNotificationConfig/get``)."""
        request = GetTaskPushNotificationConfigRequest(task_id=task_id, config_id=config_id)
        return self._call(Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG, request)

    def list_task_push_notification_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """ListTaskPushNotificationConfigs, every page (0.3 answers a bare array)."""
        request = ListTaskPushNotificationConfigsRequest(task_id=task_id)
        configs: list[TaskPushNotificationConfig] = []
        while True:
            result = self._call(Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS, request)
            configs.extend(result.configs)
            if not result.next_page_token or result.next_page_token == request.page_token:
                return configs
            request = dataclasses.replace(request, page_token=result.next_page_token)

    def delete_task_push_notification_config(self, task_id: str, config_id: str) -> None:
        """DeleteTaskPushNotificationConfig (``tasks/pushNotificationConfig/delete``)."""
        request = DeleteTaskPushNotificationConfigRequest(task_id=task_id, config_id=config_id)
        self._call(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, request)
