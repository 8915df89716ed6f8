"""The public API of docs/api.md: the docs import only from it, each of its modules says what
it exports, the lazy top levels load nothing until used, and the rest is private by name."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import a2a_core
import a2a_wsgi

ROOT = Path(__file__).resolve().parent.parent  # the docs (a copy of tests/ has them too)
#: The packages as imported: the checkout, or the installed wheel (.ci/wheel-check).
SOURCES = Path(a2a_core.__file__).resolve().parent.parent
PACKAGES = ("a2a_core", "a2a_wsgi", "a2a_client")

#: The modules a user imports from; docs/api.md lists the same set.
PUBLIC = frozenset({
    "a2a_core", "a2a_core.models", "a2a_core.errors", "a2a_core.wire", "a2a_core.optable",
    "a2a_core.auth", "a2a_core.extensions", "a2a_core.signing", "a2a_core.schemas",
    "a2a_wsgi", "a2a_wsgi.settings", "a2a_wsgi.auth", "a2a_wsgi.push", "a2a_wsgi.stores",
    "a2a_wsgi.grpc", "a2a_wsgi.frameworks", "a2a_wsgi.frameworks.flask",
    "a2a_wsgi.frameworks.django", "a2a_wsgi.execution", "a2a_wsgi.celery_executor",
    "a2a_wsgi.gunicorn_config",
    "a2a_client", "a2a_client.auth", "a2a_client.tools", "a2a_client.grpc_binding",
    "a2a_client.cli",
})
#: Public packages that only hold public modules (nothing of their own to list in api.md).
CONTAINERS = frozenset({"a2a_wsgi.frameworks"})
#: Third-party packages a public module needs that an extra installs.
EXTRAS = ("grpc", "google", "celery", "flask", "django", "psycopg", "jwt", "cryptography")

_OURS = r"a2a_(?:core|wsgi|client)(?:\.\w+)*"
_FROM = re.compile(rf"\bfrom ({_OURS}) import \(?([\w ,]+)")
_IMPORT = re.compile(rf"^\s*import ({_OURS})", re.MULTILINE)
_MODULE_RUN = re.compile(rf"(?:python3? -m |python:)({_OURS})")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _block_imports(code: str) -> list[tuple[str, tuple[str, ...]]]:
    """(module, names) of each import of ours in a Python block; by pattern if it does not
    parse (a fragment with ``…``)."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return _text_imports(code)
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, ()) for alias in node.names)
    return [(module, names) for module, names in found if re.fullmatch(_OURS, module)]


