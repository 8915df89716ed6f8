"""PostgreSQL rows of artifact parts (``a2a_parts``): an appended chunk inserts only itself.

The design and the memo it relies on are in :mod:`a2a_wsgi.stores._parts`.
Here a save's part rows become array parameters of the one save statement
(so they commit or fail with the task), and loads read them back as two
arrays per task, in the same statement as the body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from a2a_core.models import Part, Task

from .._codec import dump_part, load_part
from .._parts import stored_prefix
from .rows import esc, unesc

__all__ = ["PARTS_CTES", "PARTS_OF", "part_params", "parts_from", "parts_rows"]

#: A lateral join giving each task row ``t`` its parts as (artifact ids, bodies), in order;
#: ``%(skip)s`` true reads none (the caller has them already).
PARTS_OF = """LEFT JOIN LATERAL (
            SELECT array_agg(artifact_id ORDER BY artifact_id, pos) AS artifacts,
                   array_agg(body ORDER BY artifact_id, pos) AS bodies
            FROM {s}.a2a_parts WHERE task_id = t.id AND NOT {skip}) p ON true"""

# The save statement's part CTEs. Rows the task no longer has are deleted only when
# the stored rows are unknown or changed (``p_prune``), and the rows written are
# upserted, so the two never touch one row (one statement may not change a row twice).
PARTS_CTES = """ pruned AS (
            DELETE FROM {s}.a2a_parts d USING t
            WHERE %(p_prune)s AND d.task_id = %(id)s AND NOT EXISTS (
                SELECT 1 FROM unnest(%(p_kept)b::text[], %(p_counts)b::bigint[]) AS k(a, n)
                WHERE k.a = d.artifact_id AND d.pos < k.n)
        ), parted AS (
            INSERT INTO {s}.a2a_parts (task_id, artifact_id, pos, body)
            SELECT %(id)s, x.a, x.pos, x.body
            FROM t, unnest(%(p_artifact)b::text[], %(p_pos)b::bigint[], %(p_body)b::text[])
                AS x(a, pos, body)
            ON CONFLICT (task_id, artifact_id, pos) DO UPDATE SET body = EXCLUDED.body
        ),"""


def part_params(task: Task, before: Task | None, *, new: bool) -> dict[str, Any] | None:
    """The save's part parameters, given what is stored (``before``; None: unknown).

    None when the save changes no part row (the statement without part CTEs serves):
    a new task without artifacts (most sends), or an update that adds no part to the
    version this process saved. A new task with artifacts prunes too, so rows left under
    its id (a task row deleted by hand; purge deletes both) go; one created without
    artifacts does not look for such rows.
    """
    if new and not task.artifacts:
        return None
    stored = {} if before is None else {a.artifact_id: a.parts for a in before.artifacts}
    prune = before is None or any(
        a.artifact_id not in {b.artifact_id for b in task.artifacts} for a in before.artifacts)
    artifacts: list[str] = []
    positions: list[int] = []
    bodies: list[str] = []
    for artifact in task.artifacts:
        start = stored_prefix(stored.get(artifact.artifact_id, ()), artifact)
        if start is None:  # replaced or shrunk: rewrite it, and drop rows past its end
            start, prune = 0, True
        for pos, part in enumerate(artifact.parts[start:], start):
            artifacts.append(esc(artifact.artifact_id))
            positions.append(pos)
            bodies.append(dump_part(part))
    if not prune and not bodies:
        return None
    return {"p_prune": prune, "p_kept": [esc(a.artifact_id) for a in task.artifacts],
            "p_counts": [len(a.parts) for a in task.artifacts],
            "p_artifact": artifacts, "p_pos": positions, "p_body": bodies}


def parts_from(artifacts: Sequence[str] | None,
               bodies: Sequence[str] | None) -> dict[str, list[Part]]:
    """The arrays of :data:`PARTS_OF` as artifact id -> parts in order."""
    found: dict[str, list[Part]] = {}
    for artifact_id, body in zip(artifacts or (), bodies or (), strict=True):
        found.setdefault(unesc(artifact_id), []).append(load_part(body))
    return found


def parts_rows(rows: Sequence[tuple[Any, ...]]) -> dict[str, dict[str, list[Part]]]:
    """Rows of (task id, artifact id, body) in order as task id -> artifact id -> parts."""
    found: dict[str, dict[str, list[Part]]] = {}
    for task_id, artifact_id, body in rows:
        found.setdefault(unesc(task_id), {}).setdefault(unesc(artifact_id), []).append(
            load_part(body))
    return found
