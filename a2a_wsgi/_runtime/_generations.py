"""Task generations (the dev-1.1 preview, a2a_core._generations): counted, waited on, matched.

The generation is a field of the stored task, so it is written by the same
compare-and-set save as the change it counts (any store, any worker, any host);
:func:`stamped` numbers a save's events and the task before that save. A long-poll
GetTask waits on the store's event signal for the task (the path streams follow
across workers and hosts), in slices, so a client that hung up is noticed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from a2a_core.errors import TaskGenerationMismatchError, TaskNotFoundError
from a2a_core.models import StreamEvent, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

from ..stores import TaskStore
from ._defaults import Change, Scope

__all__ = ["DEFAULT_LONG_POLL_TIMEOUT", "guarded", "held_until_changed", "stamped"]

#: Longest a long-poll GetTask is held (the client's default read timeout is 60 s).
DEFAULT_LONG_POLL_TIMEOUT = 30.0
#: Longest slice of a hold between two looks at the client and the task.
_SLICE = 0.5


def current(task: Task | None) -> int:
    """The task's generation; 0 (the spec's "unsupported") before it was ever counted."""
    return 0 if task is None or task.generation is None else task.generation


def stamped(old: Task | None, new: Task,
            events: Sequence[StreamEvent]) -> tuple[Task, tuple[StreamEvent, ...]]:
    """``new`` and its ``events`` numbered: +1 per status or artifact event of the save.

    A save that changes the state or the artifacts without such an event still
    counts once; a new task starts at 1.
    """
    generation = current(old)
    numbered: list[StreamEvent] = []
    for event in events:
        if isinstance(event, (TaskStatusUpdateEvent, TaskArtifactUpdateEvent)):
            generation += 1
            event = replace(event, generation=generation)
        numbered.append(event)
    if generation == current(old) and (old is None or _changed(old, new)):
        generation += 1
    return replace(new, generation=generation), tuple(numbered)


def _changed(old: Task, new: Task) -> bool:
    return old.status.state is not new.status.state or old.artifacts != new.artifacts


def guarded(change: Change, expected: int | None) -> Change:
    """``change``, refused with -32010 when the task is not at generation ``expected``.

    Checked inside the compare-and-set, on the task as loaded for the write, so a
    concurrent change between the check and the save makes the save retry and the
    check run again.
    """
    if expected is None:
        return change

    def checked(task: Task) -> tuple[Task, tuple[StreamEvent, ...]]:
        if current(task) != expected:
            raise TaskGenerationMismatchError(
                f"Task {task.id} is at generation {current(task)}, not {expected}",
                {"taskId": task.id, "currentGeneration": current(task)},
            )
        return change(task)

    return checked


def held_until_changed(store: TaskStore, task_id: str, scope: Scope, generation: int, *,
                       limit: float, client_gone: Callable[[], bool] | None) -> Task:
    """The task once its generation differs from ``generation``, or as it is at ``limit``.

    A terminal task is answered at once: it will not change again.
    """
    deadline = time.monotonic() + limit
    while True:
        stored = store.load(task_id, owner=scope[0], tenant=scope[1])
        if stored is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        left = deadline - time.monotonic()
        if current(stored.task) != generation or left <= 0 or stored.task.status.state.is_terminal:
            return stored.task
        if client_gone is not None and client_gone():
            return stored.task
        store.wait_for_events(task_id, stored.event_seq, min(left, _SLICE))
