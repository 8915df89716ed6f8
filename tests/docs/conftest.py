"""The ``shell`` fixture of the doc tests: doc lines run as written (:mod:`doc_shell`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_shell import Shell


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    """A :class:`~doc_shell.Shell` in ``tmp_path``; what it started is stopped after the test."""
    sh = Shell(tmp_path)
    try:
        yield sh
    finally:
        sh.stop()
