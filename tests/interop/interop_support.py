"""Helpers shared by the interop tests (a module, so tests can import it by name)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

__all__ = ["EXAMPLES", "load_example", "require_sdk"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def require_sdk() -> None:
    """Skip without a2a-sdk, except in CI, where a missing SDK is a failure."""
    missing = [name for name in ("a2a", "uvicorn", "starlette", "sse_starlette")
               if importlib.util.find_spec(name) is None]
    if missing:
        reason = f"interop needs a2a-sdk[http-server] and uvicorn (missing: {missing})"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason, allow_module_level=True)


def load_example(name: str) -> ModuleType:
    """examples/<name>.py (not a package), loaded by path."""
    spec = importlib.util.spec_from_file_location(f"interop_example_{name}",
                                                  EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
