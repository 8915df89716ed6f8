"""Card answers already served, kept by what they depend on: a repeated card GET is a lookup.

The card is the hot GET path. Once the app has answered a card GET the long
way (:class:`~a2a_core.card_endpoint.CardEndpoint`), the
:class:`~a2a_core.card_endpoint.PreparedCard` it sent is kept here under the
environ values that chose it: the path, the version asked for (header and
query string, which pick the variant), what the public base URL is built
from (scheme, ``Host``, server name and port, ``SCRIPT_NAME``, the app's own
``base_url``) and whether the server runs several processes. The next GET
with the same values is answered from it: one dictionary lookup, one
identity check that the agent's card and the signer are unchanged, and the
status line and headers made when it was kept (the app adds the request id).
When nobody logs, traces or counts the request, the app answers such a hit
before it makes the request's record. Requests carrying per-request overrides
(:mod:`a2a_wsgi.overrides`) always take the long way, and so does any path
an authenticator guards.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from a2a_core.card_endpoint import CardEndpoint, PreparedCard

from .overrides import ENVIRON_KEY
from .wsgi_io import whole_body_headers

__all__ = ["CardHit", "CardHits"]

#: Keys kept: hosts times mounts times versions asked, bounded (a forged Host never gets
#: in: an untrusted one is refused before anything is kept).
_MAX_KEPT = 256

_Key = tuple[Any, ...]
_Headers = tuple[tuple[str, str], ...]

#: What a kept answer is: the status line, its headers and the body.
CardHit = tuple[str, _Headers, bytes]

#: Every CardHits of this process: a forked worker starts afresh (its first request
#: takes the long way, which sets up the worker's own threads).
_ALL: weakref.WeakSet[CardHits] = weakref.WeakSet()


def _forget_all() -> None:
    for hits in list(_ALL):
        hits.forget()


os.register_at_fork(after_in_child=_forget_all)


@dataclass(frozen=True, slots=True)
class _Kept:
    card: PreparedCard
    ok: CardHit
    not_modified: CardHit


class CardHits:
    """Prepared card answers of one app in this process, by request values."""

    def __init__(self, endpoint: CardEndpoint) -> None:
        self._endpoint = endpoint
        self._kept: dict[_Key, _Kept] = {}
        _ALL.add(self)

    @staticmethod
    def key(environ: Mapping[str, Any], base_url: str | None) -> _Key | None:
        """What a card GET's answer depends on; None when it must take the long way."""
        # (``k in environ and environ[k]`` rather than ``environ.get(k)``: no call, and this
        # runs on every request before anything else)
        if ENVIRON_KEY in environ or "REQUEST_METHOD" not in environ \
                or environ["REQUEST_METHOD"] != "GET":
            return None
        return (environ["PATH_INFO"] if "PATH_INFO" in environ else None,
                environ["HTTP_A2A_VERSION"] if "HTTP_A2A_VERSION" in environ else None,
                environ["QUERY_STRING"] if "QUERY_STRING" in environ else None,
                environ["wsgi.url_scheme"] if "wsgi.url_scheme" in environ else None,
                environ["HTTP_HOST"] if "HTTP_HOST" in environ else None,
                environ["SERVER_NAME"] if "SERVER_NAME" in environ else None,
                environ["SERVER_PORT"] if "SERVER_PORT" in environ else None,
                environ["SCRIPT_NAME"] if "SCRIPT_NAME" in environ else None, base_url,
                # a guessed memory store refuses many processes
                environ["wsgi.multiprocess"] if "wsgi.multiprocess" in environ else None)

    def keep(self, key: _Key, card: PreparedCard) -> None:
        """Remember the answer given for ``key``, both ways it may be sent."""
        if len(self._kept) >= _MAX_KEPT:
            self._kept.clear()
        self._kept[key] = _Kept(
            card,
            ("200 OK", tuple(whole_body_headers(200, "GET", card.headers, card.body)), card.body),
            ("304 Not Modified",
             tuple(whole_body_headers(304, "GET", card.not_modified_headers, b"")), b""))

    def forget(self) -> None:
        """Drop every kept answer."""
        self._kept.clear()

    def answer(self, key: _Key, environ: Mapping[str, Any]) -> CardHit | None:
        """The card answer for ``key`` from what is kept (200 or 304), or None: not kept."""
        kept = self._kept.get(key)
        if kept is None or not self._endpoint.is_current(kept.card):
            return None
        if_none_match = environ["HTTP_IF_NONE_MATCH"] if "HTTP_IF_NONE_MATCH" in environ else None
        since = environ["HTTP_IF_MODIFIED_SINCE"] if "HTTP_IF_MODIFIED_SINCE" in environ else None
        if (if_none_match is not None or since is not None) and kept.card.not_modified(
                if_none_match, since):
            return kept.not_modified
        return kept.ok
