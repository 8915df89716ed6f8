"""Agent-card caching: validators, conditional requests, HTTP dates and the client cache."""

from __future__ import annotations

import email.utils
import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core._caching import (
    CARD_CACHE_CONTROL,
    CardCache,
    card_etag,
    card_validators,
    http_date,
    is_not_modified,
    parse_http_date,
    with_vary,
)
from a2a_core.errors import RemoteProtocolError

UTC = timezone.utc
BODY = b'{"name":"Echo","version":"1.0.0"}'
#: 2026-03-01 12:00:00 UTC, a Sunday.
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
T0_HTTP = "Sun, 01 Mar 2026 12:00:00 GMT"

# -- ETag and dates ---------------------------------------------------------------------------


def test_etag_is_quoted_lowercase_sha256_of_the_body() -> None:
    assert card_etag(BODY) == '"' + hashlib.sha256(BODY).hexdigest() + '"'
    assert card_etag(b"") == '"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"'


@given(a=st.binary(), b=st.binary())
def test_etag_changes_exactly_when_the_body_does(a: bytes, b: bytes) -> None:
    tag = card_etag(a)
    assert tag[0] == tag[-1] == '"' and tag[1:-1] == tag[1:-1].lower() and len(tag) == 66
    assert (card_etag(a) == card_etag(b)) == (a == b)


def test_http_date_known_answers() -> None:
    assert http_date(datetime(1994, 11, 6, 8, 49, 37)) == "Sun, 06 Nov 1994 08:49:37 GMT"
    assert http_date(T0) == T0_HTTP
    # an aware non-UTC time is converted: 14:30 at UTC+02:00 is 12:30 GMT
    plus_two = datetime(2026, 3, 1, 14, 30, 5, 999_999, tzinfo=timezone(timedelta(hours=2)))
    assert http_date(plus_two) == "Sun, 01 Mar 2026 12:30:05 GMT"
    # and it can cross a day boundary backwards
    minus_five = datetime(2026, 2, 28, 22, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert http_date(minus_five) == "Sun, 01 Mar 2026 03:00:00 GMT"


aware = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(9998, 12, 30),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)),
                               timezone(timedelta(hours=-11))]),
)  # fmt: skip


@given(dt=aware)
def test_http_date_agrees_with_the_stdlib_and_parses_back(dt: datetime) -> None:
    text = http_date(dt)
    assert text == email.utils.format_datetime(dt.astimezone(UTC), usegmt=True)
    assert parse_http_date(text) == dt.astimezone(UTC).replace(microsecond=0)


@pytest.mark.parametrize(
    "value",
    [
        "Sun, 06 Nov 1994 08:49:37 GMT",  # IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  # obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",  # obsolete asctime
        "  Sun, 06 Nov 1994 08:49:37 GMT ",  # surrounding whitespace
    ],
)
def test_parse_http_date_accepts_the_three_forms(value: str) -> None:
    assert parse_http_date(value) == datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "yesterday",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:60 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT garbage",
        "1994-11-06T08:49:37Z",
        "Sun, ٠٦ Nov 1994 08:49:37 GMT",  # non-ASCII digits
    ],
)
def test_parse_http_date_refuses_garbage(value: str | None) -> None:
    assert parse_http_date(value) is None


def test_rfc850_two_digit_years() -> None:
    """RFC 9110 §5.6.7: more than 50 years ahead of now means the previous century."""
    assert parse_http_date("Monday, 01-Jan-35 00:00:00 GMT", now=T0) == datetime(
        2035, 1, 1, tzinfo=UTC
    )
    assert parse_http_date("Monday, 01-Jan-35 00:00:00 GMT", now=datetime(1980, 1, 1)) == datetime(
        1935, 1, 1, tzinfo=UTC
    )
    assert parse_http_date("Friday, 01-Jan-99 00:00:00 GMT", now=T0) == datetime(
        1999, 1, 1, tzinfo=UTC
    )
    assert parse_http_date("Friday, 01-Jan-99 00:00:00 GMT") == datetime(1999, 1, 1, tzinfo=UTC)
    assert parse_http_date("Thursday, 01-Jan-26 00:00:00 GMT") == datetime(2026, 1, 1, tzinfo=UTC)


# -- server side ------------------------------------------------------------------------------


def test_validators_and_headers() -> None:
    local = datetime(2026, 3, 1, 13, 0, 0, 123_456, tzinfo=timezone(timedelta(hours=1)))
    v = card_validators(BODY, local)
    assert v.body == BODY
    assert v.etag == card_etag(BODY)
    assert v.last_modified == T0 and v.last_modified.utcoffset() == timedelta(0)
    assert v.headers() == [
        ("Content-Type", "application/json"),
        ("ETag", card_etag(BODY)),
        ("Last-Modified", T0_HTTP),
        ("Cache-Control", "public, max-age=300"),
    ]
    assert CARD_CACHE_CONTROL == "public, max-age=300"
    assert card_validators(BODY, datetime(2026, 3, 1, 12, 0)).last_modified == T0  # naive = UTC


