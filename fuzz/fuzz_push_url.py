"""The webhook URL policy (SSRF): a push URL and the addresses its host resolves to, as a
server would judge them before sending a notification there.

The input's first line is the URL; each further line is an address the (stand-in)
resolver answers for its host; with none, the resolver finds nothing. Two policies judge
it: the default (public hosts only) and the one allowing loopback.

Documented errors: :class:`~a2a_wsgi.push._ssrf.UnsafeURLError` (and
UnresolvableHostError).
"""

from __future__ import annotations

from collections.abc import Sequence

from _harness import fuzz, instrument_module

from a2a_wsgi.push import _ssrf as ssrf
from a2a_wsgi.push._ssrf import UnsafeURLError, UrlPolicy

instrument_module(__name__ == "__main__", ssrf)


def check(data: bytes) -> None:
    url, *addresses = data.decode("utf-8", "replace").split("\n")

    def resolver(host: str, port: int) -> Sequence[str]:
        return addresses

    for policy in (UrlPolicy.create(resolver=resolver),
                   UrlPolicy.allowing_loopback(resolver=resolver)):
        try:
            target = policy.check(url)
        except UnsafeURLError:
            continue
        target.host_header  # noqa: B018  (what the sender writes in Host; must not raise)


if __name__ == "__main__":
    fuzz(check)
