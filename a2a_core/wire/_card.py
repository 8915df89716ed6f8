"""The Agent Card on the wire, in the 0.3 and the 1.0 shape, and both at once.

:func:`encode_card` writes one version; :func:`decode_card` reads either (and
the dual document) without being told which; :func:`encode_card_dual` writes
the one document we publish at ``/.well-known/agent-card.json``.

Decisions (the card sections of the 0.3 and 1.0 specifications leave these open):

* **Endpoints.** :class:`AgentCard` keeps endpoints only in
  ``supported_interfaces``. The 0.3 ``url``/``preferredTransport`` come from the
  first JSONRPC interface among those whose ``protocol_version`` is ``0.x``
  (else among all interfaces; else the first interface of that group).
  ``additionalInterfaces`` is written only when the group has more than one
  (url, binding) pair, and then lists *all* of them, the main one included, as
  the 0.3 schema's best practice asks. Reading a 0.3 card gives the main
  endpoint first, then the additional ones not equal to it, each with the
  major.minor of ``protocolVersion`` (``"0.3"`` when absent or odd).
* **Dual card.** The 1.0 card plus the 0.3 members: top-level ``url``,
  ``preferredTransport``, ``protocolVersion`` (``"0.3.0"``, as 0.3 agents
  write it), ``additionalInterfaces``,
  ``supportsAuthenticatedExtendedCard`` (only when true) and ``security``;
  ``skills[].security``; ``capabilities.stateTransitionHistory``; and, in every
  ``securitySchemes`` entry, the 0.3 members (``type``, ``in``, ``flows``…)
  merged beside the 1.0 wrapper member (``apiKeySecurityScheme``…), as the
  official SDK does. Both readers ignore members they do not know, and no 0.3
  member name collides with a 1.0 one, so each reader sees a whole card. We
  merge because nothing else can serve both: the 0.3 schema requires ``type``
  in each scheme and the strict 1.0 schema forbids it. The price: the dual
  document is *not* valid against the strict 1.0 schema (nor would it be with
  only the top-level legacy members, as the TCK's CARD-STRUCT-001 checks);
  it is valid once the 0.3 members listed here are removed. Serve
  ``encode_card(card, "1.0")`` where a strict 1.0 validator must pass.
* **Lossy spots.** 1.0 has no ``stateTransitionHistory`` and one OAuth flow
  per scheme (we write the first set one, in the order authorizationCode,
  clientCredentials, deviceCode, implicit, password). 0.3 has no tenant, no
  interface protocol version, no ``deviceCode`` flow, no ``pkceRequired`` and
  says nothing when the extended card is unsupported (``False`` reads back as
  ``None``). OAuth flow URLs the schemas require are written as ``""`` when
  unset, and ``""`` reads back as unset. An OAuth2 scheme with no flow at
  all (possible in the model) is written with ``"flows": {}``, which the 1.0
  oneof does not allow; that is the card author's mistake to fix.
* **Leniency on input.** Unknown members are ignored; JSON ``null`` counts as
  absent; ProtoJSON's snake_case member names are accepted; a 1.0 requirement
  ``{"schemes": {...}}`` and a 0.3 requirement ``{"name": [...]}`` are told
  apart by shape; a 0.3 flows object with several flows is kept whole. Only
  ``name``, ``description``, ``version`` and ``skills`` (plus an endpoint) are
  required at the top level; other required-by-spec members fall back to the
  model defaults, so a sparse card still decodes. Wrong types raise
  :class:`InvalidParamsError` naming the JSON path.
"""

from __future__ import annotations

from ._card_decode import decode_card
from ._card_encode import encode_card, encode_card_dual
from ._card_shapes import PROTOCOL_VERSION_0_3, card_shape

__all__ = ["encode_card", "encode_card_dual", "decode_card", "PROTOCOL_VERSION_0_3", "card_shape"]
