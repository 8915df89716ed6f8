"""The server checks its own card against the published A2A schemas before it serves.

A card that breaks the schema is a deployment mistake a client finds only when its own
validator refuses the agent; checking each variant the app serves (the dual card against
the 0.3 schema, the strict card against the 1.0 schema) when the app is assembled turns it
into one error at start, naming the member.
"""

from __future__ import annotations

import json

from a2a_core._card_endpoint import DUAL, CardEndpoint

__all__ = ["CardSchemaError", "check_served_card", "PLACEHOLDER_BASE_URL"]

#: Fills in the endpoints when no base_url is set (the card then says each request's URL).
PLACEHOLDER_BASE_URL = "http://127.0.0.1/"


class CardSchemaError(RuntimeError):
    """The card the app would serve is not valid against the published A2A schema."""


def check_served_card(endpoint: CardEndpoint, base_url: str | None) -> None:
    """Raise :class:`CardSchemaError` listing every finding in every served variant."""
    from a2a_core.schemas import check_card  # jsonschema is loaded only when an app starts

    lines = []
    for variant in endpoint.variants():
        version = "0.3" if variant == DUAL else "1.0"
        doc = json.loads(endpoint.body(base_url or PLACEHOLDER_BASE_URL, variant))
        what = "the card for 0.3 readers" if variant == DUAL else "the 1.0 card"
        lines += [f"  {what} (A2A {version} schema): {finding}"
                  for finding in check_card(doc, version).findings]
    if lines:
        raise CardSchemaError(
            "The agent card breaks the published A2A schema, so the app will not start:\n"
            + "\n".join(lines)
            + "\nFix the member named (the agent's name, description, skills, or the app's "
            "card options)."
        )
