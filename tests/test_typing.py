"""The three packages are mypy --strict clean (config in pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_strict_is_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api")
    monkeypatch.chdir(ROOT)
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, stdout + stderr


_SEAM = '''
from a2a_core.service import A2AService
from a2a_wsgi.runtime import Runtime

def service(runtime: Runtime) -> A2AService:
    return runtime
'''

_BROKEN_SEAM = '''
from a2a_core.service import A2AService
from a2a_wsgi.runtime import Runtime

class Renamed(Runtime):
    get_task = None  # type: ignore[assignment]

def service(runtime: Renamed) -> A2AService:
    return runtime
'''


@pytest.mark.slow
def test_the_runtime_is_the_core_service_and_mypy_notices_a_broken_seam(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime implements the core's service Protocol directly: no cast, no forwarding,
    so a method renamed on either side fails the type check instead of every request."""
    api = pytest.importorskip("mypy.api")
    monkeypatch.chdir(ROOT)
    good, broken = tmp_path / "seam_ok.py", tmp_path / "seam_broken.py"
    good.write_text(_SEAM)
    broken.write_text(_BROKEN_SEAM)
    stdout, stderr, status = api.run(["--strict", "--no-incremental", str(good)])
    assert status == 0, stdout + stderr
    stdout, _, status = api.run(["--strict", "--no-incremental", str(broken)])
    assert status == 1 and "A2AService" in stdout, stdout


def test_no_module_casts_to_a_protocol() -> None:
    """``cast(SomeProtocol, x)`` hides a broken seam from mypy; none is left."""
    offenders = [str(path.relative_to(ROOT)) for package in ("a2a_core", "a2a_wsgi", "a2a_client")
                 for path in (ROOT / package).rglob("*.py")
                 if "cast(A2AService" in path.read_text() or "cast(TaskStore" in path.read_text()]
    assert offenders == []
