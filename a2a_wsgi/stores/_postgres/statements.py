"""Every statement the store runs, rendered to plain strings once per store.

The schema is fixed for a store's lifetime, so its quoted name is put into
each statement when the store starts: executing a plain string lets psycopg
skip re-rendering a ``sql.Composed`` on every call and reuse its parsed-query
cache and (after a few executions on a connection) a server-side prepared
statement.
"""

from __future__ import annotations

from datetime import datetime
from itertools import product
from typing import Any

from psycopg import sql
from psycopg.abc import AdaptContext

from a2a_core.models import TaskState

from .._base import as_utc
from .parts import PARTS_CTES, PARTS_OF
from .rows import esc

__all__ = ["Statements", "list_queries", "render"]

#: Statement name -> SQL text, with the quoted schema in place of ``{s}``.
Statements = dict[str, str]

#: The tables holding rows of a task (``a2a_`` + name), deleted with it by "purge".
_TASK_ROWS = ("events", "push_configs", "leases", "outbox", "parts", "task_messages")

# How a lease is taken ("acquire", and a save that acknowledges work): when it is free,
# ours, or expired. The WHERE of DO UPDATE is re-checked under the row lock, so of two
# reapers taking over one expired lease only the first succeeds. The time follows.
_TAKE_LEASE = """ON CONFLICT (task_id) DO UPDATE SET
            worker_id = EXCLUDED.worker_id, expires_at = EXCLUDED.expires_at,
            attempts = CASE WHEN l.worker_id = EXCLUDED.worker_id
                            THEN l.attempts ELSE l.attempts + 1 END,
            owner = EXCLUDED.owner, tenant = EXCLUDED.tenant, payload = EXCLUDED.payload
        WHERE l.worker_id = EXCLUDED.worker_id OR l.expires_at <= """

_TEXT: dict[str, str] = {
    # ``known``: the version this process saved last, whose body and parts it has.
    "load": """SELECT CASE WHEN t.version = %(known)s::bigint THEN NULL ELSE t.body END,
            t.version, t.event_seq, p.artifacts, p.bodies
        FROM {s}.a2a_tasks t """ + PARTS_OF.format(
            s="{s}", skip="coalesce(t.version = %(known)s::bigint, false)") + """
        WHERE t.id = %(id)s AND t.owner IS NOT DISTINCT FROM %(owner)s
          AND t.tenant IS NOT DISTINCT FROM %(tenant)s""",
    "notify": "SELECT pg_notify(%s, %s)",
    "finished": "SELECT id, state FROM {s}.a2a_tasks WHERE id = ANY(%s) AND terminal",
    "context_taken": """SELECT 1 FROM {s}.a2a_tasks WHERE context_id = %s
        AND NOT (owner IS NOT DISTINCT FROM %s AND tenant IS NOT DISTINCT FROM %s) LIMIT 1""",
    # One statement, one snapshot: the floor and the events cannot disagree.
    "events": """SELECT t.event_floor, e.seq, e.body FROM {s}.a2a_tasks t
        LEFT JOIN LATERAL (SELECT seq, body FROM {s}.a2a_events
                           WHERE task_id = t.id AND seq > %s ORDER BY seq LIMIT %s) e ON true
        WHERE t.id = %s ORDER BY e.seq""",
    "put_config": """INSERT INTO {s}.a2a_push_configs (task_id, config_id, body)
        VALUES (%s, %s, %s)
        ON CONFLICT (task_id, config_id) DO UPDATE SET body = EXCLUDED.body""",
    "get_config": """SELECT body FROM {s}.a2a_push_configs
        WHERE task_id = %s AND config_id = %s""",
    "list_configs": "SELECT body FROM {s}.a2a_push_configs WHERE task_id = %s ORDER BY pos",
    "delete_config": "DELETE FROM {s}.a2a_push_configs WHERE task_id = %s AND config_id = %s",
    # The head of each (task, config) queue is its oldest pending entry; only heads
    # that are due and unclaimed are locked, skipping heads another worker is claiming.
    "claim": """WITH heads AS (
            SELECT DISTINCT ON (task_id, config_id) id FROM {s}.a2a_outbox
            WHERE status = 'pending' ORDER BY task_id, config_id, id
        ), picked AS (
            SELECT o.id FROM {s}.a2a_outbox o JOIN heads ON heads.id = o.id
            WHERE o.status = 'pending'
              AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= %(now)s)
              AND (o.claimed_until IS NULL OR o.claimed_until <= %(now)s)
            ORDER BY o.id LIMIT %(limit)s
            FOR UPDATE OF o SKIP LOCKED
        )
        UPDATE {s}.a2a_outbox u
        SET claimed_by = %(worker)s, claimed_until = %(until)s, attempts = u.attempts + 1
        FROM picked WHERE u.id = picked.id
        RETURNING u.id, u.task_id, u.config_id, u.seq, u.url, u.headers, u.body,
                  u.not_before, u.attempts, u.last_error""",
    "complete": "DELETE FROM {s}.a2a_outbox WHERE id = %s",
    "retry": """UPDATE {s}.a2a_outbox SET claimed_by = NULL, claimed_until = NULL,
        next_attempt_at = %s, last_error = %s WHERE id = %s""",
    "abandon": """UPDATE {s}.a2a_outbox SET status = 'abandoned', claimed_by = NULL,
        claimed_until = NULL, last_error = %s WHERE id = %s""",
    "pending": """SELECT count(*) FROM {s}.a2a_outbox
        WHERE task_id = %s AND status = 'pending'""",
    "acquire": """INSERT INTO {s}.a2a_leases AS l
            (task_id, worker_id, expires_at, attempts, owner, tenant, payload)
        VALUES (%(task)s, %(worker)s, %(expires)s, 1, %(owner)s, %(tenant)s, %(payload)s)
        """ + _TAKE_LEASE + """%(now)s
        RETURNING 1""",
    "renew": """UPDATE {s}.a2a_leases SET expires_at = %s
        WHERE worker_id = %s AND task_id = ANY(%s) RETURNING task_id""",
    "by_message": """SELECT t.body, p.artifacts, p.bodies FROM {s}.a2a_task_messages m
        JOIN {s}.a2a_tasks t ON t.id = m.task_id """ + PARTS_OF.format(s="{s}", skip="false") + """
        WHERE m.scope = %s AND m.message_id = %s AND m.fingerprint = %s
          AND t.owner IS NOT DISTINCT FROM %s AND t.tenant IS NOT DISTINCT FROM %s""",
    "message_task": """SELECT task_id FROM {s}.a2a_task_messages
        WHERE scope = %s AND message_id = %s AND fingerprint = %s""",
    "parts": """SELECT task_id, artifact_id, body FROM {s}.a2a_parts
        WHERE task_id = ANY(%s) ORDER BY task_id, artifact_id, pos""",
    "lease": """SELECT task_id, worker_id, expires_at, attempts, owner, tenant, payload
        FROM {s}.a2a_leases WHERE task_id = %s""",
    "release": "DELETE FROM {s}.a2a_leases WHERE task_id = %s AND worker_id = %s",
    "expired": """SELECT task_id, worker_id, expires_at, attempts, owner, tenant, payload
        FROM {s}.a2a_leases WHERE expires_at <= %s ORDER BY expires_at, task_id LIMIT %s""",
    "purge": """WITH doomed AS (
            SELECT id FROM {s}.a2a_tasks WHERE terminal AND status_at < %s
            ORDER BY status_at LIMIT %s FOR UPDATE SKIP LOCKED
        )""" + "".join(f""", {table} AS (
            DELETE FROM {{s}}.a2a_{table} x USING doomed WHERE x.task_id = doomed.id
        )""" for table in _TASK_ROWS) + """
        DELETE FROM {s}.a2a_tasks t USING doomed WHERE t.id = doomed.id RETURNING t.id""",
}

