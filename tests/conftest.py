"""The suite's root: its presence puts ``tests/`` on ``sys.path``, so test modules in any
folder import the shared helpers as ``support.*``."""

from __future__ import annotations
