"""a2a_core is sans-IO: parse every module and refuse I/O imports and calls."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import a2a_core

#: The package as imported: the checkout, or the installed wheel when the suite runs on it.
CORE = Path(a2a_core.__file__).resolve().parent

FORBIDDEN_MODULES = {
    "werkzeug", "requests", "socket", "threading", "sqlite3", "psycopg", "subprocess",
    "asyncio", "urllib.request", "http.client", "random", "secrets", "uuid", "flask", "django",
    "a2a_wsgi", "a2a_client", "multiprocessing", "concurrent", "selectors", "ssl", "shutil",
}
FORBIDDEN_CALLS = {
    "time.sleep", "time.time", "time.monotonic", "time.perf_counter", "datetime.now",
    "datetime.utcnow", "datetime.today", "date.today", "open", "os.urandom", "uuid.uuid4",
}


def _modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            for bad in FORBIDDEN_MODULES:
                if name == bad or name.startswith(bad + "."):
                    found.append(f"{path.name}:{node.lineno} imports {name}")
            if name in FORBIDDEN_CALLS:
                found.append(f"{path.name}:{node.lineno} imports {name}")
        if isinstance(node, ast.Call):
            called = _dotted(node.func)
            if called in FORBIDDEN_CALLS or any(called.endswith("." + c) for c in FORBIDDEN_CALLS):
                found.append(f"{path.name}:{node.lineno} calls {called}")
    return found


def test_core_has_modules() -> None:
    assert len(_modules()) >= 3


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(CORE)))
def test_module_is_sans_io(path: Path) -> None:
    assert _violations(path) == []


def test_the_checker_catches_violations(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import threading\nfrom werkzeug import Request\nimport time\ntime.sleep(1)\n"
        "from datetime import datetime\ndatetime.now()\nfrom a2a_client import x\n"
    )
    lines = {int(v.split(":")[1].split()[0]) for v in _violations(bad)}
    assert lines == {1, 2, 4, 6, 7}
