"""a2a_core: the sans-IO protocol core shared by a2a_wsgi and a2a_client.

Nothing in this package opens a socket, a file or a database, starts a
thread, sleeps, reads the clock or makes a random id except through callables
passed in. ``tests/core/test_boundaries.py`` enforces it.
"""

from __future__ import annotations

from .errors import *  # noqa: F403
from .errors import __all__ as _errors_all
from .methods import METHODS as METHODS
from .methods import Operation as Operation
from .models import *  # noqa: F403
from .models import __all__ as _models_all

__version__ = "0.1.0"

__all__ = ["__version__", "METHODS", "Operation", *_errors_all, *_models_all]
