"""``.ci/lowest.txt``, the constraints CI installs to run the suite on the lowest versions
pyproject.toml allows, pins every runtime dependency and every extra's dependency to
exactly its floor: a floor raised in one place and not the other fails here, not in a
user's install.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOWEST = ROOT / ".ci" / "lowest.txt"

pytestmark = pytest.mark.skipif(not LOWEST.is_file(),
                                reason="the tests run from a copy, outside the checkout")

#: Packages an extra of a requirement brings, pinned with that requirement's floor.
BROUGHT = {"psycopg-binary": "psycopg"}
#: The extras of tools to test and develop with: they float in the lowest run.
TOOL_EXTRAS = ("test", "dev")
#: Runtime floors the lowest run cannot install, and why (.ci/lowest.txt says so too).
FLOATING = {
    name: "the test extra's grpcio-tools==1.85.1 needs grpcio>=1.85.1 and protobuf>=7.35.1"
    for name in ("grpcio", "grpcio-health-checking", "protobuf")
}


def _pyproject() -> dict[str, object]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def _floor(spec: str) -> tuple[str, Version]:
    """The name and the ``>=`` floor of a requirement; a requirement without one fails."""
    requirement = Requirement(spec)
    floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    assert len(floors) == 1, f"{spec}: no single >= floor"
    return canonicalize_name(requirement.name), floors[0]


def _floors() -> tuple[dict[str, Version], dict[str, Version]]:
    """The runtime floors (dependencies, extras), and the test extra's floors."""
    project = _pyproject()
    runtime = list(project["dependencies"])  # type: ignore[call-overload]
    extras = dict(project["optional-dependencies"])  # type: ignore[call-overload]
    for name, specs in extras.items():
        if name not in TOOL_EXTRAS:
            runtime += specs
    tools = [spec for spec in extras["test"] if ">=" in spec]
    return dict(map(_floor, runtime)), dict(map(_floor, tools))


def _pins() -> dict[str, Version]:
    pins = {}
    for line in LOWEST.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{line}: not a name==version pin"
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_every_runtime_floor_is_pinned_in_the_lowest_constraints() -> None:
    runtime, _ = _floors()
    pins = _pins()
    pinned = {name: floor for name, floor in runtime.items() if name not in FLOATING}
    assert {name: pins.get(name) for name in pinned} == pinned
    assert not set(FLOATING) & set(pins), "a floating floor is pinned: drop it from FLOATING"


def test_every_lowest_pin_is_a_floor_of_pyproject() -> None:
    runtime, tools = _floors()
    floors = {**tools, **runtime}
    floors.update({brought: floors[by] for brought, by in BROUGHT.items()})
    assert {name: floors.get(name) for name in _pins()} == _pins()
