"""RFC 8785 (JCS) as the rfc8785 package does it: the RFC's examples, and the cases that broke
cross-SDK verification (what a card signature covers depends on every one of them)."""

from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core.signing import MAX_DEPTH, CanonicalizationError, canonical_card, canonicalize

# RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def _double(bits: str) -> float:
    return float(struct.unpack(">d", bytes.fromhex(bits))[0])


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B)
def test_appendix_b_numbers(bits: str, expected: str) -> None:
    assert canonicalize(_double(bits)) == expected.encode()


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"])
def test_nan_and_infinity_have_no_canonical_form(bits: str) -> None:
    with pytest.raises(CanonicalizationError):
        canonicalize(_double(bits))


def test_section_3_2_2_example() -> None:
    """RFC 8785 §3.2.2: whitespace, literals, numbers and string escapes."""
    text = r'''{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }'''
    expected = ('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,'
                '1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')
    assert canonicalize(json.loads(text)) == expected.encode("utf-8")


def test_section_3_2_3_sorting_by_utf16_code_units() -> None:
    """RFC 8785 §3.2.3: the emoji (a surrogate pair, 0xD83D…) sorts before U+FB33."""
    text = r'''{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }'''
    out = canonicalize(json.loads(text)).decode("utf-8")
    values = [v for _, v in json.loads(out, object_pairs_hook=lambda pairs: pairs)]
    assert values == ["Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis",
                      "Euro Sign", "Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh"]
    assert out.startswith('{"\\r":"Carriage Return","1":"One","\u0080":"Control"')


def test_astral_key_sorts_before_high_bmp_key_unlike_sort_keys() -> None:
    """a2a-python#1174: code point order (json.dumps sort_keys) puts U+FF01 first."""
    value = {"\U0001f600": 1, "\uff01": 2}
    assert canonicalize(value) == '{"\U0001f600":1,"\uff01":2}'.encode()
    assert json.dumps(value, sort_keys=True, ensure_ascii=False).startswith('{"\uff01"')


def test_non_ascii_text_is_literal_utf8() -> None:
    """a2a-python#1174: ensure_ascii escaping (Caf\\u00e9) breaks other verifiers."""
    assert canonicalize({"name": "Café Agent"}) == '{"name":"Café Agent"}'.encode()


@pytest.mark.parametrize(("value", "expected"), [
    (0.000001, "0.000001"), (1e-7, "1e-7"), (1.0, "1"), (-0.0, "0"), (100.0, "100"),
    (1e21, "1e+21"), (1e20, "100000000000000000000"), (0.1 + 0.2, "0.30000000000000004"),
    (123456789012345680000.0, "123456789012345680000"), (5, "5"), (-17, "-17"),
    (2**53 - 1, "9007199254740991"),
])
def test_numbers_use_ecmascript_layout(value: float, expected: str) -> None:
    """repr() would give 1e-06, 1.0, 1e+20: not what JavaScript signers produce."""
    assert canonicalize(value) == expected.encode()


@pytest.mark.parametrize("value", [2**53, -(2**53), 10**30])
def test_integers_a_double_cannot_hold_exactly_are_refused(value: int) -> None:
    with pytest.raises(CanonicalizationError):
        canonicalize(value)


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x1f", "\b", "\t", "\n", "\f", "\r"])
def test_control_characters_are_escaped(char: str) -> None:
    escaped = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}.get(
        char, f"\\u{ord(char):04x}")
    assert canonicalize(char) == f'"{escaped}"'.encode()


def test_only_quote_backslash_and_controls_are_escaped() -> None:
    assert canonicalize("/<>&'\u2028\x7f") == '"/<>&\'\u2028\x7f"'.encode()


@pytest.mark.parametrize("value", [{"\ud800": 1}, "\udfff", {1: "x"}, {"a": {1, 2}}, b"x",
                                   float("nan")])
def test_values_without_a_canonical_form(value: object) -> None:
    with pytest.raises(CanonicalizationError):
        canonicalize(value)


def test_card_depth_is_bounded() -> None:
    """rfc8785 has no depth bound; the card reader refuses nesting past MAX_DEPTH first."""
    deep: object = 1
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    card = {"name": "x", "url": "https://a.example/", "capabilities": {
        "extensions": [{"uri": "u", "params": {"p": deep}}]}}
    with pytest.raises(CanonicalizationError, match="deeper"):
        canonical_card(card)


def test_tuples_are_json_arrays() -> None:
    assert canonicalize((1, {"b": 1, "a": [True]})) == b'[1,{"a":[true],"b":1}]'


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_matches_the_official_sdk_canonicalizer(value: object) -> None:
    """An independent implementation (a2a-sdk's, fixed after #1174) gives the same bytes."""
    sdk_jcs = pytest.importorskip("a2a.utils._jcs")
    assert canonicalize(value) == sdk_jcs.canonicalize(value).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_read_back_as_the_same_double(value: float) -> None:
    text = canonicalize(value).decode()
    assert float(text) == value or (value == 0 and float(text) == 0)
    assert not math.isnan(float(text))
