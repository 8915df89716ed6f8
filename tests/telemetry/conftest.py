from __future__ import annotations

import sys
from pathlib import Path

# The webhook receiver of the push tests (tests/push/push_receiver.py) serves here too.
_PUSH = str(Path(__file__).resolve().parents[1] / "push")
if _PUSH not in sys.path:
    sys.path.insert(0, _PUSH)
