"""A2A protocol version negotiation (A2A 1.0 specification, "Versioning").

A 1.0 client sends ``A2A-Version: <Major.Minor>`` (or the ``A2A-Version`` query
parameter); a 0.3 client sends nothing, so a missing or empty value means
``0.3``. Only Major.Minor count: ``1.0.3`` is ``1.0`` and ``0.3.0`` is ``0.3``.

Decisions:

* A bare major (``"1"``) reads as ``"1.0"``; leading zeros are dropped
  (``"01.00"`` is ``"1.0"``); a semver pre-release or build tail on the patch
  is ignored (``"1.0.0-rc1"`` is ``"1.0"``).
* Anything else that does not parse is kept as given (trimmed), so the
  refusal names the version the client sent.
* Minor versions are distinct: ``"1.1"`` is not ``"1.0"`` (the spec says
  Major.Minor; the Python SDK matches on the major only).
* The header wins over the query parameter; a header that is present but blank
  counts as absent, so the query parameter is then used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from .errors import VersionNotSupportedError

__all__ = [
    "V0_3",
    "V1_0",
    "DEFAULT_VERSION",
    "SUPPORTED_VERSIONS",
    "normalize_version",
    "negotiate_version",
]

V0_3 = "0.3"
V1_0 = "1.0"
#: What a request without a version signal speaks (the spec's MUST).
DEFAULT_VERSION = V0_3
SUPPORTED_VERSIONS: tuple[str, ...] = (V0_3, V1_0)

_VERSION = re.compile(r"(\d+)(?:\.(\d+)(?:\.\d+(?:[-+][0-9A-Za-z.+-]*)?)?)?", re.ASCII)


def normalize_version(value: str | None) -> str:
    """Reduce a version value to ``Major.Minor``; missing or blank means ``0.3``."""
    if value is None:
        return DEFAULT_VERSION
    if value in SUPPORTED_VERSIONS:  # the usual header, already in that form
        return value
    text = value.strip()
    if not text:
        return DEFAULT_VERSION
    match = _VERSION.fullmatch(text)
    if match is None:
        return text
    major, minor = match.group(1), match.group(2) or "0"
    return f"{int(major)}.{int(minor)}"


def negotiate_version(
    header: str | None,
    supported: Iterable[str] = SUPPORTED_VERSIONS,
    *,
    query: str | None = None,
) -> str:
    """The version this request speaks, or an error naming the one we refuse.

    :param header: the ``A2A-Version`` header, ``None`` when absent.
    :param supported: the versions this server accepts (normalized here too).
    :param query: the ``A2A-Version`` query parameter, ``None`` when absent.
    :raises VersionNotSupportedError: carrying the normalized version in
        ``data`` and ``metadata["version"]``.
    """
    raw = header if header is not None and header.strip() else query
    version = normalize_version(raw)
    accepted = _accepted(tuple(supported))
    if version in accepted:
        return version
    listed = ", ".join(accepted)
    raise VersionNotSupportedError(
        f"Version not supported: {version!r} (supported: {listed})",
        {"version": version, "supported": list(accepted)},
        metadata={"version": version, "supported": listed},
    )


@functools.lru_cache(maxsize=16)
def _accepted(supported: tuple[str, ...]) -> tuple[str, ...]:
    """The supported versions normalized, without repeats (a server's list: one per app)."""
    return tuple(dict.fromkeys(normalize_version(v) for v in supported))
