"""Names a package exports without importing their modules until one is first used.

A package ``__init__`` lists its exports twice: as imports under ``TYPE_CHECKING`` (for
mypy and readers) and in a table of name -> module handed to :func:`lazy_exports`, whose
``__getattr__`` (PEP 562) imports the module on the first access and keeps the value in
the package's namespace. ``tests/test_public_surface.py`` checks that the two agree and that
each name in ``__all__`` resolves. So ``import a2a_wsgi`` costs a few dictionaries, and an
app that never signs, pushes or checks a JWT never imports what those need.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping, MutableMapping
from types import ModuleType

__all__ = ["lazy_exports"]


class _Package(ModuleType):
    """A package some of whose exported names are also the names of its submodules (the
    function ``a2a_wsgi.serve`` in the module ``a2a_wsgi.serve``): importing the submodule
    sets the package's attribute to the module; this keeps the exported name instead."""

    _shadowed: Collection[str] = ()

    def __setattr__(self, name: str, value: object) -> None:
        if name in self._shadowed and isinstance(value, ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


def lazy_exports(
    package: str, where: Mapping[str, str], namespace: MutableMapping[str, object],
    shadowed: Collection[str] = (),
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``where`` maps each exported name to
    the module that defines it. ``shadowed`` names a submodule's own export of its name, which
    the package keeps when the submodule is imported (see :class:`_Package`)."""
    if shadowed:
        module = sys.modules[package]
        module.__class__ = _Package
        object.__setattr__(module, "_shadowed", frozenset(shadowed))

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
