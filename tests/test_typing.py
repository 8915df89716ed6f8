"""The three packages are mypy --strict clean (config in pyproject.toml), the seams Any-free."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import a2a_core

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_strict_is_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api")
    monkeypatch.chdir(ROOT)
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, stdout + stderr


_SEAM = '''
from a2a_core._service import A2AService
from a2a_wsgi._runtime import Runtime

def service(runtime: Runtime) -> A2AService:
    return runtime
'''

_BROKEN_SEAM = '''
from a2a_core._service import A2AService
from a2a_wsgi._runtime import Runtime

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
    where = Path(a2a_core.__file__).resolve().parent.parent  # the checkout, or the wheel
    modules = [path for package in ("a2a_core", "a2a_wsgi", "a2a_client", "a2a_inspector")
               for path in (where / package).rglob("*.py")]
    assert len(modules) > 50
    offenders = [str(path.relative_to(where)) for path in modules
                 if "cast(A2AService" in path.read_text() or "cast(TaskStore" in path.read_text()]
    assert offenders == []


#: The modules between the packages, where pyproject.toml forbids an explicit ``Any``.
SEAMS = ("a2a_core._service", "a2a_core._operations", "a2a_wsgi.stores._base",
         "a2a_wsgi._runtime._service")

_ANY_SIGNATURE = """from typing import Any

def handle(params: Any) -> None:
    return None
"""


@pytest.mark.slow
def test_the_seams_refuse_an_explicit_any(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the project's config, ``Any`` in a seam module's signature is an error, and only
    there: the same file as any other module passes. (The real seams pass: the test above.)"""
    api = pytest.importorskip("mypy.api")
    files = [*SEAMS, "a2a_core.wire.not_a_seam"]
    for module in files:
        path = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_ANY_SIGNATURE)
        for package in path.relative_to(tmp_path).parents[:-1]:  # not tmp_path itself
            (tmp_path / package / "__init__.py").touch()
    monkeypatch.chdir(tmp_path)
    paths = [module.replace(".", "/") + ".py" for module in files]
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                      "--no-incremental", *paths])
    refused = sorted(line.split(":", 1)[0] for line in stdout.splitlines()
                     if "[explicit-any]" in line)
    assert status == 1, stdout + stderr
    assert refused == sorted(paths[:-1]), stdout


def test_agent_outcomes_are_a_closed_exported_union() -> None:
    """``a2a_wsgi.Outcome`` is exactly what the outcome helpers build, and nothing else passes."""
    import typing

    import a2a_wsgi
    from a2a_wsgi import _agent as agent

    built = {type(helper("x")) for helper in (
        agent.reply, agent.input_required, agent.auth_required, agent.error, agent.reject,
        agent.working, agent.message)} | {type(agent.stream([]))}
    assert set(typing.get_args(a2a_wsgi.Outcome)) == built
    assert "Outcome" in a2a_wsgi.__all__
    with pytest.raises(TypeError, match="return an outcome"):
        agent.as_outcome(object())


#: JSON in the core is typed (a2a_core._jsonvalue); Any is left for key objects of
#: ``cryptography``, constructor keyword bags and the like. The official SDK has ~12.4.
_CORE_ANY_PER_KLOC = 12


def _any_uses(source: str) -> int:
    """``Any`` named in code (annotations included; imports and text are not uses)."""
    return sum(
        1 for node in ast.walk(ast.parse(source))
        if (isinstance(node, ast.Name) and node.id == "Any")
        or (isinstance(node, ast.Attribute) and node.attr == "Any")
    )


def test_any_in_the_core_stays_rare() -> None:
    sources = [p.read_text() for p in Path(a2a_core.__file__).parent.rglob("*.py")]
    uses = sum(_any_uses(text) for text in sources)
    lines = sum(len(text.splitlines()) for text in sources)
    assert uses * 1000 / lines <= _CORE_ANY_PER_KLOC, f"{uses} Any in {lines} lines"


def test_the_any_count_sees_annotations_and_qualified_names() -> None:
    counted = _any_uses("import typing\nfrom typing import Any\n"
                        "def f(x: Any) -> typing.Any:\n    return 'Any'\n")
    assert counted == 2
