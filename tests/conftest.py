from __future__ import annotations

import os
from pathlib import Path

import pytest

#: ../shared beside the checkout (present in CI too).
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SHARED} is missing in CI")
        pytest.skip(f"{SHARED} not present")
    return SHARED
