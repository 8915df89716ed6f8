"""The ``A2A-Version`` and ``A2A-Extensions`` headers (and the ``A2A-Version`` query
parameter) as a server reads them, and the extension list as a client writes it back.

The input's lines are: the A2A-Version header, the query parameter, then any number of
A2A-Extensions / X-A2A-Extensions values. A line that is absent is a header not sent.

Documented errors: VersionNotSupportedError (an RPCError) from ``negotiate_version``;
ValueError from ``format_extensions_header`` for a URI that cannot travel in a header.
Properties: the extensions read back from what was written are the ones written.
"""

from __future__ import annotations

from _harness import fuzz, instrumented

with instrumented(__name__ == "__main__"):
    from a2a_core._versioning import negotiate_version, normalize_version
    from a2a_core.errors import RPCError
    from a2a_core.extensions import format_extensions_header, parse_extensions_header

SUPPORTED = (("0.3", "1.0"), ("1.0",), ("0.3",))


def check(data: bytes) -> None:
    lines = data.decode("utf-8", "replace").split("\n")
    header = lines[0] if lines else None
    query = lines[1] if len(lines) > 1 else None
    for supported in SUPPORTED:
        try:
            negotiate_version(header, supported, query=query)
        except RPCError:
            pass
    normalize_version(header)
    uris = parse_extensions_header(lines[2:])
    try:
        written = format_extensions_header(uris)
    except ValueError:
        return
    if parse_extensions_header(written) != uris:
        raise AssertionError(f"extensions changed on the way back: {uris!r}")


if __name__ == "__main__":
    fuzz(check)
