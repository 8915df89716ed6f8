"""``python -m a2a_client``: the ``a2a`` command without the installed script."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
