"""The fuzz targets (fuzz/, docs/fuzzing.md): every seed and every input that once was a
finding runs through its target on each test run (a finding fixed stays fixed), and each
target runs under atheris for a short fixed budget, through the command docs/fuzzing.md
shows, and must find nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "fuzz"
DOC = ROOT / "docs" / "fuzzing.md"
#: Seconds each target runs under the fuzzer here (eight targets: under two minutes).
BUDGET = 10

sys.path.insert(0, str(FUZZ))
try:
    from run import TARGETS  # fuzz/run.py
finally:
    sys.path.remove(str(FUZZ))

#: Findings in code this suite's owner does not own, open until their owner fixes them
#: (the fix is in the report); strict, so the fix turns each into a failure asking for
#: its removal.
OPEN_FINDINGS: dict[str, str] = {}


def target(name: str) -> Callable[[bytes], None]:
    sys.path.insert(0, str(FUZZ))
    try:
        module = importlib.import_module(f"fuzz_{name}")
    finally:
        sys.path.remove(str(FUZZ))
    check: Callable[[bytes], None] = module.check
    return check


def _regressions() -> list[object]:
    params: list[object] = []
    for folder in sorted((FUZZ / "regressions").iterdir()):
        for path in sorted(folder.iterdir()):
            marks = ([pytest.mark.xfail(strict=True, reason=OPEN_FINDINGS[folder.name])]
                     if folder.name in OPEN_FINDINGS else [])
            params.append(pytest.param(folder.name, path, marks=marks,
                                       id=f"{folder.name}/{path.name}"))
    return params


def _open(name: str) -> object:
    if name in OPEN_FINDINGS:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True,
                                                          reason=OPEN_FINDINGS[name]))
    return name


def test_every_target_has_a_module_seeds_and_a_line_in_the_docs() -> None:
    text = DOC.read_text("utf-8")
    for name in TARGETS:
        assert (FUZZ / f"fuzz_{name}.py").is_file()
        assert any((FUZZ / "corpus" / name).iterdir()), f"no seeds for {name}"
        assert f"`{name}`" in text, f"docs/fuzzing.md does not list {name}"


@pytest.mark.parametrize("name", TARGETS)
def test_seeds_pass_their_target(name: str) -> None:
    check = target(name)
    for path in sorted((FUZZ / "corpus" / name).iterdir()):
        check(path.read_bytes())


@pytest.mark.parametrize(("name", "path"), _regressions())
def test_a_finding_fixed_stays_fixed(name: str, path: Path) -> None:
    target(name)(path.read_bytes())


def documented_command() -> str:
    """The one line of docs/fuzzing.md that runs every target for N seconds."""
    lines = [line.strip() for line in re.findall(r"^```sh\n(.*?)^```", DOC.read_text("utf-8"),
                                                 re.S | re.M)[0].splitlines()]
    found = [line for line in lines if "fuzz/run.py --seconds" in line]
    assert len(found) == 1, found
    command: str = found[0]
    return command


@pytest.mark.slow
@pytest.mark.parametrize("name", [_open(name) for name in TARGETS])
def test_target_finds_nothing_in_its_budget(name: str, tmp_path: Path) -> None:
    assert importlib.util.find_spec("atheris"), "atheris (the test and fuzz extras) is missing"
    command = re.sub(r"--seconds \d+", f"--seconds {BUDGET}", documented_command())
    command = command.replace(".venv/bin/python", sys.executable)
    done = subprocess.run(f"{command} --artifacts {tmp_path} {name}", shell=True, cwd=ROOT,
                          capture_output=True, text=True, timeout=BUDGET * 3 + 120)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    executed = int(done.stdout.splitlines()[-1].split()[1])
    assert executed > 0, done.stdout