# Arrays travel in binary (%b): psycopg's text format escapes every quote of every
# JSON body in Python, which cost more than the rest of the save's adaptation together.
# A save is ONE statement (so one round trip, atomic even in autocommit): the task
# write returns its new event_seq, the sibling CTEs number the events from it, trim
# the log below the new floor, queue the outbox rows and NOTIFY. When the task write
# matches no row (CAS failed), every CTE selects from nothing and nothing changes.
_WRITES = {
    "create": """INSERT INTO {s}.a2a_tasks (id, owner, tenant, context_id, state, terminal,
            status_at, version, event_seq, event_floor, body)
        VALUES (%(id)s, %(owner)s, %(tenant)s, %(context)s, %(state)s, %(terminal)s, %(at)s,
                1, %(n)s, GREATEST(0, %(n)s - %(max)s), %(body)s)
        ON CONFLICT (id) DO NOTHING RETURNING version, event_seq, event_floor""",
    "update": """UPDATE {s}.a2a_tasks SET context_id = %(context)s, state = %(state)s,
            terminal = %(terminal)s, status_at = %(at)s, body = %(body)s,
            version = version + 1, event_seq = event_seq + %(n)s,
            event_floor = GREATEST(event_floor, event_seq + %(n)s - %(max)s)
        WHERE id = %(id)s AND version = %(expected)s
          AND owner IS NOT DISTINCT FROM %(owner)s AND tenant IS NOT DISTINCT FROM %(tenant)s
        RETURNING version, event_seq, event_floor""",
}
_SAVE = """WITH t AS ({write}),{claimed}{leased}{parts}
        appended AS (
            INSERT INTO {s}.a2a_events (task_id, seq, body)
            SELECT %(id)s, t.event_seq - %(n)s + x.ord, x.body
            FROM t, unnest(%(events)b::text[]) WITH ORDINALITY AS x(body, ord)
            WHERE t.event_seq - %(n)s + x.ord > t.event_floor
        ), trimmed AS (
            DELETE FROM {s}.a2a_events d USING t
            WHERE %(n)s > 0 AND d.task_id = %(id)s AND d.seq <= t.event_floor
        ),{queued} notified AS (
            SELECT pg_notify(%(channel)s, %(id)s) FROM t WHERE %(n)s > 0
        )
        SELECT t.version, (SELECT count(*) FROM notified) FROM t"""