@pytest.mark.parametrize(("headers", "expected"), [
    ([("ETag", '"x"')], [("ETag", '"x"'), ("Vary", "A2A-Version")]),
    ([("Vary", "Accept-Encoding"), ("ETag", '"x"')],
     [("ETag", '"x"'), ("Vary", "Accept-Encoding, A2A-Version")]),
    ([("vary", "a2a-version")], [("Vary", "a2a-version")]),  # already listed: not doubled
    ([("Vary", "Origin"), ("Vary", " Accept ,")], [("Vary", "Origin, Accept, A2A-Version")]),
    ([("Vary", "*")], [("Vary", "*")]),  # "*" already says it varies on everything
])
def test_with_vary_merges_into_what_is_there(
        headers: list[tuple[str, str]], expected: list[tuple[str, str]]) -> None:
    assert with_vary(headers, "A2A-Version") == expected
    assert with_vary(headers, "A2A-Version", "a2a-VERSION") == expected


TAG = card_etag(BODY)
OTHER = card_etag(b"other")


@pytest.mark.parametrize(
    ("if_none_match", "expected"),
    [
        (TAG, True),  # exact
        (f"{OTHER}, {TAG}", True),  # in a list
        (f"{OTHER},{TAG} ,{OTHER}", True),  # list without spaces
        ("*", True),  # any current representation
        (" * ", True),
        (f"W/{TAG}", True),  # weak comparison ignores W/
        (f"{OTHER}, W/{TAG}", True),
        (OTHER, False),  # non-matching
        (f"{OTHER}, W/{OTHER}", False),
        (TAG[1:-1], False),  # unquoted: not an entity tag
        ("garbage", False),
        ('"', False),
    ],
)
def test_if_none_match(if_none_match: str, expected: bool) -> None:
    assert is_not_modified(if_none_match, None, TAG, T0) is expected


def test_if_none_match_against_a_weak_etag_of_ours() -> None:
    assert is_not_modified(TAG, None, f"W/{TAG}", T0)


@pytest.mark.parametrize(
    ("if_none_match", "if_modified_since", "expected"),
    [
        (None, T0_HTTP, True),  # equal
        (None, http_date(T0 + timedelta(days=1)), True),  # later
        (None, http_date(T0 - timedelta(seconds=1)), False),  # earlier
        (None, "Sunday, 01-Mar-26 12:00:00 GMT", True),  # obsolete form, equal
        (None, "garbage", False),  # unparseable: ignored
        (None, None, False),  # no condition at all
        ("", T0_HTTP, True),  # a blank If-None-Match counts as absent
        (OTHER, T0_HTTP, False),  # INM present and not matching: IMS ignored
        (OTHER, http_date(T0 + timedelta(days=1)), False),
        (TAG, http_date(T0 - timedelta(days=1)), True),  # INM matching wins over an old IMS
        ("garbage", T0_HTTP, False),
    ],
)
def test_if_modified_since(
    if_none_match: str | None, if_modified_since: str | None, expected: bool
) -> None:
    assert is_not_modified(if_none_match, if_modified_since, TAG, T0) is expected


def test_if_modified_since_compares_whole_seconds() -> None:
    """Last-Modified cannot carry the sub-second part, so it must not cause a 200."""
    precise = T0 + timedelta(microseconds=700_000)
    assert is_not_modified(None, http_date(precise), TAG, precise)
    local = T0.astimezone(timezone(timedelta(hours=-3)))
    assert is_not_modified(None, T0_HTTP, TAG, local)
    assert is_not_modified(None, T0_HTTP, TAG, datetime(2026, 3, 1, 12, 0))  # naive = UTC
    assert not is_not_modified(None, T0_HTTP, TAG, T0 + timedelta(seconds=1))


# -- client side ------------------------------------------------------------------------------

URL = "https://agent.example/.well-known/agent-card.json"


def serve(request: Mapping[str, str], body: bytes = BODY) -> tuple[int, dict[str, str], bytes]:
    """A card endpoint made of the server-side pieces (what a2a_wsgi will do)."""
    v = card_validators(body, T0)
    headers = dict(v.headers())
    if is_not_modified(
        request.get("If-None-Match"), request.get("If-Modified-Since"), v.etag, v.last_modified
    ):
        return 304, {"ETag": v.etag, "Cache-Control": CARD_CACHE_CONTROL}, b""
    return 200, headers, body


def test_empty_cache() -> None:
    cache = CardCache()
    assert cache.request_headers(URL) == {}
    assert cache.fresh(URL, T0) is None
    assert cache.get(URL) is None


