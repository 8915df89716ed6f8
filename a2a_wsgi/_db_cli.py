"""``a2a db upgrade URL``: create or upgrade a durable task store's tables.

Run it once per deployment (or let the store do it at start-up, its default):
it is idempotent, and concurrent runs are serialized by the database, so it is
safe in a release step that every host runs. The ``a2a`` command
(:mod:`a2a_client.cli`) delegates ``a2a db …`` here; ``python -m
a2a_wsgi._db_cli …`` works without it.

::

    a2a db upgrade postgresql://app@db.internal/app [--schema a2a]
    a2a db version postgresql://app@db.internal/app?schema=a2a
    a2a db upgrade sqlite:///var/lib/a2a/tasks.sqlite3
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

__all__ = ["build_parser", "db_main", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def build_parser(prog: str = "a2a db") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Create, upgrade or inspect a task store's tables.")
    sub = parser.add_subparsers(dest="action", required=True)
    for action, text in (("upgrade", "create or upgrade the tables (idempotent)"),
                         ("version", "print the schema version the database records")):
        command = sub.add_parser(action, help=text, description=text)
        command.add_argument("url", metavar="URL",
                             help="postgresql://… (?schema=NAME allowed) or sqlite:///path")
        command.add_argument("--schema", help="PostgreSQL schema (default: ?schema= or public)")
    return parser


def db_main(argv: Sequence[str], *, out: TextIO | None = None,
            err: TextIO | None = None) -> int:
    """Run ``a2a db`` with ``argv`` (after "db"); the exit code. Never prints the URL."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        options = build_parser().parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    scheme = options.url.partition("://")[0]
    if scheme in ("postgresql", "postgres"):
        return _postgres(options.action, options.url, options.schema, out, err)
    if scheme == "sqlite":
        if options.schema is not None:
            err.write("a2a db: --schema is for PostgreSQL only\n")
            return EXIT_USAGE
        return _sqlite(options.action, options.url, out, err)
    err.write("a2a db: expected a postgresql://… or sqlite:///… URL\n")
    return EXIT_USAGE


def _postgres(action: str, url: str, schema: str | None, out: TextIO, err: TextIO) -> int:
    try:
        import psycopg

        from .stores import _postgres as postgres
    except ImportError as exc:
        err.write(f"a2a db: PostgreSQL needs psycopg ({exc}); "
                  "install the extra: pip install 'a2a-wsgi[postgres]'\n")
        return EXIT_FAILED
    try:
        name = schema or postgres.split_schema(url)[1] or postgres.DEFAULT_SCHEMA
        if action == "version":
            out.write(f"schema {name}: version {postgres.schema_version(url, schema=name)}\n")
            return EXIT_OK
        before, after = postgres.upgrade_schema(url, schema=name)
    except (psycopg.Error, postgres.SchemaVersionError, ValueError) as exc:
        err.write(f"a2a db: {_one_line(exc)}\n")
        return EXIT_FAILED
    out.write(f"schema {name}: {_outcome(before, after)}\n")
    return EXIT_OK


def _sqlite(action: str, url: str, out: TextIO, err: TextIO) -> int:
    """SQLite stores migrate themselves when opened; opening is the upgrade."""
    import sqlite3

    from .stores import _sqlite as sqlite

    rest = url.partition("://")[2]
    path = (rest[1:] if rest.startswith("/") else rest) or sqlite.default_sqlite_path()
    try:
        before = _sqlite_version(path)
        if action == "upgrade":
            sqlite.SQLiteTaskStore(path).close()
    except (sqlite3.Error, RuntimeError) as exc:
        err.write(f"a2a db: {_one_line(exc)}\n")
        return EXIT_FAILED
    if action == "version":
        out.write(f"{path}: version {before}\n")
    else:
        out.write(f"{path}: {_outcome(before, sqlite.SCHEMA_VERSION)}\n")
    return EXIT_OK


def _sqlite_version(path: str) -> int:
    """The recorded version without creating anything (0: no file or no tables)."""
    import os
    import sqlite3

    if not os.path.exists(path):
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT name FROM sqlite_master WHERE name = 'a2a_schema_version'"
                           ).fetchone()
        if row is None:
            return 0
        found = conn.execute("SELECT max(version) FROM a2a_schema_version").fetchone()
        return int(found[0]) if found and found[0] is not None else 0
    finally:
        conn.close()


def _outcome(before: int, after: int) -> str:
    if before == after:
        return f"already at version {after}"
    if before == 0:
        return f"created at version {after}"
    return f"upgraded from version {before} to {after}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m a2a_wsgi._db_cli upgrade URL``."""
    return db_main(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
