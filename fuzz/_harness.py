"""What the fuzz targets share: instrumenting our packages for atheris, and running one.

A target is a module of this folder with ``check(data: bytes) -> None``: it feeds the bytes
to one parser and lets through only the errors that parser documents. Anything else it
raises is a finding, as is an input that takes longer than a second (``-timeout=1``) or
makes the process grow past ``-rss_limit_mb`` (inputs are at most ``-max_len`` bytes, so
that is memory not bounded by the input's size). ``fuzz/run.py`` sets those flags.

Without atheris (the regression tests run ``check`` in-process on the corpora and every
crasher kept in ``regressions/``) nothing is instrumented.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
#: Seed inputs per target (fuzz/seeds.py writes them), kept in the repository.
CORPUS = HERE / "corpus"
#: Every input that once was a finding, per target: regression inputs for ever.
REGRESSIONS = HERE / "regressions"
#: The packages whose code coverage guides the fuzzer (a target may name fewer modules:
#: instrumenting costs start-up time).
PACKAGES = ("a2a_core", "a2a_client")


@contextlib.contextmanager
def instrumented(fuzzing: bool, include: Sequence[str] = PACKAGES) -> Iterator[None]:
    """Imports inside (of the packages ``include`` names) are instrumented for coverage
    when ``fuzzing`` (the target runs as a script: ``__name__ == "__main__"``); otherwise
    nothing happens."""
    if not fuzzing:
        yield
        return
    import atheris  # type: ignore[import-untyped]  # (absent: pip install -e '.[fuzz]')

    with atheris.instrument_imports(include=list(include)):
        yield


def instrument_module(fuzzing: bool, module: ModuleType) -> None:
    """Instrument the functions and methods ``module`` defines (when ``fuzzing``): for a
    module of a2a_wsgi, whose package is too big to instrument whole at every start."""
    if not fuzzing:
        return
    import atheris

    for value in list(vars(module).values()):
        members = vars(value).values() if isinstance(value, type) else [value]
        for member in members:
            func = getattr(member, "__func__", member)  # (class and static methods)
            if inspect.isfunction(func) and func.__module__ == module.__name__:
                atheris.instrument_func(func)


def fuzz(check: Callable[[bytes], None]) -> None:
    """Run ``check`` under atheris with the command line's libFuzzer flags and corpora."""
    import atheris

    logging.disable(logging.CRITICAL)  # (skipped events are logged: noise at this rate)
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()
