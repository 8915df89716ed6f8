"""Artifact parts in rows of their own, so appending a chunk writes the chunk, not the task.

A task's body holds its artifacts without their parts; ``a2a_parts`` holds
each part as one row, keyed by (task, artifact, position). Rewriting the whole
body on every appended chunk made streaming N chunks cost N² bytes written and
encoded (100 chunks of 64 KB: a 350 MB WAL).

To know which parts a save adds without reading or encoding the old ones,
the store remembers the last task it saved per task id and version
(:class:`SavedTasks`, a small bounded memo of this process): when the save is
against that version, parts that are the very same objects (the models are
frozen, and an append extends the tuple) are already stored, and only the rest
is inserted. Any other save rewrites that task's parts. The same memo answers
a load of that version without reading the rows back.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from a2a_core.models import Artifact, Part, Task

from ..codec import dump_part, load_part

__all__ = ["PARTS_TABLE", "SavedTasks", "attach_parts", "read_parts", "without_parts",
           "write_parts"]

PARTS_TABLE = """
CREATE TABLE a2a_parts (
  task_id TEXT NOT NULL, artifact_id TEXT NOT NULL, pos INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (task_id, artifact_id, pos)) WITHOUT ROWID
"""

#: Tasks remembered per process (the ones being written now, in practice).
SAVED_TASKS = 64

Parts = Mapping[str, Sequence[Part]]


class SavedTasks:
    """The last saved version of recently written, unfinished tasks, at most ``size`` of them."""

    def __init__(self, size: int = SAVED_TASKS) -> None:
        self._size = size
        self._tasks: OrderedDict[str, tuple[int, Task]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, task_id: str, version: int) -> Task | None:
        with self._lock:
            entry = self._tasks.get(task_id)
            if entry is None or entry[0] != version:
                return None
            self._tasks.move_to_end(task_id)
            return entry[1]

    def put(self, task: Task, version: int) -> None:
        with self._lock:
            if task.status.state.is_terminal:  # nothing appends to it any more
                self._tasks.pop(task.id, None)
                return
            self._tasks[task.id] = (version, task)
            self._tasks.move_to_end(task.id)
            while len(self._tasks) > self._size:
                self._tasks.popitem(last=False)

    def forget(self, task_ids: Iterable[str]) -> None:
        with self._lock:
            for task_id in task_ids:
                self._tasks.pop(task_id, None)


def without_parts(task: Task) -> Task:
    """The task as its body stores it: artifacts without parts."""
    if not any(artifact.parts for artifact in task.artifacts):
        return task
    return replace(task, artifacts=tuple(replace(a, parts=()) for a in task.artifacts))


def write_parts(conn: sqlite3.Connection, task: Task, before: Task | None) -> None:
    """Store ``task``'s parts, given what is stored (``before``, or None: unknown)."""
    if before is None:
        conn.execute("DELETE FROM a2a_parts WHERE task_id = ?", (task.id,))
        stored: dict[str, Sequence[Part]] = {}
    else:
        stored = {artifact.artifact_id: artifact.parts for artifact in before.artifacts}
        kept = {artifact.artifact_id for artifact in task.artifacts}
        conn.executemany("DELETE FROM a2a_parts WHERE task_id = ? AND artifact_id = ?",
                         [(task.id, gone) for gone in stored if gone not in kept])
    rows: list[tuple[str, str, int, str]] = []
    for artifact in task.artifacts:
        start = _stored_prefix(stored.get(artifact.artifact_id, ()), artifact)
        if start is None:
            conn.execute("DELETE FROM a2a_parts WHERE task_id = ? AND artifact_id = ?",
                         (task.id, artifact.artifact_id))
            start = 0
        rows += [(task.id, artifact.artifact_id, pos, dump_part(part))
                 for pos, part in enumerate(artifact.parts[start:], start)]
    conn.executemany("INSERT INTO a2a_parts (task_id, artifact_id, pos, body) VALUES (?, ?, ?, ?)",
                     rows)


def _stored_prefix(stored: Sequence[Part], artifact: Artifact) -> int | None:
    """How many of the artifact's first parts are stored already; None: rewrite them all."""
    if len(stored) > len(artifact.parts):
        return None
    if all(old is new for old, new in zip(stored, artifact.parts, strict=False)):
        return len(stored)
    return None


def read_parts(conn: sqlite3.Connection,
               task_ids: Sequence[str]) -> dict[str, dict[str, list[Part]]]:
    """Every part of these tasks: task id -> artifact id -> parts in order."""
    found: dict[str, dict[str, list[Part]]] = {}
    for start in range(0, len(task_ids), 500):
        chunk = list(task_ids[start:start + 500])
        marks = ",".join("?" * len(chunk))
        for task_id, artifact_id, body in conn.execute(
                f"SELECT task_id, artifact_id, body FROM a2a_parts WHERE task_id IN ({marks}) "
                "ORDER BY task_id, artifact_id, pos", chunk):
            found.setdefault(task_id, {}).setdefault(artifact_id, []).append(load_part(body))
    return found


def attach_parts(task: Task, parts: Parts) -> Task:
    """The task with its stored parts after those its body holds (rows of schema 4 hold them)."""
    if not parts:
        return task
    return replace(task, artifacts=tuple(
        replace(a, parts=(*a.parts, *parts.get(a.artifact_id, ()))) for a in task.artifacts))
