"""One import path per public name, and a top-level namespace a newcomer reads in a minute.

A name is public where a module without a leading underscore in its dotted path lists it in
``__all__``. In a2a_core each such name is listed by exactly one module (its facade, the
implementation module being private); no module of the packages star-imports another; and
the client's namespace holds its own names, not the core's errors.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import pytest

import a2a_client
import a2a_core

ROOT = Path(a2a_core.__file__).resolve().parent.parent
PACKAGES = ("a2a_core", "a2a_wsgi", "a2a_client", "a2a_inspector")


def _public_modules(package: str) -> list[ModuleType]:
    top = importlib.import_module(package)
    found = [top]
    for info in pkgutil.walk_packages(top.__path__, package + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(importlib.import_module(info.name))
    return found


def _listed_twice(modules: list[ModuleType]) -> dict[str, list[str]]:
    """Names whose object ``__all__`` lists in more than one of ``modules``."""
    where: defaultdict[tuple[str, int], list[str]] = defaultdict(list)
    for module in modules:
        for name in getattr(module, "__all__", ()):
            where[(name, id(getattr(module, name)))].append(module.__name__)
    return {name: homes for (name, _), homes in where.items() if len(homes) > 1}


def test_the_core_namespace_is_small_and_deliberate() -> None:
    assert "__version__" in a2a_core.__all__
    assert len(a2a_core.__all__) <= 50
    for name in a2a_core.__all__:
        assert hasattr(a2a_core, name), name


def test_every_public_name_of_the_core_has_one_import_path() -> None:
    modules = _public_modules("a2a_core")
    assert {"a2a_core.models", "a2a_core.errors", "a2a_core.signing", "a2a_core.wire"} <= {
        m.__name__ for m in modules}
    assert _listed_twice(modules) == {}


def test_the_check_finds_a_name_listed_by_two_modules() -> None:
    facade, impl = ModuleType("facade"), ModuleType("impl")
    marker = object()
    for module in (facade, impl):
        module.Thing = marker  # type: ignore[attr-defined]
        module.__all__ = ["Thing"]  # type: ignore[attr-defined]
    assert _listed_twice([facade, impl]) == {"Thing": ["facade", "impl"]}


def test_the_client_namespace_holds_no_core_name() -> None:
    core = {name for m in _public_modules("a2a_core") for name in getattr(m, "__all__", ())}
    assert not set(a2a_client.__all__) & core


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_star_imports(package: str) -> None:
    stars = []
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        stars += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)]
    assert stars == []

