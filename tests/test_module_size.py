"""No module in the four packages grows past 400 lines: past that, split it along a seam."""

from __future__ import annotations

from pathlib import Path

import pytest

import a2a_core

#: Where the packages are imported from: the checkout, or the installed wheel.
ROOT = Path(a2a_core.__file__).resolve().parent.parent
PACKAGES = ("a2a_core", "a2a_wsgi", "a2a_client", "a2a_inspector")
MAX_LINES = 400


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_the_packages_have_modules() -> None:
    assert len(_modules()) > 50  # the walk found the sources, so the size check means something


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_module_is_at_most_400_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (at most {MAX_LINES})"
