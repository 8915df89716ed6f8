"""Schema management: connection strings, the tables, and their upgrades.

The library creates and upgrades its own tables (:func:`upgrade_schema`, or
``a2a db upgrade URL``): a ``a2a_schema_version`` table records the version;
an upgrade runs in one transaction under an advisory lock, so hosts starting
at once serialize on it and every one but the first finds nothing to do.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from .._base import LEGACY_FINGERPRINT

__all__ = [
    "DEFAULT_APPLICATION_NAME",
    "DEFAULT_SCHEMA",
    "SCHEMA_VERSION",
    "SchemaVersionError",
    "TCP_OPTIONS",
    "check_version",
    "checked_schema",
    "connect",
    "read_version",
    "schema_version",
    "split_schema",
    "upgrade",
    "upgrade_schema",
]

DEFAULT_SCHEMA = "public"
DEFAULT_APPLICATION_NAME = "a2a-wsgi"
#: The schema version this code reads and writes.
SCHEMA_VERSION = 5

Conn = psycopg.Connection[Any]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

# Each migration takes the schema from the version before it to its own number.
# Table names carry the a2a_ prefix so they can share a schema with an application's.
_MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        """CREATE TABLE {s}.a2a_tasks (
            id text COLLATE "C" PRIMARY KEY,
            owner text, tenant text,
            context_id text NOT NULL,
            state text NOT NULL,
            terminal boolean NOT NULL,
            status_at timestamptz NOT NULL,
            version bigint NOT NULL,
            event_seq bigint NOT NULL,
            event_floor bigint NOT NULL DEFAULT 0,
            body text NOT NULL)""",
        "CREATE INDEX a2a_tasks_list ON {s}.a2a_tasks (owner, tenant, status_at DESC, id DESC)",
        "CREATE INDEX a2a_tasks_purge ON {s}.a2a_tasks (status_at) WHERE terminal",
        """CREATE TABLE {s}.a2a_events (
            task_id text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (task_id, seq))""",
        """CREATE TABLE {s}.a2a_push_configs (
            pos bigserial PRIMARY KEY,
            task_id text COLLATE "C" NOT NULL,
            config_id text COLLATE "C" NOT NULL,
            body text NOT NULL,
            UNIQUE (task_id, config_id))""",
        """CREATE TABLE {s}.a2a_leases (
            task_id text COLLATE "C" PRIMARY KEY,
            worker_id text NOT NULL,
            expires_at timestamptz NOT NULL,
            attempts integer NOT NULL,
            owner text, tenant text,
            payload bytea NOT NULL)""",
        "CREATE INDEX a2a_leases_expiry ON {s}.a2a_leases (expires_at)",
        """CREATE TABLE {s}.a2a_outbox (
            id bigserial PRIMARY KEY,
            task_id text COLLATE "C" NOT NULL,
            config_id text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            url text NOT NULL,
            headers text NOT NULL,
            body bytea NOT NULL,
            not_before timestamptz,
            status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'abandoned')),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at timestamptz,
            claimed_by text,
            claimed_until timestamptz,
            last_error text)""",
        """CREATE INDEX a2a_outbox_queue ON {s}.a2a_outbox (task_id, config_id, id)
            WHERE status = 'pending'""",
        "CREATE INDEX a2a_outbox_task ON {s}.a2a_outbox (task_id)",
    )),
    # The message that created each task, for idempotent sends. ``scope`` is json
    # [owner, tenant]: NULLs are distinct in a UNIQUE key, so they are encoded.
    (2, (
        """CREATE TABLE {s}.a2a_task_messages (
            scope text COLLATE "C" NOT NULL,
            message_id text COLLATE "C" NOT NULL,
            task_id text COLLATE "C" NOT NULL,
            PRIMARY KEY (scope, message_id))""",
        "CREATE INDEX a2a_task_messages_task ON {s}.a2a_task_messages (task_id)",
    )),
    # A claim is keyed by the request's fingerprint too, so a reused message id with
    # another request is another claim. Rows of version 2 get LEGACY_FINGERPRINT, which
    # no request has: a send made before the upgrade and retried after it is a new send.
    (3, (
        f"""ALTER TABLE {{s}}.a2a_task_messages
            ADD COLUMN fingerprint text COLLATE "C" NOT NULL DEFAULT '{LEGACY_FINGERPRINT}'""",
        "ALTER TABLE {s}.a2a_task_messages ALTER COLUMN fingerprint DROP DEFAULT",
        """ALTER TABLE {s}.a2a_task_messages DROP CONSTRAINT a2a_task_messages_pkey,
            ADD PRIMARY KEY (scope, message_id, fingerprint)""",
    )),
    # Bodies are written in the stores' own encoding (a2a_wsgi.stores._encoding); older
    # rows are read as they are and rewritten at their next save. No DDL: the version
    # makes an older library refuse this database instead of misreading new rows.
    (4, ("SELECT 1",)),
    # Artifact parts in rows of their own (an appended chunk writes only itself); older
    # bodies keep theirs inline until their next save.
    (5, (
        """CREATE TABLE {s}.a2a_parts (
            task_id text COLLATE "C" NOT NULL,
            artifact_id text COLLATE "C" NOT NULL,
            pos bigint NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (task_id, artifact_id, pos))""",
    )),
)
assert _MIGRATIONS[-1][0] == SCHEMA_VERSION


class SchemaVersionError(RuntimeError):
    """The database schema is not the version this code expects."""


def split_schema(url: str) -> tuple[str, str | None]:
    """The connection string without our ``schema`` query parameter, and its value.

    libpq rejects parameters it does not know, so ``?schema=`` is taken out
    before connecting. Keyword strings (``host=… dbname=…``) pass through.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        return url, None
    # The other parameters keep their exact spelling: re-encoding would turn the
    # %20 of ``options=-c%20synchronous_commit%3Doff`` into a + that libpq keeps.
    schemas, rest = [], []
    for item in parts.query.split("&") if parts.query else ():
        key, _, value = item.partition("=")
        if unquote_plus(key) == "schema":
            schemas.append(unquote_plus(value))
        else:
            rest.append(item)
    clean = urlunsplit(parts._replace(query="&".join(rest)))
    return clean, (schemas[-1] if schemas else None)


