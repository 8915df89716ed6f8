"""Agent cards: a card document through strict JSON, the card decoder (either version's
shape) and the schema check of the version its shape says (and of both versions).

Documented errors: StrictJSONError (a ValueError) for text that is not strict JSON;
:class:`~a2a_core.errors.InvalidParamsError` from the decoder; ``check_card`` raises
nothing (it returns its findings).
"""

from __future__ import annotations

from _harness import fuzz, instrumented

with instrumented(__name__ == "__main__"):
    from a2a_core._jsonrpc import DEFAULT_MAX_DEPTH
    from a2a_core._strict_json import StrictJSONError, strict_loads
    from a2a_core.errors import InvalidParamsError
    from a2a_core.models import AgentCard
    from a2a_core.schemas import check_card
    from a2a_core.wire import decode


def check(data: bytes) -> None:
    try:
        document = strict_loads(data, DEFAULT_MAX_DEPTH)
    except StrictJSONError:
        return
    try:
        decode(AgentCard, document)
    except InvalidParamsError:
        pass
    check_card(document)
    for version in ("0.3", "1.0"):
        check_card(document, version)


if __name__ == "__main__":
    fuzz(check)
