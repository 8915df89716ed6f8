"""The work tier on PostgreSQL (many hosts): the workers' changes reach the web tier through
LISTEN/NOTIFY. A blocking send, a stream, and a cancel heard by the worker within a second."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from celery_support import Stack, need_broker, until
from support.postgres import temporary_schema

from a2a_client import A2AClient
from a2a_core.models import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from a2a_wsgi.stores import open_store

pytestmark = [pytest.mark.celery, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, str]]:
    need_broker()
    from support.postgres import schema_url

    with temporary_schema() as schema:
        url = schema_url(schema)
        stack = Stack(tmp_path_factory.mktemp("pg-tier"), extra_env={"A2A_STORE": url})
        try:
            yield stack, url
        finally:
            stack.stop()


def test_send_stream_and_cancel_on_postgres(pg_stack: tuple[Stack, str]) -> None:
    stack, url = pg_stack
    with A2AClient(stack.url, version="1.0", binding="HTTP+JSON", timeout=60) as client:
        task = client.send_message("hello postgres")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        events = list(client.stream_message("stream 3"))
        assert sum(isinstance(e, TaskArtifactUpdateEvent) for e in events) == 3
        last = events[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.COMPLETED

        held = client.send_message("hold", blocking=False)
        assert isinstance(held, Task)
        assert until(lambda: client.get_task(held.id).status.state is TaskState.WORKING, 20)
        store = open_store(url)
        try:
            assert client.cancel_task(held.id).status.state is TaskState.CANCELED
            assert until(lambda: store.get_lease(held.id) is None, 1.0, step=0.02), \
                stack.logs()
        finally:
            store.close()
