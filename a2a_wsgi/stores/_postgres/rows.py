"""Python values to PostgreSQL parameters and result rows back to the store's types."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, overload

from .._base import Delivery, Lease, OutboxEntry, as_utc

__all__ = ["delivery", "esc", "lease", "outbox_columns", "unesc", "unesc_opt"]

_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


@overload
def esc(value: str) -> str: ...
@overload
def esc(value: None) -> None: ...
@overload
def esc(value: str | None) -> str | None: ...
def esc(value: str | None) -> str | None:
    """A key as stored: PostgreSQL text cannot hold NUL, so ``\\`` doubles and NUL is ``\\0``.

    Ids, owners and tenants come from callers; one with a NUL must not make a
    query fail. Bodies are JSON, which escapes NUL itself.
    """
    if value is None or ("\\" not in value and "\x00" not in value):
        return value
    return value.replace("\\", "\\\\").replace("\x00", "\\0")


def unesc(value: str) -> str:
    """The inverse of :func:`esc`."""
    if "\\" not in value:
        return value
    return _ESCAPED.sub(lambda m: "\x00" if m.group(1) == "0" else m.group(1), value)


def unesc_opt(value: str | None) -> str | None:
    return None if value is None else unesc(value)


def outbox_columns(outbox: Sequence[OutboxEntry]) -> dict[str, list[Any]]:
    """The outbox entries as parallel arrays, for one ``unnest`` in the save statement."""
    return {
        "o_task": [esc(e.task_id) for e in outbox],
        "o_config": [esc(e.config_id) for e in outbox],
        "o_seq": [e.seq for e in outbox],
        "o_url": [esc(e.url) for e in outbox],
        "o_headers": [json.dumps([list(pair) for pair in e.headers]) for e in outbox],
        "o_body": [e.body for e in outbox],
        "o_due": [None if e.not_before is None else as_utc(e.not_before) for e in outbox],
    }


def delivery(row: tuple[Any, ...]) -> Delivery:
    """A claimed outbox row as a Delivery (headers stored as a JSON list of pairs)."""
    (number, task_id, config_id, seq, url, headers, body, not_before, attempts,
     last_error) = row
    entry = OutboxEntry(task_id=unesc(task_id), config_id=unesc(config_id), seq=int(seq),
                        url=unesc(url),
                        headers=tuple((str(k), str(v)) for k, v in json.loads(headers)),
                        body=bytes(body), not_before=not_before)
    return Delivery(id=int(number), entry=entry, attempts=int(attempts),
                    last_error=unesc_opt(last_error))


def lease(row: tuple[Any, ...]) -> Lease:
    """A row of ``a2a_leases`` as a Lease."""
    task_id, worker_id, expires, attempts, owner, tenant, payload = row
    return Lease(task_id=unesc(task_id), worker_id=unesc(worker_id), expires_at=expires,
                 attempts=int(attempts), owner=unesc_opt(owner), tenant=unesc_opt(tenant),
                 payload=bytes(payload))
