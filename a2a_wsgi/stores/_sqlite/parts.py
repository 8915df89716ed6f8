"""SQLite rows of artifact parts (``a2a_parts``): an appended chunk inserts only itself.

The design and the memo it relies on are in :mod:`a2a_wsgi.stores._parts`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from a2a_core.models import Part, Task

from .._codec import dump_part, load_part
from .._parts import stored_prefix

__all__ = ["PARTS_TABLE", "read_parts", "write_parts"]

PARTS_TABLE = """
CREATE TABLE a2a_parts (
  task_id TEXT NOT NULL, artifact_id TEXT NOT NULL, pos INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (task_id, artifact_id, pos)) WITHOUT ROWID
"""


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
        start = stored_prefix(stored.get(artifact.artifact_id, ()), artifact)
        if start is None:
            conn.execute("DELETE FROM a2a_parts WHERE task_id = ? AND artifact_id = ?",
                         (task.id, artifact.artifact_id))
            start = 0
        rows += [(task.id, artifact.artifact_id, pos, dump_part(part))
                 for pos, part in enumerate(artifact.parts[start:], start)]
    conn.executemany("INSERT INTO a2a_parts (task_id, artifact_id, pos, body) VALUES (?, ?, ?, ?)",
                     rows)


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
