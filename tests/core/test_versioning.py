"""A2A-Version normalisation and negotiation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core._versioning import (
    SUPPORTED_VERSIONS,
    V0_3,
    V1_0,
    negotiate_version,
    normalize_version,
)
from a2a_core.errors import VersionNotSupportedError

VERSION_TABLE = [
    (None, "0.3", True),
    ("", "0.3", True),
    ("   ", "0.3", True),
    (" 1.0 ", "1.0", True),
    ("1.0", "1.0", True),
    ("1.0.3", "1.0", True),
    ("1.0.0-rc1", "1.0", True),
    ("0.3.0", "0.3", True),
    ("0.3", "0.3", True),
    ("1", "1.0", True),
    ("01.00", "1.0", True),
    ("0.5", "0.5", False),
    ("1.1", "1.1", False),
    ("99.0", "99.0", False),
    ("2", "2.0", False),
    ("abc", "abc", False),
    ("v1.0", "v1.0", False),
    (" 1.x ", "1.x", False),
    ("1.0,0.3", "1.0,0.3", False),
    ("١.٠", "١.٠", False),
]


@pytest.mark.parametrize(("raw", "normalized", "supported"), VERSION_TABLE)
def test_version_table(raw: str | None, normalized: str, supported: bool) -> None:
    assert normalize_version(raw) == normalized
    if supported:
        assert negotiate_version(raw) == normalized
    else:
        with pytest.raises(VersionNotSupportedError) as info:
            negotiate_version(raw)
        error = info.value
        assert error.code == -32009
        assert repr(normalized) in error.message
        assert error.metadata["version"] == normalized
        assert error.data["version"] == normalized
        assert error.data["supported"] == ["0.3", "1.0"]
        assert all(isinstance(v, str) for v in error.metadata.values())


def test_constants() -> None:
    assert (V0_3, V1_0) == SUPPORTED_VERSIONS == ("0.3", "1.0")


@pytest.mark.parametrize(
    ("header", "query", "expected"),
    [
        ("1.0", "0.3", "1.0"),
        ("0.3", "1.0", "0.3"),
        (None, "1.0", "1.0"),
        (None, "1.0.2", "1.0"),
        ("", "1.0", "1.0"),
        ("  ", "1.0", "1.0"),
        (None, None, "0.3"),
        (None, "", "0.3"),
    ],
)
def test_header_wins_over_query(header: str | None, query: str | None, expected: str) -> None:
    assert negotiate_version(header, query=query) == expected


def test_header_wins_even_when_it_is_the_unsupported_one() -> None:
    with pytest.raises(VersionNotSupportedError):
        negotiate_version("99.0", query="1.0")


def test_custom_supported_list_is_normalized() -> None:
    assert negotiate_version("1.0.9", supported=["1.0.0"]) == "1.0"
    with pytest.raises(VersionNotSupportedError) as info:
        negotiate_version(None, supported=["1.0"])
    assert info.value.metadata == {"version": "0.3", "supported": "1.0"}


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))
def test_patch_never_matters(major: int, minor: int, patch: int) -> None:
    assert normalize_version(f"{major}.{minor}.{patch}") == f"{major}.{minor}"
    assert normalize_version(f" {major}.{minor} ") == f"{major}.{minor}"


@given(st.one_of(st.none(), st.text(max_size=12)))
def test_normalize_is_idempotent_and_trimmed(value: str | None) -> None:
    once = normalize_version(value)
    assert normalize_version(once) == once
    assert once == once.strip() and once