def checked_schema(name: str) -> str:
    """Schema names are plain identifiers: they also name the NOTIFY channel and lock."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"invalid schema name {name!r}: use letters, digits and _ (max 63)")
    return name


#: TCP settings each connection gets unless its URL sets them: an idle connection to a
#: vanished host is found dead within about 25 s, and data the host stops acknowledging
#: fails the call after 30 s (libpq ignores them on Unix-domain sockets).
TCP_OPTIONS: dict[str, int] = {
    "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}


def connect(conninfo: str, *, connect_timeout: float,
            application_name: str = DEFAULT_APPLICATION_NAME,
            statement_timeout: float | None = None) -> Conn:
    """An autocommit connection whose session time zone is UTC (timestamps come back aware UTC).

    It is named ``application_name`` in ``pg_stat_activity`` unless the URL names
    it, has TCP keepalives (:data:`TCP_OPTIONS`, unless the URL sets them) and,
    when ``statement_timeout`` is given (seconds), the server cancels any of its
    statements that runs longer.
    """
    given = conninfo_to_dict(conninfo)
    options: dict[str, Any] = {"connect_timeout": max(1, int(connect_timeout))}
    options.update((key, value) for key, value in TCP_OPTIONS.items() if key not in given)
    if "application_name" not in given:
        options["application_name"] = application_name
    conn = psycopg.connect(conninfo, autocommit=True, **options)
    setup = "SET TIME ZONE 'UTC'"
    if statement_timeout is not None:
        setup += f"; SET statement_timeout = {max(1, round(statement_timeout * 1000))}"
    conn.execute(setup)  # no parameters: one round trip, in the simple protocol
    return conn


def _schema_exists(conn: Conn, schema: str) -> bool:
    row = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    return row is not None


def read_version(conn: Conn, schema: str) -> int:
    """The recorded schema version; 0 when our tables were never created."""
    row = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".a2a_schema_version',)).fetchone()
    if row is None or row[0] is None:
        return 0
    query = sql.SQL("SELECT max(version) FROM {}.a2a_schema_version").format(
        sql.Identifier(schema))
    found = conn.execute(query).fetchone()
    return int(found[0]) if found is not None and found[0] is not None else 0


def check_version(conn: Conn, schema: str) -> None:
    """For ``upgrade=False``: the schema must already be at our version."""
    found = read_version(conn, schema)
    if found != SCHEMA_VERSION:
        raise SchemaVersionError(
            f"schema {schema!r} is at version {found}, this code needs "
            f"{SCHEMA_VERSION}: run `a2a db upgrade URL`")


def upgrade(conn: Conn, schema: str) -> tuple[int, int]:
    """Bring ``schema`` to SCHEMA_VERSION in one transaction, serialized by an advisory lock."""
    current = read_version(conn, schema)
    if current == SCHEMA_VERSION:  # the usual start-up: nothing to do, no lock taken
        return current, current
    with conn.transaction():
        # Migrations and the lock wait are not one call's work: no statement_timeout.
        conn.execute("SET LOCAL statement_timeout = 0")
        # Two hosts starting at once: the second waits here, then finds nothing to do.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"a2a_wsgi schema {schema}",))
        if not _schema_exists(conn, schema):
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        before = read_version(conn, schema)
        if before > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"schema {schema!r} is at version {before}, newer than this a2a-wsgi "
                f"({SCHEMA_VERSION}): upgrade the package")
        if before < SCHEMA_VERSION:
            _migrate(conn, schema, before)
    return before, SCHEMA_VERSION


def _migrate(conn: Conn, schema: str, before: int) -> None:
    """Run the migrations after ``before`` and record the new version (inside the caller's
    transaction)."""
    ident = sql.Identifier(schema)
    table = sql.SQL("{}.a2a_schema_version").format(ident)
    if before == 0:
        conn.execute(sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (version integer NOT NULL)").format(table))
    for number, statements in _MIGRATIONS:
        if number > before:
            for statement in statements:
                conn.execute(sql.SQL(statement).format(s=ident))
    conn.execute(sql.SQL("DELETE FROM {}").format(table))
    conn.execute(sql.SQL("INSERT INTO {} (version) VALUES (%s)").format(table), (SCHEMA_VERSION,))


def _schema_of(url: str, schema: str | None) -> tuple[str, str]:
    """(connection string, schema): ``schema`` overrides ``?schema=``, default ``public``."""
    conninfo, from_url = split_schema(url)
    return conninfo, checked_schema(schema or from_url or DEFAULT_SCHEMA)


def upgrade_schema(url: str, *, schema: str | None = None,
                   connect_timeout: float = 10.0) -> tuple[int, int]:
    """Create or upgrade the store's tables; (version before, version after). Idempotent.

    ``schema`` overrides ``?schema=`` in the URL; the default is ``public``.
    """
    conninfo, name = _schema_of(url, schema)
    with connect(conninfo, connect_timeout=connect_timeout) as conn:
        return upgrade(conn, name)


def schema_version(url: str, *, schema: str | None = None,
                   connect_timeout: float = 10.0) -> int:
    """The version recorded in the database (0: not created yet)."""
    conninfo, name = _schema_of(url, schema)
    with connect(conninfo, connect_timeout=connect_timeout) as conn:
        return read_version(conn, name)
