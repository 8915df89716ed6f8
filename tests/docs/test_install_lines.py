"""Every ``pip install`` that README.md and the pages of docs/ this folder runs show is one a
reader of the checkout can type: ``.venv/bin/pip install -e .`` or ``-e '.[EXTRA]'`` (plus
packages), with ``EXTRA`` an extra of pyproject.toml. ``a2a-wsgi`` is not installed from a registry.

The tests that run each recipe also check that what a line installs is installed here
(:func:`doc_shell.check_pip_line`).
"""

from __future__ import annotations

import re
import sys

import pytest
from doc_pages import ROOT, page_text

#: The pages of this folder's tests (security.md, client.md and deployment.md have their own).
PAGES = ["README.md", "agents.md", "architecture.md", "conformance.md", "inspector.md",
         "protocol.md", "push.md", "serving.md", "telemetry.md"]

_INSTALL = re.compile(r"pip install [^`\n]*")
_CHECKOUT_FORM = re.compile(r"\.venv/bin/pip install (?:-q )?-e (?:\.(?=\s|$)|'\.\[(\w+)\]')")


def _extras() -> set[str]:
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("the tests run from a copy, outside the checkout (.ci/wheel-check)")
    toml = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    return set(toml.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"])


@pytest.mark.parametrize("page", PAGES)
def test_install_lines_use_the_checkout_and_a_real_extra(page: str) -> None:
    text = page_text(page)
    for found in _INSTALL.finditer(text):
        start = text.rfind("\n", 0, found.start()) + 1
        line = text[start:found.end()]
        form = _CHECKOUT_FORM.search(line)
        assert form, f"{page}: not the checkout's install form: {line.strip()}"
        assert form[1] is None or form[1] in _extras(), (
            f"{page}: no extra {form[1]!r} in pyproject.toml")
