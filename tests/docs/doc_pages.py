"""Reading the fenced blocks of README.md and docs/*.md, so tests run what the pages show.

A block is found by the section it sits in (its heading, exactly as written) and, where a
section holds several, by a piece of text it contains; a test never keeps its own copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n?", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, its text, the heading above it, where it ends."""

    language: str
    text: str
    heading: str
    end: int


def page_text(page: str) -> str:
    """``"README.md"`` or a page of docs/ by its file name."""
    path = ROOT / page if page == "README.md" else ROOT / "docs" / page
    return path.read_text()


def blocks(page: str) -> list[Block]:
    """Every fenced block of ``page``, in order, with the nearest heading above it."""
    text = page_text(page)
    headings = [(m.start(), m[2]) for m in _HEADING.finditer(text)]
    found = []
    for fence in _FENCE.finditer(text):
        # (a "#" line inside an earlier fence is not a heading: skip fenced spans)
        above = [h for pos, h in headings if pos < fence.start() and not _in_fence(text, pos)]
        found.append(Block(fence[1], fence[2], above[-1] if above else "", fence.end()))
    return found


def _in_fence(text: str, pos: int) -> bool:
    return text.count("\n```", 0, pos) % 2 == 1


def block(page: str, heading: str, language: str = "python", containing: str = "") -> Block:
    """The one ``language`` block under ``heading`` that contains ``containing``."""
    found = [b for b in blocks(page)
             if b.heading == heading and b.language == language and containing in b.text]
    assert len(found) == 1, (
        f"{page}: {len(found)} {language} blocks under {heading!r} contain {containing!r}")
    return found[0]


def output_after(page: str, code: Block) -> str:
    """The plain fenced block that follows ``code`` (its output, as the page shows it)."""
    following = [b for b in blocks(page) if b.end > code.end]
    assert following and following[0].language == "", (
        f"{page}: no output block after the example under {code.heading!r}")
    assert following[0].heading == code.heading
    return following[0].text
