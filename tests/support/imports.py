"""A module's imports read with ``ast``, for the tests that bound what may import what."""

from __future__ import annotations

import ast

__all__ = ["absolute_imports"]


def absolute_imports(node: ast.AST) -> list[str]:
    """The modules an ``import`` or absolute ``from … import`` node names (a from-import's
    module, not its names); nothing for a relative import or any other node."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []
