"""Every use of gunicorn's code is in a2a_wsgi/_gunicorn_internals.py: the one module to read
(its docstring lists what it relies on) when a gunicorn release changes something."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.gunicorn import ROOT, free_port, stop_group
from support.imports import absolute_imports

import a2a_client
import a2a_core
import a2a_inspector
import a2a_wsgi
from a2a_wsgi._gunicorn_internals import WorkerSettings, worker_settings

PACKAGES = {package.__name__: Path(package.__file__ or "").parent
            for package in (a2a_core, a2a_wsgi, a2a_client, a2a_inspector)}
INTERNALS = "a2a_wsgi/_gunicorn_internals.py"


def _gunicorn_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of each import of gunicorn anywhere in ``tree``, inside functions
    and classes too, and of each ``importlib.import_module``/``__import__`` of it by name."""
    found = []
    for node in ast.walk(tree):
        names = absolute_imports(node)
        if (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and ast.unparse(node.func) in ("importlib.import_module", "import_module",
                                             "__import__")):
            names = [node.args[0].value]
        found += [(getattr(node, "lineno", 0), name) for name in names
                  if name.split(".")[0] == "gunicorn"]
    return sorted(found)


def _sources() -> dict[str, ast.AST]:
    return {f"{name}/{path.relative_to(root)}": ast.parse(path.read_text(encoding="utf-8"))
            for name, root in PACKAGES.items() for path in sorted(root.rglob("*.py"))}


def test_only_the_internals_module_imports_gunicorn() -> None:
    sources = _sources()
    assert len(sources) > 50 and INTERNALS in sources  # the walk found the packages
    users = {path: lines for path, tree in sources.items() if (lines := _gunicorn_imports(tree))}
    assert INTERNALS in users  # the check sees the imports it is looking for
    del users[INTERNALS]
    assert users == {}


def test_the_check_sees_imports_at_any_depth() -> None:
    code = ("import gunicorn\n"
            "def f():\n    from gunicorn.util import import_app\n"
            "class C:\n    def m(self):\n        import gunicorn.arbiter as a\n"
            "importlib.import_module('gunicorn.errors')\n"
            "from . import gunicorn_config\nimport gunicornish\n")
    assert [name for _, name in _gunicorn_imports(ast.parse(code))] == [
        "gunicorn", "gunicorn.util", "gunicorn.arbiter", "gunicorn.errors"]


def test_the_internals_import_gunicorn_only_when_used() -> None:
    """Importing the package, the internals, and every module that calls them loads no
    gunicorn: the master's and the workers' code pays for it, an app's import does not."""
    modules = ["a2a_wsgi", "a2a_wsgi._gunicorn_internals", "a2a_wsgi._serve",
               "a2a_wsgi._serve_shutdown", "a2a_wsgi._serve_checks", "a2a_wsgi._admission",
               "a2a_wsgi._parking", "a2a_wsgi.gunicorn_config", "a2a_wsgi._cli",
               "a2a_wsgi.grpc.__main__"]
    code = (f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'gunicorn'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_workers_settings_are_read_from_gunicorns_own_config() -> None:
    """The attribute names read, as the installed gunicorn spells them."""
    from gunicorn.config import Config  # type: ignore[import-untyped]

    cfg = Config()
    for key, value in {"workers": 4, "worker_class": "gevent", "threads": 8,
                       "worker_connections": 500}.items():
        cfg.set(key, value)
    assert worker_settings(SimpleNamespace(cfg=cfg)) == WorkerSettings(
        workers=4, worker_class="gevent", threads=8, connections=500)
    cfg.set("worker_class", "gthread")
    assert worker_settings(SimpleNamespace(cfg=cfg)).worker_class == "gthread"


@pytest.mark.parametrize("workers", ["4", None])
def test_a_worker_count_that_is_not_a_number_counts_as_one(workers: object) -> None:
    cfg = SimpleNamespace(workers=workers, worker_class_str="sync")
    assert worker_settings(SimpleNamespace(cfg=cfg)) == WorkerSettings(
        workers=1, worker_class="sync", threads=1, connections=1000)


@pytest.mark.slow
def test_run_gunicorn_with_no_app_there_stops_as_gunicorn_does() -> None:
    """A worker's :class:`AppImportError` is gunicorn's again for its master: each worker
    prints the message, and the master stops with gunicorn's "app failed to load" code."""
    code = ("from a2a_wsgi import run_gunicorn\n"
            f"run_gunicorn('examples.echo:nope', bind='127.0.0.1:{free_port()}', workers=2, "
            "worker_class='gthread')")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = proc.communicate(timeout=60)[1].decode(errors="replace")
    finally:
        stop_group(proc)  # had it kept running: gunicorn and its workers
    assert proc.returncode == 4
    assert "Failed to find attribute 'nope' in 'examples.echo'." in err.splitlines()
    assert "Traceback" not in err
