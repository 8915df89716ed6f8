"""The SQLite store keeps artifact parts in rows of their own: an appended chunk writes itself.

Each test writes through one store and reads back through a second one on the
same file (another process's view: it has no memo of what the first saved).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest

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
from a2a_wsgi.stores import SQLiteTaskStore


@pytest.fixture()
def path(tmp_path: Path) -> Path:
    return tmp_path / "parts.sqlite3"


@pytest.fixture()
def stores(path: Path) -> Iterator[tuple[SQLiteTaskStore, SQLiteTaskStore]]:
    writer, reader = SQLiteTaskStore(path), SQLiteTaskStore(path)
    yield writer, reader
    writer.close()
    reader.close()


def working() -> Task:
    msg = Message(message_id="m1", role=Role.USER, parts=(TextPart(text="go"),),
                  task_id="t1", context_id="c1")
    return Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.WORKING),
                history=(msg,))


def chunk(task: Task, artifact_id: str, text: str, *, append: bool = True) -> Task:
    event = TaskArtifactUpdateEvent(task_id=task.id, context_id=task.context_id, append=append,
                                    artifact=Artifact(artifact_id=artifact_id, name=artifact_id,
                                                      parts=(TextPart(text=text),)))
    return apply_event(task, event)


def body_length(path: Path) -> int:
    with closing(sqlite3.connect(path)) as conn, conn:
        return int(conn.execute("SELECT length(body) FROM a2a_tasks").fetchone()[0])


def test_appended_chunks_add_rows_and_leave_the_body_alone(
        stores: tuple[SQLiteTaskStore, SQLiteTaskStore], path: Path) -> None:
    writer, reader = stores
    task = chunk(working(), "a1", "x" * 1000, append=False)
    version = writer.save(task, expected_version=None)
    first_body = body_length(path)
    for n in range(40):
        stored = writer.load("t1")
        assert stored is not None and stored.version == version
        task = chunk(stored.task, "a1", f"{n:03d}" + "y" * 1000)
        version = writer.save(task, expected_version=version)
    assert body_length(path) == first_body  # the parts are not in it
    with closing(sqlite3.connect(path)) as conn, conn:
        assert conn.execute("SELECT count(*) FROM a2a_parts").fetchone()[0] == 41
    seen = reader.load("t1")
    assert seen is not None and seen.task == task and seen.version == version
    texts = [part.text[:3] for part in seen.task.artifacts[0].parts[1:]]  # type: ignore[union-attr]
    assert texts == [f"{n:03d}" for n in range(40)]


def test_replaced_removed_and_foreign_written_artifacts_read_back_whole(
        stores: tuple[SQLiteTaskStore, SQLiteTaskStore]) -> None:
    writer, reader = stores
    task = chunk(chunk(working(), "a1", "one", append=False), "a2", "two", append=False)
    task = chunk(task, "a1", "one more")
    version = writer.save(task, expected_version=None)
    # Replaced (not appended): the old parts go.
    task = chunk(task, "a1", "fresh", append=False)
    version = writer.save(task, expected_version=version)
    assert reader.get("t1") == task
    # Another writer (no memo of this version) adds a rich chunk; then the first appends again.
    other = reader.load("t1")
    assert other is not None
    rich = replace(other.task, artifacts=(*other.task.artifacts, Artifact(
        artifact_id="a3", parts=(DataPart(data={"k": [1, None]}),
                                 FilePart(raw=b"\x00\xff", filename="f.bin")))))
    version = reader.save(rich, expected_version=version)
    stored = writer.load("t1")
    assert stored is not None and stored.task == rich
    # An artifact dropped (max_artifacts trims the oldest) loses its rows.
    trimmed = chunk(replace(rich, artifacts=rich.artifacts[1:]), "a2", "again")
    version = writer.save(trimmed, expected_version=version)
    assert reader.get("t1") == trimmed
    listed, total = reader.list()
    assert total == 1 and listed == [trimmed]
    done = replace(trimmed, status=TaskStatus(state=TaskState.COMPLETED))
    writer.save(done, expected_version=version)
    assert writer.get("t1") == done == reader.get("t1")


def test_a_schema_4_body_with_parts_inline_is_read_and_rewritten(path: Path) -> None:
    from a2a_wsgi.stores._codec import dump_task

    store = SQLiteTaskStore(path)
    inline = chunk(working(), "a1", "inline", append=False)
    store.save(working(), expected_version=None)
    store.close()
    with closing(sqlite3.connect(path)) as conn, conn:  # a body as version 4 wrote it: parts inside
        conn.execute("UPDATE a2a_tasks SET body = ?", (dump_task(inline),))
    store = SQLiteTaskStore(path)
    try:
        stored = store.load("t1")
        assert stored is not None and stored.task == inline
        grown = chunk(stored.task, "a1", "appended")
        store.save(grown, expected_version=stored.version)
        again = SQLiteTaskStore(path)
        assert again.get("t1") == grown
        again.close()
    finally:
        store.close()
