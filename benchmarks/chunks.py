"""Streaming artifact chunks: seconds and bytes written for N appended chunks.

    .venv/bin/python benchmarks/chunks.py [N ...] [--size BYTES]
        [--store sqlite|memory|postgres] [--url POSTGRES_URL]

An agent appends N chunks of ``--size`` bytes to one artifact (no sleep) while
a client streams them over HTTP (serve(), in this process). Prints, per N, the
seconds to the last event and the bytes on disk: the SQLite file plus WAL, or
the PostgreSQL tables of a schema made for the run (dropped after it, dead row
versions included: each rewrite of a task leaves one until vacuum). Linear work
means seconds and bytes grow with N, not N squared.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from a2a_core.models import Message  # noqa: E402
from a2a_wsgi import A2AApp, Agent, AgentContext, MemoryTaskStore, SQLiteTaskStore, serve  # noqa: E402
from a2a_wsgi.stores import TaskStore  # noqa: E402


class Chunks(Agent):
    name = "Chunks"
    description = "Appends N chunks to one artifact"

    def __init__(self, size: int) -> None:
        self.size = size

    def handle_message(self, msg: Message, ctx: AgentContext) -> None:
        total = int(msg.text or "1")
        artifact = None
        for n in range(1, total + 1):
            artifact = ctx.emit_artifact("x" * self.size, artifact_id=artifact, name="chunks",
                                         append=artifact is not None, last_chunk=n == total)
        return None


def make_store(kind: str, path: str, url: str, schema: str) -> TaskStore:
    if kind == "sqlite":
        return SQLiteTaskStore(path)
    if kind == "postgres":
        from a2a_wsgi.stores._postgres import PostgresTaskStore

        return PostgresTaskStore(url, schema=schema)
    return MemoryTaskStore()


def postgres_bytes(url: str, schema: str, *, drop: bool = False) -> int:
    """Bytes in the schema's tables (with indexes and TOAST); ``drop``: then drop it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'", (schema,)).fetchone()
        if drop:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return int(row[0]) if row is not None else 0


def run(count: int, size: int, store_kind: str, folder: str, url: str) -> tuple[float, int]:
    path = os.path.join(folder, f"chunks-{count}.sqlite3")
    schema = f"bench_chunks_{os.getpid()}_{count}"
    store = make_store(store_kind, path, url, schema)
    app = A2AApp(Chunks(size), store=store)
    message = {"role": "ROLE_USER", "messageId": f"m-{count}", "parts": [{"text": str(count)}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": message}}
    with serve(app) as handle:
        started = time.monotonic()
        events = 0
        with requests.post(handle.url + "/", json=body, stream=True, timeout=600,
                           headers={"A2A-Version": "1.0"}) as response:
            for line in response.iter_lines():
                if line.startswith(b"data:"):
                    events += 1
                    json.loads(line[5:])
        elapsed = time.monotonic() - started
    app.close()
    if store_kind == "postgres":
        return elapsed, postgres_bytes(url, schema, drop=True)
    written = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    return elapsed, written


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("counts", nargs="*", type=int, default=[50, 100, 200])
    parser.add_argument("--size", type=int, default=65536)
    parser.add_argument("--store", choices=("sqlite", "memory", "postgres"),
                        default="sqlite")
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test",
                        help="the PostgreSQL server for --store postgres")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'chunks':>7} {'seconds':>8} {'MB on disk':>11}")
        for count in args.counts:
            elapsed, written = run(count, args.size, args.store, folder, args.url)
            print(f"{count:>7} {elapsed:>8.2f} {written / 1e6:>11.1f}", flush=True)


if __name__ == "__main__":
    main()