# A new task records its creating message in the same statement: a message id
# already taken in this scope is a unique violation, and nothing is written.
_CLAIMED = """ claimed AS (
            INSERT INTO {s}.a2a_task_messages (scope, message_id, fingerprint, task_id)
            SELECT %(scope)s, %(message)s, %(fingerprint)s, %(id)s FROM t
            WHERE %(message)s::text IS NOT NULL
        ),"""
# A save that acknowledges work takes the task's lease in the same statement, on
# the terms of "acquire" (free, ours, or expired; another's live lease is left alone).
_LEASED = """ leased AS (
            INSERT INTO {s}.a2a_leases AS l
                (task_id, worker_id, expires_at, attempts, owner, tenant, payload)
            SELECT %(id)s, %(l_worker)s, %(l_expires)s, 1, %(owner)s, %(tenant)s,
                   %(l_payload)s FROM t
            """ + _TAKE_LEASE + """%(l_now)s
        ),"""
# Most saves queue no push notification: they use the statement without this CTE,
# which spares psycopg adapting seven empty arrays on every save.
_QUEUED = """ queued AS (
            INSERT INTO {s}.a2a_outbox
                (task_id, config_id, seq, url, headers, body, not_before, next_attempt_at)
            SELECT x.task_id, x.config_id, x.seq, x.url, x.headers, x.body, x.due, x.due
            FROM t, unnest(%(o_task)b::text[], %(o_config)b::text[], %(o_seq)b::bigint[],
                           %(o_url)b::text[], %(o_headers)b::text[], %(o_body)b::bytea[],
                           %(o_due)b::timestamptz[])
                AS x(task_id, config_id, seq, url, headers, body, due)
        ),"""


def save_name(new: bool, outbox: bool, leased: bool = False, parts: bool = False) -> str:
    """The name of the save statement for a new/existing task, with/without outbox rows,
    with/without taking the task's lease, with/without writing part rows."""
    return (("save_new" if new else "save") + ("_outbox" if outbox else "")
            + ("_leased" if leased else "") + ("_parts" if parts else ""))


def render(schema: str, context: AdaptContext | None) -> Statements:
    """Every statement with ``schema`` quoted in (by ``context``'s rules), as plain text."""
    quoted = sql.Identifier(schema).as_string(context)
    texts = {name: text.replace("{s}", quoted) for name, text in _TEXT.items()}
    for new, write in ((True, "create"), (False, "update")):
        for outbox in (False, True):
            for leased, parts in product((False, True), repeat=2):
                text = _SAVE.replace("{write}", _WRITES[write])
                text = text.replace("{claimed}", _CLAIMED if new else "")
                text = text.replace("{leased}", _LEASED if leased else "")
                text = text.replace("{parts}", PARTS_CTES if parts else "")
                text = text.replace("{queued}", _QUEUED if outbox else "")
                texts[save_name(new, outbox, leased, parts)] = text.replace("{s}", quoted)
    texts["tasks_table"] = f"{quoted}.a2a_tasks"
    return texts


def list_queries(statements: Statements, owner: str | None, tenant: str | None,
                 context_id: str | None, status: TaskState | None, since: datetime | None,
                 after: tuple[datetime, str] | None) -> tuple[str, list[Any], str, list[Any]]:
    """The count and page queries of a listing, and their parameters.

    ``IS NULL`` is spelled out (not ``IS NOT DISTINCT FROM``) so the (owner,
    tenant, status_at, id) index serves both. Every fragment is a constant here;
    values only ever travel as parameters.
    """
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (("owner", owner), ("tenant", tenant)):
        clauses.append(f"{column} IS NULL" if value is None else f"{column} = %s")
        params += [] if value is None else [esc(value)]
    optional: tuple[tuple[str, Any], ...] = (
        ("context_id = %s", esc(context_id)),
        ("state = %s", None if status is None else status.value),
        ("status_at >= %s", None if since is None else as_utc(since)))
    for clause, value in optional:
        if value is not None:
            clauses.append(clause)
            params.append(value)
    where = " AND ".join(clauses)
    table = statements["tasks_table"]
    count = f"SELECT count(*) FROM {table} WHERE {where}"
    page_where, page_params = where, list(params)
    if after is not None:
        page_where += " AND (status_at, id) < (%s::timestamptz, %s::text)"
        page_params += [as_utc(after[0]), esc(after[1])]
    page = (f"SELECT body, id FROM {table} WHERE {page_where} "
            "ORDER BY status_at DESC, id DESC LIMIT %s")
    return count, params, page, page_params
