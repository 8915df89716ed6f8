"""Artifact parts stored apart from their task, so appending a chunk writes the chunk.

Both database stores keep a task's body without its artifacts' parts and each
part as a row keyed by (task, artifact, position). Rewriting the whole body on
every appended chunk made streaming N chunks cost N² bytes written and encoded
(100 chunks of 64 KB: a 350 MB SQLite WAL).

To know which parts a save adds without reading or encoding the old ones, a
store remembers the last task it saved per task id and version
(:class:`SavedTasks`, a small bounded memo of this process): when the save is
against that version, parts that are the very same objects (the models are
frozen, and an append extends the tuple) are already stored, and only the rest
are written. Any other save rewrites that task's parts. The same memo answers
a load of that version without reading the rows back. This module holds what
the stores share; each writes its rows in its own SQL.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from a2a_core.models import Artifact, Part, Task

__all__ = ["SAVED_TASKS", "Parts", "SavedTasks", "attach_parts", "stored_prefix",
           "without_parts"]

#: Tasks remembered per process (the ones being written now, in practice).
SAVED_TASKS = 64

#: Artifact id -> its stored parts, in order.
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

    def version_of(self, task_id: str) -> int | None:
        """The version remembered for this task, if any (a load can skip reading it)."""
        with self._lock:
            entry = self._tasks.get(task_id)
            return None if entry is None else entry[0]

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


def stored_prefix(stored: Sequence[Part], artifact: Artifact) -> int | None:
    """How many of the artifact's first parts are stored already; None: rewrite them all."""
    if len(stored) > len(artifact.parts):
        return None
    if all(old is new for old, new in zip(stored, artifact.parts, strict=False)):
        return len(stored)
    return None


def attach_parts(task: Task, parts: Parts) -> Task:
    """The task with its stored parts after those its body holds (older rows hold them)."""
    if not parts:
        return task
    return replace(task, artifacts=tuple(
        replace(a, parts=(*a.parts, *parts.get(a.artifact_id, ()))) for a in task.artifacts))