def _text_imports(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Imports written anywhere else: inline code, ``python -c``, ``python -m``, ``python:``."""
    found = [(module, tuple(n.split(" as ")[0].strip() for n in names.split(",") if n.strip()))
             for module, names in _FROM.findall(text)]
    found += [(module, ()) for module in _IMPORT.findall(text)]
    found += [(module, ()) for module in _MODULE_RUN.findall(text)]
    return found


def doc_imports(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """Every import of our packages that ``path`` shows, in code blocks and in its prose."""
    text = path.read_text(encoding="utf-8")
    found: list[tuple[str, tuple[str, ...]]] = []
    for language, code in _FENCE.findall(text):
        found += _block_imports(code) if language in ("python", "py") else _text_imports(code)
    found += _text_imports(_FENCE.sub("", text))
    return found


def _import(module: str) -> object:
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # an extra that is not installed here
        if exc.name and exc.name.split(".")[0] in EXTRAS:
            pytest.skip(f"{module} needs {exc.name}")
        raise


@pytest.mark.parametrize("path", _docs(), ids=lambda p: p.name)
def test_docs_import_only_public_modules_and_names(path: Path) -> None:
    wrong = []
    for module, names in doc_imports(path):
        if module not in PUBLIC:
            wrong.append(f"{module} is not a public module (docs/api.md)")
            continue
        exported = set(getattr(_import(module), "__all__", ()))
        wrong += [f"{module}.{name} is not in its __all__" for name in names
                  if name not in exported and f"{module}.{name}" not in PUBLIC]
    assert not wrong, f"{path.name}: " + "; ".join(sorted(set(wrong)))


def test_the_scan_finds_the_imports_the_docs_show() -> None:
    """The scan is not blind: README's server, a fragment, prose and module runs are seen."""
    readme = doc_imports(ROOT / "README.md")
    assert ("a2a_wsgi", ("A2AApp", "Agent", "AgentContext", "reply")) in readme
    assert ("a2a_client", ("A2AClient",)) in readme
    assert ("a2a_core.errors", ("TaskNotFoundError",)) in doc_imports(ROOT / "docs" / "client.md")
    assert ("a2a_wsgi.grpc", ()) in doc_imports(ROOT / "docs" / "grpc.md")
    assert ("a2a_wsgi.gunicorn_config", ()) in readme
    fragment = "from a2a_wsgi._app import A2AApp\nwith x as y: …\n"
    assert _block_imports(fragment) == [("a2a_wsgi._app", ("A2AApp",))]


def test_api_md_lists_the_public_modules() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    listed = set(re.findall(rf"^\| `({_OURS})` \|", text, re.MULTILINE))
    assert listed == PUBLIC - CONTAINERS


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_public_module_lists_its_names_and_they_resolve(name: str) -> None:
    module = _import(name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list), f"{name} has no __all__"
    assert len(exported) == len(set(exported)), f"{name}.__all__ repeats a name"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it does not have: {missing}"


def _lazy_packages() -> list[Path]:
    inits = sorted(p for package in PACKAGES for p in (SOURCES / package).rglob("__init__.py"))
    return [p for p in inits if "lazy_exports(" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("init", _lazy_packages(),
                         ids=lambda p: str(p.parent.relative_to(SOURCES)))
def test_lazy_tables_match_the_typed_imports(init: Path) -> None:
    """A lazy ``__init__`` states each name twice (TYPE_CHECKING imports for mypy, the table
    its ``__getattr__`` reads): the two agree, and cover ``__all__``."""
    package = ".".join(init.parent.relative_to(SOURCES).parts)
    typed: dict[str, str] = {}
    tree = ast.parse(init.read_text(encoding="utf-8"))
    own = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.body:
                assert isinstance(child, ast.ImportFrom) and child.level == 1, ast.unparse(child)
                for alias in child.names:
                    assert alias.asname == alias.name, "re-export as itself"
                    typed[alias.name] = f"{package}.{child.module}"
    module = importlib.import_module(package)
    assert typed == dict(module._WHERE)
    assert set(module.__all__) <= set(typed) | own
    assert sorted(module.__all__) == sorted(n for n in dir(module) if n in module.__all__)


def test_the_top_levels_load_nothing_until_a_name_is_used() -> None:
    code = ("import sys, a2a_wsgi, a2a_client; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('a2a_core', 'a2a_wsgi', 'a2a_client', 'werkzeug', 'requests')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "['a2a_client', 'a2a_core', 'a2a_core._lazy', 'a2a_wsgi']"


def test_a2a_version_imports_nothing_of_the_client() -> None:
    code = ("import sys; from a2a_client.cli import main; code = main(['--version']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('a2a_client', 'requests', 'a2a_wsgi'))); sys.exit(code)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    version, loaded = out.stdout.splitlines()
    assert version == f"a2a {a2a_core.__version__}"
    assert loaded == ("['a2a_client', 'a2a_client._cli_exits', 'a2a_client._cli_signals', "
                      "'a2a_client.cli']")


def test_a_name_is_the_same_object_however_it_is_reached() -> None:
    from a2a_wsgi import A2AApp, serve

    importlib.import_module(serve.__module__)  # the module defining serve(), imported too
    from a2a_wsgi import serve as again  # still the function, not that module

    assert again is serve and callable(serve)
    assert importlib.import_module(serve.__module__).serve is serve
    assert sys.modules[A2AApp.__module__].A2AApp is A2AApp is a2a_wsgi.A2AApp
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        a2a_wsgi.Nope  # noqa: B018


def _modules() -> list[str]:
    found = []
    for package in PACKAGES:
        path = [str(SOURCES / package)]
        found.append(package)
        found += [m.name for m in pkgutil.walk_packages(path, package + ".")
                  if not m.name.endswith(".__main__")]
    return found


def test_every_other_module_is_private_by_name() -> None:
    public_or_inside = [m for m in _modules() if m not in PUBLIC
                        and not any(part.startswith("_") for part in m.split("."))]
    assert not public_or_inside, f"neither public nor private by name: {public_or_inside}"
