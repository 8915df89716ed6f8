"""docs/agents.md: every example runs as written and prints what the page says.

Each ```python block of the page is a whole program (it serves its agent with ``serve()``
and calls it over HTTP with ``A2AClient``); it runs in its own interpreter, in an empty
folder, and its output must match the plain block that follows it line by line, ``…``
standing for any text (ids).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_pages import Block, blocks, output_after

PAGE = "agents.md"
EXAMPLES = [b for b in blocks(PAGE) if b.language == "python"]


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(piece) for piece in line.split("…")))


def test_the_page_has_an_example_for_every_outcome_and_context_member() -> None:
    """Each outcome helper and each AgentContext member appears in a runnable example."""
    import a2a_wsgi._agent as agent_api

    code = "\n".join(b.text for b in EXAMPLES)
    helpers = ["reply", "stream", "input_required", "auth_required", "error", "reject",
               "working", "message", "from_function"]
    members = ["task_id", "context_id", "history", "message", "metadata", "extensions",
               "identity", "cancelled", "is_cancelled", "emit_status", "emit_artifact"]
    for name in helpers:
        assert re.search(rf"\b{name}\(", code), f"no example calls {name}()"
    for name in members:
        assert f"context.{name}" in code, f"no example uses context.{name}"
    public = {n for n in vars(agent_api.AgentContext) if not n.startswith("_")}
    undocumented = public - set(members) - {"updater"}  # (the runtime's hook, not the agent's)
    assert not undocumented, f"AgentContext members the page does not show: {undocumented}"
    outcomes = {n for n in agent_api.__all__ if n.islower()} - {"to_parts", "as_outcome"}
    assert outcomes <= set(helpers), f"outcomes the page does not show: {outcomes - set(helpers)}"


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{i}-{b.heading}" for i, b in
                                                   enumerate(EXAMPLES)])
def test_example_prints_what_the_page_says(example: Block, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(example.text)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    got = done.stdout.splitlines()
    want = output_after(PAGE, example).splitlines()
    assert len(got) == len(want), f"printed:\n{done.stdout}\nstderr:\n{done.stderr}"
    for line, expected in zip(got, want, strict=True):
        assert _pattern(expected).fullmatch(line), f"want {expected!r}\ngot  {line!r}"
