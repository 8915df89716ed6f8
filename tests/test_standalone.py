"""The checkout stands alone: no file refers to a path or a document outside it.

A clone has nothing beside it, so a test that reads ``../<folder>``, or a docstring that
cites a document the repository does not ship, fails or misleads there. Every file of the
checkout (text files; tools' caches and virtualenvs aside) is searched for such references.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Folders that are not the project's own files.
SKIPPED = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache",
           ".ruff_cache", "node_modules", ".hypothesis"}

#: What a reference outside the checkout looks like (spelled in pieces so that this file
#: does not match itself): a sibling folder, and the documents of a workspace around it.
_DOCS = ["REFERENCE" + r"(\.md| §)", "reliab" + r"ility\.md", "seed-" + "behaviours",
         "sty" + r"le\.md", "pe" + r"ers\.md", "conformance-" + r"kit\.md"]
OUTSIDE = re.compile(r"\.\./" + "shared" + r"|/work/" + "shared" + "|" + "|".join(_DOCS))

in_checkout = pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(),
                                 reason="the tests run from a copy, outside the checkout")


def _files() -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED and not d.startswith(".venv")
                   and not d.endswith(".egg-info")]
        found += [Path(folder, name) for name in names]
    return found


def _references(text: str) -> list[str]:
    return [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
            for m in OUTSIDE.finditer(text)]


@in_checkout
def test_no_file_refers_outside_the_checkout() -> None:
    files = _files()
    assert len(files) > 100  # the walk found the project
    offending = {}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # not text
        found = _references(text)
        if found:
            offending[str(path.relative_to(ROOT))] = found
    assert offending == {}


def test_the_pattern_catches_each_kind() -> None:
    shared = "shared"
    samples = [f"see ../{shared}/spec",
               f"/work/{shared}/docs/x", "REFERENCE" + " §6.3", "from REFERENCE" + ".md",
               "reliability" + ".md §3b", "seed-" + "behaviours", "style" + ".md",
               "peers" + ".md", "conformance-kit" + ".md"]
    assert [bool(_references(s)) for s in samples] == [True] * 9
    assert _references("MAX_REFERENCE_TASK_IDS, the conformance kit, a shared store") == []
