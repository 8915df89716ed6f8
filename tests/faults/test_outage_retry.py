"""Which errors count as a store outage, and how long an agent-side save is retried."""

from __future__ import annotations

import sqlite3

import pytest

from a2a_core.errors import InvalidParamsError
from a2a_wsgi._runtime import STORE_RETRY_DELAYS
from a2a_wsgi._runtime._retry import outage_reason, retry_outage
from a2a_wsgi.stores import ConflictError, is_outage


def _real_locked_error(tmp_path: object) -> sqlite3.OperationalError:
    """The error SQLite raises when another connection holds the write lock."""
    path = f"{tmp_path}/locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("INSERT INTO t VALUES (1)")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        other.close()
        holder.close()
    raise AssertionError("the insert did not wait for the lock")


def test_driver_connection_errors_are_outages_and_logic_errors_are_not(tmp_path: object) -> None:
    psycopg = pytest.importorskip("psycopg")
    assert is_outage(_real_locked_error(tmp_path))
    assert is_outage(psycopg.errors.AdminShutdown("terminating connection"))
    assert is_outage(ConnectionRefusedError())
    assert not is_outage(ConflictError("version moved"))
    assert not is_outage(InvalidParamsError("bad"))
    assert not is_outage(ValueError("bug"))


def test_a_save_is_retried_through_an_outage_with_growing_delays(tmp_path: object) -> None:
    failures = [_real_locked_error(tmp_path)] * 3
    slept: list[float] = []

    def write() -> str:
        if failures:
            raise failures.pop()
        return "saved"

    assert retry_outage(write, task_id="t", sleep=slept.append) == "saved"
    assert slept == list(STORE_RETRY_DELAYS[:3])
    assert slept == sorted(slept)


def test_a_lasting_outage_reaches_the_caller_after_about_twenty_seconds_of_retries(
        tmp_path: object) -> None:
    error = _real_locked_error(tmp_path)
    slept: list[float] = []
    calls = []

    def write() -> None:
        calls.append(1)
        raise error

    with pytest.raises(sqlite3.OperationalError):
        retry_outage(write, task_id="t", sleep=slept.append)
    assert len(calls) == len(STORE_RETRY_DELAYS) + 1
    assert 15 <= sum(slept) <= 25  # within the default 30 s lease, renewed meanwhile
    assert "worker" not in outage_reason(error) and "store" in outage_reason(error)


def test_other_errors_are_not_retried() -> None:
    calls = []

    def write() -> None:
        calls.append(1)
        raise ValueError("a bug, not an outage")

    with pytest.raises(ValueError):
        retry_outage(write, task_id="t", sleep=lambda _: None)
    assert len(calls) == 1
