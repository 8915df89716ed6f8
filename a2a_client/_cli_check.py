"""``a2a card URL --check``: the served card's findings against the published schemas."""

from __future__ import annotations

import argparse

from ._card_check import ServedCardCheck, check_served_cards
from ._cli_exits import EXIT_OK, EXIT_PROTOCOL
from ._cli_output import Output
from ._transport import Transport
from .auth import as_auth

__all__ = ["check_card_command"]


def _label(served: ServedCardCheck) -> str:
    asked = f" (asked with A2A-Version: {served.asked_version})" if served.asked_version else ""
    return f"{served.url}{asked}"


def check_card_command(args: argparse.Namespace, out: Output) -> int:
    """Print each served card's findings; exit non-zero (invalid answer) when there is one."""
    transport = Transport(headers=dict(args.header), auth=as_auth(args.token),
                          auth_origins=[args.url])
    try:
        checks = check_served_cards(transport, args.url,
                                    timeout=(min(args.timeout, 10.0), args.timeout))
    finally:
        transport.close()
    valid = all(c.check.ok for c in checks)
    if out.as_json:
        out.json({"valid": valid, "cards": [
            {"url": c.url, "askedVersion": c.asked_version or None, "schema": c.check.version,
             "findings": [{"path": f.path, "message": f.message} for f in c.check.findings]}
            for c in checks]})
    else:
        for c in checks:
            verdict = ("valid" if c.check.ok
                       else f"{len(c.check.findings)} finding(s)")
            out.line(f"{_label(c)}: {verdict} against the A2A {c.check.version} schema")
            for finding in c.check.findings:
                out.line(f"  {finding}")
    return EXIT_OK if valid else EXIT_PROTOCOL
