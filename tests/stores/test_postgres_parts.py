"""The PostgreSQL store keeps artifact parts in rows of their own: an appended chunk writes itself.

Each test writes through one store and reads back through a second one on the
same schema (another process's view: it has no memo of what the first saved).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from support.postgres import postgres_url, temporary_schema

from a2a_core._tasks import apply_event
from a2a_core.models import (
    Artifact,
    DataPart,
    FilePart,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TextPart,
)

psycopg = pytest.importorskip("psycopg")

from a2a_wsgi.stores._postgres import PostgresTaskStore  # noqa: E402

pytestmark = pytest.mark.postgres


@pytest.fixture
def schema() -> Iterator[str]:
    postgres_url()  # skip (or fail in CI) before making anything
    with temporary_schema() as name:
        yield name


@pytest.fixture
def stores(schema: str) -> Iterator[tuple[PostgresTaskStore, PostgresTaskStore]]:
    writer = PostgresTaskStore(postgres_url(), schema=schema)
    reader = PostgresTaskStore(postgres_url(), schema=schema)
    yield writer, reader
    writer.close()
    reader.close()


def sql(schema: str, query: str, params: Any = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(postgres_url(), autocommit=True) as conn:
        cur = conn.execute(query.replace("{s}", f'"{schema}"'), params)
        return cur.fetchall() if cur.description is not None else []


def working(task_id: str = "t1") -> Task:
    msg = Message(message_id=f"m-{task_id}", role=Role.USER, parts=(TextPart(text="go"),),
                  task_id=task_id, context_id="c1")
    return Task(id=task_id, context_id="c1", status=TaskStatus(state=TaskState.WORKING),
                history=(msg,))


def chunk(task: Task, artifact_id: str, text: str, *, append: bool = True) -> Task:
    event = TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id, append=append,
                                    artifact=Artifact(artifact_id=artifact_id, name=artifact_id,
                                                      parts=(TextPart(text=text),)))
    return apply_event(task, event)


def test_appended_chunks_add_rows_and_leave_the_body_alone(
        stores: tuple[PostgresTaskStore, PostgresTaskStore], schema: str) -> None:
    writer, reader = stores
    task = chunk(working(), "a1", "x" * 1000, append=False)
    version = writer.save(task, expected_version=None)
    body_sql = "SELECT length(body) FROM {s}.a2a_tasks"
    first_body = sql(schema, body_sql)[0][0]
    for n in range(40):
        stored = writer.load("t1")
        assert stored is not None and stored.version == version
        task = chunk(stored.task, "a1", f"{n:03d}" + "y" * 1000)
        version = writer.save(task, expected_version=version)
    assert sql(schema, body_sql)[0][0] == first_body  # the parts are not in it
    assert sql(schema, "SELECT count(*) FROM {s}.a2a_parts") == [(41,)]
    # Each row still carries the transaction of the save that added it: none was rewritten.
    assert sql(schema, "SELECT count(DISTINCT xmin::text) FROM {s}.a2a_parts") == [(41,)]
    seen = reader.load("t1")
    assert seen is not None and seen.task == task and seen.version == version
    texts = [part.text[:3] for part in seen.task.artifacts[0].parts[1:]]  # type: ignore[union-attr]
    assert texts == [f"{n:03d}" for n in range(40)]


def test_replaced_removed_and_foreign_written_artifacts_read_back_whole(
        stores: tuple[PostgresTaskStore, PostgresTaskStore], schema: str) -> None:
    writer, reader = stores
    task = chunk(chunk(working(), "a1", "one", append=False), "a2", "two", append=False)
    task = chunk(task, "a1", "one more")
    version = writer.save(task, expected_version=None, message_id="m-t1", fingerprint="f" * 64)
    # Replaced (not appended): the old parts go.
    task = chunk(task, "a1", "fresh", append=False)
    version = writer.save(task, expected_version=version)
    assert reader.get("t1") == task
    assert sql(schema, "SELECT count(*) FROM {s}.a2a_parts WHERE artifact_id = 'a1'") == [(1,)]
    # Another writer (no memo of this version) adds a rich chunk; then the first appends again.
    other = reader.load("t1")
    assert other is not None
    rich = replace(other.task, artifacts=(*other.task.artifacts, Artifact(
        artifact_id="a\x003", parts=(DataPart(data={"k": [1, None]}),
                                     FilePart(raw=b"\x00\xff", filename="f.bin")))))
    version = reader.save(rich, expected_version=version)
    stored = writer.load("t1")
    assert stored is not None and stored.task == rich
    # An artifact dropped (max_artifacts trims the oldest) loses its rows.
    trimmed = chunk(replace(rich, artifacts=rich.artifacts[1:]), "a2", "again")
    version = writer.save(trimmed, expected_version=version)
    assert reader.get("t1") == trimmed
    assert sql(schema, "SELECT count(*) FROM {s}.a2a_parts WHERE artifact_id = 'a1'") == [(0,)]
    listed, total = reader.list()
    assert total == 1 and listed == [trimmed]
    assert reader.find_by_message("m-t1", fingerprint="f" * 64) == trimmed
    done = replace(trimmed, status=TaskStatus(state=TaskState.COMPLETED))
    writer.save(done, expected_version=version)
    assert writer.get("t1") == done == reader.get("t1")
    # Purging the task takes its parts with it.
    assert reader.purge(datetime.now(timezone.utc) + timedelta(days=1)) == 1
    assert sql(schema, "SELECT count(*) FROM {s}.a2a_parts") == [(0,)]


def test_a_failed_save_writes_no_parts_and_the_winner_reads_back(
        stores: tuple[PostgresTaskStore, PostgresTaskStore], schema: str) -> None:
    from a2a_wsgi.stores import ConflictError

    writer, reader = stores
    version = writer.save(chunk(working(), "a1", "first", append=False), expected_version=None)
    stored = reader.load("t1")
    assert stored is not None
    winner = chunk(stored.task, "a1", "winner")
    reader.save(winner, expected_version=version)
    with pytest.raises(ConflictError):  # the same version again: nothing of it is kept
        writer.save(chunk(stored.task, "a1", "loser"), expected_version=version)
    assert writer.get("t1") == winner
    assert [row[0] for row in sql(schema, "SELECT body FROM {s}.a2a_parts ORDER BY pos")
            if "loser" in row[0]] == []


def test_a_schema_4_body_with_parts_inline_is_read_and_rewritten(schema: str) -> None:
    from a2a_wsgi.stores._codec import dump_task

    store = PostgresTaskStore(postgres_url(), schema=schema)
    inline = chunk(working(), "a1", "inline", append=False)
    store.save(working(), expected_version=None)
    store.close()
    sql(schema, "UPDATE {s}.a2a_tasks SET body = %s", (dump_task(inline),))  # as version 4 wrote
    store = PostgresTaskStore(postgres_url(), schema=schema)
    again = PostgresTaskStore(postgres_url(), schema=schema)
    try:
        stored = store.load("t1")
        assert stored is not None and stored.task == inline
        grown = chunk(stored.task, "a1", "appended")
        store.save(grown, expected_version=stored.version)
        assert again.get("t1") == grown
        assert sql(schema, "SELECT count(*) FROM {s}.a2a_parts") == [(2,)]
    finally:
        store.close()
        again.close()


def test_a_new_task_never_reads_rows_left_under_its_id(
        stores: tuple[PostgresTaskStore, PostgresTaskStore], schema: str) -> None:
    writer, reader = stores
    old = chunk(chunk(working(), "a1", "old 0", append=False), "a1", "old 1")
    writer.save(old, expected_version=None)
    sql(schema, "DELETE FROM {s}.a2a_tasks")  # the task row gone, its part rows left behind
    new = chunk(working(), "a1", "new", append=False)
    writer.save(new, expected_version=None)
    assert reader.get("t1") == new
    assert sql(schema, "SELECT count(*) FROM {s}.a2a_parts") == [(1,)]
