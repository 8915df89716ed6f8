"""HTTP caching for the Agent Card: validators on the server, a small cache on the client.

The server side sends ``ETag`` (quoted lowercase hex SHA-256 of the exact
body, so each encoded variant has its own), ``Last-Modified`` and
``Cache-Control`` (the A2A 1.0 specification recommends HTTP caching headers
on the card), and answers conditional requests per RFC
9110 §13. The client side stores the card per URL, revalidates with
``If-None-Match`` and ``If-Modified-Since`` and serves it while ``max-age``
says it is fresh.

Sans-IO: nothing here reads the clock; every "now" is passed in.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from .errors import RemoteProtocolError

__all__ = [
    "CARD_CACHE_CONTROL",
    "card_etag",
    "http_date",
    "parse_http_date",
    "CardValidators",
    "card_validators",
    "with_vary",
    "is_not_modified",
    "CachedCard",
    "CardCache",
]

#: Sent with every card answer: shared caches may keep it for five minutes.
CARD_CACHE_CONTROL = "public, max-age=300"

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAY = "(?:" + "|".join(_DAYS) + ")"
_LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MON = "(?P<m>" + "|".join(_MONTHS) + ")"
_TIME = r"(?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)"
#: RFC 9110 §5.6.7: IMF-fixdate, then the two obsolete forms recipients must accept.
_DATE_FORMS = tuple(
    re.compile(form, re.ASCII)
    for form in (
        rf"{_DAY}, (?P<d>\d\d) {_MON} (?P<y>\d{{4}}) {_TIME} GMT",
        rf"{_LONG_DAY}, (?P<d>\d\d)-{_MON}-(?P<y>\d\d) {_TIME} GMT",
        rf"{_DAY} {_MON} (?P<d>[ \d]\d) {_TIME} (?P<y>\d{{4}})",
    )
)
_SECONDS = re.compile(r"[0-9]+")
_ENTITY_TAG = re.compile(r'(?:W/)?"[^"]*"')


# -- dates --------------------------------------------------------------------------------


def _utc(dt: datetime) -> datetime:
    """Naive datetimes are taken as UTC; aware ones are converted to it."""
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def http_date(dt: datetime) -> str:
    """IMF-fixdate (``Sun, 06 Nov 1994 08:49:37 GMT``), built by hand: strftime is locale-bound."""
    dt = _utc(dt)
    return (
        f"{_DAYS[dt.weekday()]}, {dt.day:02d} {_MONTHS[dt.month - 1]} {dt.year:04d} "
        f"{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d} GMT"
    )


def parse_http_date(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """An aware UTC datetime from any of the three HTTP date forms; None for anything else.

    RFC 850 dates have two-digit years. Given ``now``, a year more than 50
    years ahead of it is read as the century before (RFC 9110 §5.6.7);
    without it, 00-68 means 20xx and 69-99 19xx (the POSIX pivot).
    """
    if value is None:
        return None
    for form in _DATE_FORMS:
        match = form.fullmatch(value.strip())
        if match:
            break
    else:
        return None
    year = int(match["y"])
    if len(match["y"]) == 2:
        year = _full_year(year, now)
    try:
        return datetime(
            year, _MONTHS.index(match["m"]) + 1, int(match["d"]),
            int(match["H"]), int(match["M"]), int(match["S"]), tzinfo=timezone.utc,
        )  # fmt: skip
    except ValueError:  # 31 Feb, 25:00 and the like
        return None


def _full_year(two_digits: int, now: datetime | None) -> int:
    """The full year of an RFC 850 date (see :func:`parse_http_date`)."""
    if now is None:
        return two_digits + (2000 if two_digits < 69 else 1900)
    current = _utc(now).year
    year = current - current % 100 + two_digits
    return year - 100 if year > current + 50 else year


# -- server side --------------------------------------------------------------------------


def card_etag(body: bytes) -> str:
    """A strong ETag: the same bytes always give the same tag, any change a new one."""
    return f'"{hashlib.sha256(body).hexdigest()}"'


@dataclass(frozen=True, slots=True, kw_only=True)
class CardValidators:
    """A card body with the validators and headers to send with it."""

    body: bytes
    etag: str
    #: UTC, whole seconds: what ``Last-Modified`` can express.
    last_modified: datetime

    def headers(self) -> list[tuple[str, str]]:
        """Response headers for a 200 (a 304 should repeat ETag and Cache-Control)."""
        return [
            ("Content-Type", "application/json"),
            ("ETag", self.etag),
            ("Last-Modified", http_date(self.last_modified)),
            ("Cache-Control", CARD_CACHE_CONTROL),
        ]


def card_validators(body: bytes, last_modified: datetime) -> CardValidators:
    """Validators for ``body``; ``last_modified`` is cut to the second HTTP dates carry."""
    return CardValidators(
        body=body,
        etag=card_etag(body),
        last_modified=_utc(last_modified).replace(microsecond=0),
    )


def with_vary(headers: list[tuple[str, str]], *names: str) -> list[tuple[str, str]]:
    """``headers`` with ``names`` listed in ``Vary`` (RFC 9110 §12.5.5).

    Names are merged into a ``Vary`` already there, case-insensitively and
    without repeats; ``Vary: *`` already says everything and is kept as is.
    """
    listed: list[str] = []
    for name, value in headers:
        if name.lower() == "vary":
            listed += [field.strip() for field in value.split(",") if field.strip()]
    if "*" in listed:
        return list(headers)
    known = {field.lower() for field in listed}
    for name in names:
        if name.lower() not in known:
            known.add(name.lower())
            listed.append(name)
    kept = [(name, value) for name, value in headers if name.lower() != "vary"]
    return [*kept, ("Vary", ", ".join(listed))] if listed else kept


def _opaque(tag: str) -> str:
    """The tag without its weakness prefix, for the weak comparison of RFC 9110 §8.8.3.2."""
    return tag[2:] if tag.startswith("W/") else tag


def _none_match_hits(if_none_match: str, etag: str) -> bool:
    """Whether ``If-None-Match`` names our representation (``*`` names any)."""
    if if_none_match.strip() == "*":
        return True
    ours = _opaque(etag.strip())
    return any(_opaque(tag) == ours for tag in _ENTITY_TAG.findall(if_none_match))


def is_not_modified(
    if_none_match: str | None,
    if_modified_since: str | None,
    etag: str,
    last_modified: datetime,
) -> bool:
    """Whether a GET may be answered 304 (RFC 9110 §13.1.2, §13.1.3, §13.2.2).

    If-None-Match wins when present, and If-Modified-Since is then ignored;
    a blank header counts as absent. An unparseable date is ignored.
    """
    if if_none_match is not None and if_none_match.strip():
        return _none_match_hits(if_none_match, etag)
    since = parse_http_date(if_modified_since)
    if since is None:
        return False
    return _utc(last_modified).replace(microsecond=0) <= since


# -- client side --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CachedCard:
    """One stored card body with what is needed to revalidate and age it."""

    body: bytes
    etag: str | None
    last_modified: datetime | None
    fetched_at: datetime
    #: Seconds of freshness from the last response; None: always revalidate.
    max_age: int | None
    #: The ``Age`` the response already had when it reached us.
    initial_age: int = 0


class CardCache:
    """Agent cards by URL, revalidated with conditional GETs (RFC 9111, a private cache).

    The caller does the I/O: send :meth:`request_headers` with the GET, hand
    the answer to :meth:`receive`, and skip the GET while :meth:`fresh` has a body.
    """

    def __init__(self) -> None:
        self._entries: dict[str, CachedCard] = {}

    def get(self, url: str) -> CachedCard | None:
        """The stored entry, fresh or not."""
        return self._entries.get(url)

    def discard(self, url: str) -> None:
        """Forget ``url`` (e.g. when the card turned out to be invalid)."""
        self._entries.pop(url, None)

    def request_headers(self, url: str) -> dict[str, str]:
        """The conditional headers for the next GET of ``url`` (empty when nothing is stored)."""
        entry = self._entries.get(url)
        headers: dict[str, str] = {}
        if entry is not None and entry.etag is not None:
            headers["If-None-Match"] = entry.etag
        if entry is not None and entry.last_modified is not None:
            headers["If-Modified-Since"] = http_date(entry.last_modified)
        return headers

    def receive(
        self, url: str, status: int, headers: Mapping[str, str], body: bytes, now: datetime
    ) -> bytes:
        """Record a 200 or 304 answer for ``url`` and return the card body to use.

        Raises :class:`RemoteProtocolError` for a 304 we did not ask for (nothing
        stored, or a different ETag) and ``ValueError`` for any other status,
        which is the caller's to handle.
        """
        fields = {name.lower(): value for name, value in headers.items()}
        if status == 200:
            return self._store(url, fields, body, now)
        if status == 304:
            return self._refresh(url, fields, now)
        raise ValueError(f"CardCache.receive takes 200 or 304 answers, not {status}")

    def fresh(self, url: str, now: datetime) -> bytes | None:
        """The stored body while it is fresh (RFC 9111 §4.2), else None."""
        entry = self._entries.get(url)
        if entry is None or entry.max_age is None:
            return None
        age = (_utc(now) - entry.fetched_at) + timedelta(seconds=entry.initial_age)
        return entry.body if age < timedelta(seconds=entry.max_age) else None

    def _store(self, url: str, fields: Mapping[str, str], body: bytes, now: datetime) -> bytes:
        """Keep a 200's body unless ``no-store`` forbids it."""
        directives = _cache_control(fields.get("cache-control", ""))
        if "no-store" in directives:
            self._entries.pop(url, None)
            return body
        self._entries[url] = CachedCard(
            body=body,
            etag=_etag(fields.get("etag")),
            last_modified=parse_http_date(fields.get("last-modified"), now=now),
            fetched_at=_utc(now),
            max_age=_max_age(directives),
            initial_age=_age(fields.get("age")),
        )
        return body

    def _refresh(self, url: str, fields: Mapping[str, str], now: datetime) -> bytes:
        """A 304 renews the stored entry's age and takes its new headers (RFC 9111 §4.3.4)."""
        entry = self._entries.get(url)
        if entry is None:
            raise RemoteProtocolError(f"304 Not Modified for {url}, which is not cached")
        etag = _etag(fields.get("etag"))
        if etag is not None and entry.etag is not None and _opaque(etag) != _opaque(entry.etag):
            raise RemoteProtocolError(f"304 Not Modified for {url} names another ETag: {etag}")
        directives = _cache_control(fields.get("cache-control", ""))
        modified = parse_http_date(fields.get("last-modified"), now=now)
        self._entries[url] = replace(
            entry,
            etag=etag or entry.etag,
            last_modified=modified or entry.last_modified,
            fetched_at=_utc(now),
            max_age=_max_age(directives) if directives else entry.max_age,
            initial_age=_age(fields.get("age")),
        )
        return entry.body


def _cache_control(value: str) -> dict[str, str | None]:
    """Directive name (lower case) -> argument (unquoted) or None."""
    directives: dict[str, str | None] = {}
    for part in value.split(","):
        name, sep, argument = part.strip().partition("=")
        if name:
            directives[name.strip().lower()] = argument.strip().strip('"') if sep else None
    return directives


def _max_age(directives: Mapping[str, str | None]) -> int | None:
    """Freshness lifetime in seconds; ``no-cache`` or a bad/missing max-age means none."""
    if "no-cache" in directives:
        return None
    value = directives.get("max-age")
    return int(value) if value is not None and _SECONDS.fullmatch(value) else None


def _age(value: str | None) -> int:
    """The ``Age`` header in seconds (0 when absent or malformed)."""
    value = (value or "").strip()
    return int(value) if _SECONDS.fullmatch(value) else 0


def _etag(value: str | None) -> str | None:
    """The ETag if it is one well-formed entity tag, else None (never sent back)."""
    value = (value or "").strip()
    return value if _ENTITY_TAG.fullmatch(value) else None