def test_200_then_fresh_then_304_revalidation() -> None:
    cache = CardCache()
    status, headers, body = serve(cache.request_headers(URL))
    assert status == 200
    assert cache.receive(URL, status, headers, body, T0) == BODY
    assert cache.request_headers(URL) == {"If-None-Match": TAG, "If-Modified-Since": T0_HTTP}
    # fresh for max-age=300 seconds, counted from the fetch
    assert cache.fresh(URL, T0 + timedelta(seconds=299)) == BODY
    assert cache.fresh(URL, T0 + timedelta(seconds=300)) is None
    # revalidate: the server answers 304 with an empty body, we get the stored card back
    later = T0 + timedelta(seconds=400)
    status, headers, body = serve(cache.request_headers(URL))
    assert (status, body) == (304, b"")
    assert cache.receive(URL, status, headers, body, later) == BODY
    assert cache.fresh(URL, later + timedelta(seconds=299)) == BODY
    assert cache.fresh(URL, later + timedelta(seconds=300)) is None


def test_a_changed_card_is_fetched_again() -> None:
    cache = CardCache()
    cache.receive(URL, *serve({}), T0)
    new = b'{"name":"Echo","version":"1.0.1"}'
    status, headers, body = serve(cache.request_headers(URL), new)
    assert status == 200
    assert cache.receive(URL, status, headers, body, T0) == new
    assert cache.request_headers(URL)["If-None-Match"] == card_etag(new)


def test_header_names_are_case_insensitive() -> None:
    cache = CardCache()
    headers = {"etag": TAG, "LAST-MODIFIED": T0_HTTP, "cache-CONTROL": "Max-Age=60"}
    cache.receive(URL, 200, headers, BODY, T0)
    assert cache.request_headers(URL) == {"If-None-Match": TAG, "If-Modified-Since": T0_HTTP}
    assert cache.fresh(URL, T0 + timedelta(seconds=59)) == BODY
    assert cache.fresh(URL, T0 + timedelta(seconds=60)) is None


def test_304_for_an_unknown_url_is_a_protocol_error() -> None:
    cache = CardCache()
    with pytest.raises(RemoteProtocolError):
        cache.receive(URL, 304, {"ETag": TAG}, b"", T0)
    cache.receive(URL, 200, {"ETag": TAG}, BODY, T0)
    with pytest.raises(RemoteProtocolError):
        cache.receive(URL + "?other", 304, {}, b"", T0)


def test_304_naming_another_etag_is_a_protocol_error() -> None:
    cache = CardCache()
    cache.receive(URL, 200, {"ETag": TAG}, BODY, T0)
    with pytest.raises(RemoteProtocolError):
        cache.receive(URL, 304, {"ETag": OTHER}, b"", T0)
    assert cache.receive(URL, 304, {"ETag": f"W/{TAG}"}, b"", T0) == BODY  # weak comparison


@pytest.mark.parametrize("status", [201, 204, 301, 404, 500])
def test_other_statuses_are_the_callers_business(status: int) -> None:
    cache = CardCache()
    with pytest.raises(ValueError, match=str(status)):
        cache.receive(URL, status, {}, b"", T0)


def test_max_age_variants() -> None:
    cache = CardCache()
    cases = {
        "no-store": (False, None),  # not stored at all
        "no-cache, max-age=300": (True, None),  # stored, but always revalidated
        "public": (True, None),  # no max-age: no freshness
        "max-age=abc": (True, None),
        'max-age="10"': (True, 10),
        "private, max-age=10": (True, 10),
    }
    for directive, (stored, max_age) in cases.items():
        url = f"{URL}#{directive}"
        assert cache.receive(url, 200, {"Cache-Control": directive, "ETag": TAG}, BODY, T0) == BODY
        assert (cache.get(url) is not None) is stored, directive
        fresh = cache.fresh(url, T0 + timedelta(seconds=5))
        assert fresh == (BODY if max_age else None), directive
        assert cache.fresh(url, T0 + timedelta(seconds=10)) is None


def test_age_header_counts_against_freshness() -> None:
    cache = CardCache()
    cache.receive(URL, 200, {"Cache-Control": "max-age=300", "Age": "290"}, BODY, T0)
    assert cache.fresh(URL, T0 + timedelta(seconds=9)) == BODY
    assert cache.fresh(URL, T0 + timedelta(seconds=10)) is None


def test_no_store_drops_an_older_entry_and_discard_forgets() -> None:
    cache = CardCache()
    cache.receive(URL, 200, {"ETag": TAG}, BODY, T0)
    cache.receive(URL, 200, {"Cache-Control": "no-store"}, b"{}", T0)
    assert cache.get(URL) is None
    cache.receive(URL, 200, {"ETag": TAG}, BODY, T0)
    cache.discard(URL)
    assert cache.request_headers(URL) == {}


def test_only_well_formed_validators_are_sent_back() -> None:
    cache = CardCache()
    cache.receive(URL, 200, {"ETag": "not-quoted", "Last-Modified": "soon"}, BODY, T0)
    assert cache.request_headers(URL) == {}
    # a later 304 may supply what was missing
    cache.receive(URL, 304, {"ETag": TAG, "Last-Modified": T0_HTTP}, b"", T0)
    assert cache.request_headers(URL) == {"If-None-Match": TAG, "If-Modified-Since": T0_HTTP}
