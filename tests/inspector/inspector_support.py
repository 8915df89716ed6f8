"""Shared pieces of the inspector tests: the agent, the composed app, the browser.

The agent is the echo example with two more behaviours: ``hang`` keeps its
task working until it is canceled, ``count:N`` streams N artifact chunks
(one artifact, appended) a little apart, so a browser can watch them arrive.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # so `import examples.echo` works under any runner
    sys.path.insert(0, str(ROOT))

from a2a_core.models import Message, TaskState  # noqa: E402
from a2a_wsgi import A2AApp, AgentContext, reply  # noqa: E402
from a2a_wsgi._agent import Outcome  # noqa: E402
from a2a_wsgi._inspector import inspector_app  # noqa: E402
from a2a_wsgi.settings import StreamSettings  # noqa: E402
from examples.echo import EchoAgent  # noqa: E402

__all__ = [
    "CHROMIUM",
    "DOCS_SHOTS",
    "InspectorTestAgent",
    "Screenshots",
    "browser_or_skip",
    "composed",
]

CHROMIUM = os.environ.get("A2A_CHROMIUM", "/usr/bin/chromium")
DOCS_SHOTS = ROOT / "docs" / "inspector"
#: Set to "docs" to also write the screenshots into docs/inspector/.
SHOTS_ENV = "A2A_INSPECTOR_SHOTS"
#: How long a "hang" task stays working when nobody cancels it.
HANG_SECONDS = 30.0


class InspectorTestAgent(EchoAgent):
    """Echo, plus ``hang`` (working until canceled) and ``count:N`` (N streamed chunks)."""

    def handle_message(self, msg: Message, ctx: AgentContext) -> Outcome | None:
        kind, _, arg = (msg.text or "").partition(":")
        if kind == "hang":
            ctx.emit_status(TaskState.WORKING, "waiting to be canceled")
            deadline = time.monotonic() + HANG_SECONDS
            while not ctx.is_cancelled() and time.monotonic() < deadline:
                time.sleep(0.02)
            return None if ctx.is_cancelled() else reply("nobody canceled me")
        if kind == "count":
            artifact = None
            total = int(arg or 3)
            for n in range(1, total + 1):
                time.sleep(0.15)
                artifact = ctx.emit_artifact(f"chunk {n}", artifact_id=artifact, name="counting",
                                             append=artifact is not None, last_chunk=n == total)
            return None
        return cast("Outcome | None", super().handle_message(msg, ctx))


def composed(agent_app: Callable[..., Any],
             inspector: Callable[..., Any] | None = None) -> Callable[..., Iterable[bytes]]:
    """``/inspector`` and below to the inspector, everything else to the agent's app."""
    page = inspector or inspector_app()

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if path == "/inspector" or path.startswith("/inspector/"):
            return cast(Iterable[bytes], page(environ, start_response))
        return cast(Iterable[bytes], agent_app(environ, start_response))

    return app


def new_agent_app() -> A2AApp:
    return A2AApp(InspectorTestAgent(), streams=StreamSettings(heartbeat_interval=1.0))


def browser_or_skip() -> Any:
    """Playwright's sync API and the chromium path, or a skip (a failure in CI)."""
    in_ci = os.environ.get("CI") == "true"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if in_ci:
            pytest.fail("playwright is not installed (pip install -e '.[test]')")
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        if in_ci:
            pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install -y chromium, or set A2A_CHROMIUM)")
    return sync_playwright


class Screenshots:
    """Saves view screenshots under the test's tmp dir, and into docs/ when asked."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.to_docs = os.environ.get(SHOTS_ENV) == "docs"

    def take(self, page: Any, name: str, *, max_height: int = 1100) -> Path:
        height = min(int(page.evaluate("document.documentElement.scrollHeight")), max_height)
        width = int(page.evaluate("window.innerWidth"))
        path = self.folder / name
        page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": width, "height": height},
                        full_page=True)
        assert path.stat().st_size > 1000
        if self.to_docs:
            DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
            (DOCS_SHOTS / name).write_bytes(path.read_bytes())
        return path
