"""a2a_core is sans-IO, and the packages around it import one way.

Every core module is parsed and I/O imports and calls are refused; the server
(a2a_wsgi), the client (a2a_client) and the inspector site (a2a_inspector) never import
one another, but for the ``a2a`` command loading the server lazily.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from support.imports import absolute_imports

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
        names = absolute_imports(node)
        if names and isinstance(node, ast.ImportFrom):  # its names may be modules too
            names += [f"{node.module}.{a.name}" for a in node.names]
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


# The packages around the core: the server and the client share only a2a_core and the
# inspector site (a2a_inspector), which imports neither of them.
ROOT = CORE.parent
#: package -> the packages it must never import.
APART = {
    "a2a_wsgi": {"a2a_client"},
    "a2a_client": {"a2a_wsgi"},
    "a2a_inspector": {"a2a_wsgi", "a2a_client", "werkzeug"},
}
#: The one lazy way across: the ``a2a`` command loads the server for ``a2a serve`` / ``a2a db``.
LAZY_ALLOWED = {("a2a_client/cli.py", "a2a_wsgi._cli"), ("a2a_client/cli.py", "a2a_wsgi._db_cli")}


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(module, line, inside a function) for every absolute import in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.module, child.lineno, in_function))
            visit(child, in_function or isinstance(child, (ast.FunctionDef,
                                                           ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


def _crossings(package: str) -> list[str]:
    """Imports in ``package`` of a package it must stay apart from (the allowed lazy ones aside)."""
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        where = str(path.relative_to(ROOT))
        for module, line, in_function in _imports(path):
            top = module.split(".")[0]
            if top not in APART[package]:
                continue
            if in_function and (where, module) in LAZY_ALLOWED:
                continue
            bad.append(f"{where}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("package", sorted(APART))
def test_server_client_and_inspector_site_import_one_way(package: str) -> None:
    assert len(list((ROOT / package).rglob("*.py"))) >= 2
    assert _crossings(package) == []


def test_the_crossing_check_catches_module_level_and_unlisted_lazy_imports(
        tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import a2a_client._cards\nfrom a2a_client import A2AClient\n"
        "def f():\n    from a2a_client._rpc import x\n"
        "def g():\n    import a2a_core\n"
    )
    assert [(m, line, lazy) for m, line, lazy in _imports(bad)] == [
        ("a2a_client._cards", 1, False), ("a2a_client", 2, False),
        ("a2a_client._rpc", 4, True), ("a2a_core", 6, True)]


@pytest.mark.parametrize(("package", "absent"), [
    ("a2a_wsgi", "a2a_client"), ("a2a_client", "a2a_wsgi"), ("a2a_client.cli", "a2a_wsgi"),
    ("a2a_inspector", "a2a_wsgi"), ("a2a_inspector", "a2a_client"),
])
def test_importing_one_side_loads_nothing_of_the_other(package: str, absent: str) -> None:
    code = (f"import sys, {package}\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] == {absent!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
