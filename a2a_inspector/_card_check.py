"""``POST <prefix>/card-check``: the Card tab's findings against the published schemas.

The page sends the card document it fetched; the answer is what
:func:`a2a_core.schemas.check_card` finds, the same findings as ``a2a card --check`` and the
server's own check at start. Pure computation on the posted bytes: nothing is fetched,
stored or changed, so it needs no more protection than the page itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["CARD_CHECK", "MAX_CARD_BYTES", "card_check_answer"]

#: The file name the page posts to, below the inspector's prefix.
CARD_CHECK = "card-check"
#: A posted card larger than this is refused (413).
MAX_CARD_BYTES = 1 << 20


def card_check_answer(environ: Mapping[str, Any]) -> tuple[str, bytes]:
    """(HTTP status, JSON body) for one posted card: ``{"schema", "findings": [...]}``."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = -1
    if length < 0 or length > MAX_CARD_BYTES:
        return "413 Content Too Large", _error(f"a card of at most {MAX_CARD_BYTES} bytes")
    body = environ["wsgi.input"].read(length) if length else b""
    try:
        document = json.loads(body)
    except ValueError:
        return "400 Bad Request", _error("the body is not JSON")
    from a2a_core.schemas import check_card  # jsonschema is loaded on the first check only

    result = check_card(document)
    return "200 OK", json.dumps({
        "schema": result.version,
        "findings": [{"path": f.path, "message": f.message} for f in result.findings],
    }).encode()


def _error(text: str) -> bytes:
    return json.dumps({"error": text}).encode()
