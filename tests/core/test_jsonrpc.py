"""The JSON-RPC envelope: strict JSON, envelope rules, response encoding."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core._jsonrpc import (
    DEFAULT_MAX_DEPTH,
    MAX_ID_LENGTH,
    RPCRequest,
    RPCResponse,
    encode_error_response,
    encode_response,
    error_response_dict,
    parse_request,
    parse_response,
    response_dict,
)
from a2a_core.errors import (
    InvalidParamsError,
    InvalidRequestError,
    ParseError,
    RemoteProtocolError,
    RPCError,
)


def _body(**members: Any) -> bytes:
    return json.dumps(members).encode()


def _raises(body: bytes, cls: type[RPCError], **kwargs: Any) -> RPCError:
    with pytest.raises(cls) as info:
        parse_request(body, **kwargs)
    assert type(info.value) is cls
    return info.value


# -- valid requests -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"a":1}}',
            RPCRequest(id=1, method="SendMessage", params={"a": 1}),
        ),
        (
            b'{"jsonrpc":"2.0","id":"abc","method":"tasks/get"}',
            RPCRequest(id="abc", method="tasks/get", params=None),
        ),
        (
            b'{"jsonrpc":"2.0","id":null,"method":"m","params":null}',
            RPCRequest(id=None, method="m", params=None),
        ),
        (
            b' \n\t{"method":"m","params":{},"id":-7,"jsonrpc":"2.0","extra":[1]}\r\n',
            RPCRequest(id=-7, method="m", params={}),
        ),
        (
            '{"jsonrpc":"2.0","id":"é","method":"m","params":{"t":"日本 \\ud83d\\ude00"}}'.encode(),
            RPCRequest(id="é", method="m", params={"t": "日本 😀"}),
        ),
        (
            '{"jsonrpc":"2.0","id":2,"method":"m","params":{"t":"😀"}}'.encode(),
            RPCRequest(id=2, method="m", params={"t": "😀"}),
        ),
        (
            b'{"jsonrpc":"2.0","id":12345678901234567890,"method":"m","params":{"f":1.5e300}}',
            RPCRequest(id=12345678901234567890, method="m", params={"f": 1.5e300}),
        ),
    ],
)
def test_valid_requests(body: bytes, expected: RPCRequest) -> None:
    assert parse_request(body) == expected


def test_brackets_and_quotes_inside_strings_do_not_count_as_nesting() -> None:
    text = 'say \\"' + "[[[{{{" * 50 + '\\"]]'
    body = _body(jsonrpc="2.0", id=1, method="m", params={"s": text, "t": "\\", "u": ""})
    assert parse_request(body, max_depth=2).params == {"s": text, "t": "\\", "u": ""}


def test_a_string_ending_in_a_backslash_does_not_hide_real_nesting() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"\\\\","d":[[[[1]]]]}}'
    assert parse_request(body, max_depth=6).params == {"t": "\\", "d": [[[[1]]]]}
    _raises(body, ParseError, max_depth=5)


def test_depth_limit_is_exact() -> None:
    def nested(depth: int) -> bytes:
        # The envelope and params are two levels; the rest is a list tower.
        inner = "[" * (depth - 2) + "]" * (depth - 2)
        return f'{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"x":{inner}}}}}'.encode()

    assert parse_request(nested(DEFAULT_MAX_DEPTH)).method == "m"
    assert _raises(nested(DEFAULT_MAX_DEPTH + 1), ParseError).code == -32700
    assert parse_request(nested(10), max_depth=10).method == "m"
    _raises(nested(11), ParseError, max_depth=10)


# -- the bad-envelope table ---------------------------------------------------------------

BAD_ENVELOPES: list[tuple[str, bytes, type[RPCError], object]] = [
    ("empty body", b"", ParseError, None),
    ("not json", b"hello", ParseError, None),
    ("truncated", b'{"jsonrpc":"2.0","id":1,', ParseError, None),
    ("single quotes", b"{'jsonrpc':'2.0'}", ParseError, None),
    ("trailing comma", b'{"jsonrpc":"2.0","id":1,"method":"m",}', ParseError, None),
    ("two documents", b'{"a":1}{"b":2}', ParseError, None),
    ("batch", b'[{"jsonrpc":"2.0","id":1,"method":"m"}]', InvalidRequestError, None),
    ("empty batch", b"[]", InvalidRequestError, None),
    ("string top level", b'"hi"', InvalidRequestError, None),
    ("number top level", b"42", InvalidRequestError, None),
    ("null top level", b"null", InvalidRequestError, None),
    ("empty object", b"{}", InvalidRequestError, None),
    ("no jsonrpc", b'{"id":1,"method":"m"}', InvalidRequestError, 1),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":"a","method":"m"}', InvalidRequestError, "a"),
    ("jsonrpc number", b'{"jsonrpc":2.0,"id":1,"method":"m"}', InvalidRequestError, 1),
    ("jsonrpc padded", b'{"jsonrpc":" 2.0","id":1,"method":"m"}', InvalidRequestError, 1),
    ("no method", b'{"jsonrpc":"2.0","id":3}', InvalidRequestError, 3),
    ("empty method", b'{"jsonrpc":"2.0","id":3,"method":""}', InvalidRequestError, 3),
    ("method number", b'{"jsonrpc":"2.0","id":3,"method":5}', InvalidRequestError, 3),
    ("method null", b'{"jsonrpc":"2.0","id":3,"method":null}', InvalidRequestError, 3),
    ("id bool", b'{"jsonrpc":"2.0","id":true,"method":"m"}', InvalidRequestError, None),
    ("id float", b'{"jsonrpc":"2.0","id":1.5,"method":"m"}', InvalidRequestError, None),
    ("id object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"m"}', InvalidRequestError, None),
    ("id array", b'{"jsonrpc":"2.0","id":[1],"method":"m"}', InvalidRequestError, None),
    ("notification", b'{"jsonrpc":"2.0","method":"m"}', InvalidRequestError, None),
    (
        "params string",
        b'{"jsonrpc":"2.0","id":4,"method":"m","params":"x"}',
        InvalidRequestError,
        4,
    ),
    ("params number", b'{"jsonrpc":"2.0","id":4,"method":"m","params":1}', InvalidRequestError, 4),
    (
        "params bool",
        b'{"jsonrpc":"2.0","id":4,"method":"m","params":false}',
        InvalidRequestError,
        4,
    ),
    (
        "params array",
        b'{"jsonrpc":"2.0","id":"p","method":"m","params":[1]}',
        InvalidParamsError,
        "p",
    ),
    (
        "params empty array",
        b'{"jsonrpc":"2.0","id":5,"method":"m","params":[]}',
        InvalidParamsError,
        5,
    ),
]


@pytest.mark.parametrize(
    ("body", "cls", "request_id"),
    [case[1:] for case in BAD_ENVELOPES],
    ids=[case[0] for case in BAD_ENVELOPES],
)
def test_bad_envelopes(body: bytes, cls: type[RPCError], request_id: object) -> None:
    error = _raises(body, cls)
    assert error.code == {ParseError: -32700, InvalidRequestError: -32600}.get(cls, -32602)
    assert error.request_id == request_id


def test_envelope_errors_name_the_member() -> None:
    error = _raises(b'{"jsonrpc":"2.0","id":1}', InvalidRequestError)
    assert "method" in error.message
    assert error.field_violations == {"method": "must be a non-empty string"}
    assert "Batch" in _raises(b"[1]", InvalidRequestError).message


@pytest.mark.parametrize(
    ("request_id", "accepted"),
    [
        ("i" * MAX_ID_LENGTH, True),
        ("i" * (MAX_ID_LENGTH + 1), False),
        ("é" * MAX_ID_LENGTH, True),  # characters, not bytes
        ("i" * 10_000, False),
        (10**MAX_ID_LENGTH - 1, True),
        (-(10**MAX_ID_LENGTH - 1), True),
        (10**MAX_ID_LENGTH, False),
        (-(10**MAX_ID_LENGTH), False),
        (12345678901234567890, True),  # beyond 64 bits still survives exactly
    ],
)
def test_ids_are_capped(request_id: Any, accepted: bool) -> None:
    """Every answer echoes the id, so a huge one is refused (-32600, id null)."""
    body = _body(jsonrpc="2.0", id=request_id, method="m")
    if accepted:
        assert parse_request(body).id == request_id
    else:
        error = _raises(body, InvalidRequestError)
        assert error.request_id is None
        assert error.field_violations is not None and "id" in error.field_violations


def test_an_overlong_id_is_not_echoed_by_later_envelope_errors() -> None:
    error = _raises(_body(jsonrpc="1.0", id="i" * 300, method="m"), InvalidRequestError)
    assert error.request_id is None
    error = _raises(_body(jsonrpc="1.0", id="i" * 30, method="m"), InvalidRequestError)
    assert error.request_id == "i" * 30


def test_notifications_can_be_allowed() -> None:
    request = parse_request(b'{"jsonrpc":"2.0","method":"m"}', allow_notifications=True)
    assert request == RPCRequest(id=None, method="m", params=None, is_notification=True)
    explicit_null = parse_request(b'{"jsonrpc":"2.0","id":null,"method":"m"}')
    assert explicit_null.is_notification is False


# -- strict JSON --------------------------------------------------------------------------

_REQ = b'{"jsonrpc":"2.0","id":1,"method":"m","params":'
STRICT_JSON_FAILURES = {
    "duplicate top-level key": b'{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}',
    "duplicate method": b'{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}',
    "duplicate nested key": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":{"k":1,"k":1}}}',
    "NaN": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":NaN}}',
    "Infinity": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":Infinity}}',
    "-Infinity": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":-Infinity}}',
    "overflowing number": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1e400}}',
    "escaped lone high surrogate": _REQ + b'{"x":"\\ud800"}}',
    "escaped lone low surrogate": _REQ + b'{"x":"a\\udc00"}}',
    "reversed surrogate pair": _REQ + b'{"x":"\\ude00\\ud83d"}}',
    "lone surrogate in a key": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"\\ud800":1}}',
    "lone surrogate in the id": b'{"jsonrpc":"2.0","id":"\\udbff","method":"m"}',
    "raw surrogate bytes": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\xed\xa0\x80"}}',
    "UTF-8 BOM": b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"m"}',
    "invalid UTF-8": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\xff"}}',
    "overlong UTF-8": b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xaf"}',
    "UTF-16": '{"jsonrpc":"2.0","id":1,"method":"m"}'.encode("utf-16"),
    "deep arrays": b"[" * 100_000,
    "deep arrays closed": b"[" * 100_000 + b"]" * 100_000,
    "deep objects": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "deep params": b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + b'{"a":' * 5000,
    "huge integer": b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":' + b"9" * 5000 + b"}}",
}


@pytest.mark.parametrize("body", STRICT_JSON_FAILURES.values(), ids=STRICT_JSON_FAILURES.keys())
def test_strict_json_failures_are_parse_errors(body: bytes) -> None:
    error = _raises(body, ParseError)
    assert error.code == -32700
    assert error.request_id is None


#: Python's own words, which must never reach the peer (they say nothing about JSON).
_PYTHON_TEXT = ("sys.", "codec", "Error", "Traceback", "int_max_str_digits", "recursion")


@pytest.mark.parametrize("body", STRICT_JSON_FAILURES.values(), ids=STRICT_JSON_FAILURES.keys())
def test_parse_error_messages_are_ours(body: bytes) -> None:
    message = _raises(body, ParseError).message
    assert message.startswith("Invalid JSON payload: ")
    assert not [word for word in _PYTHON_TEXT if word in message], message


def test_parse_error_messages_say_where() -> None:
    # Where Python's json stops: at the trailing comma (3.13: "Illegal trailing comma
    # before end of object"), or at the brace after it (3.10 to 3.12)
    where = re.search(r" at position (\d+)$", _raises(b'{"a":1,}', ParseError).message)
    assert where is not None and int(where[1]) in (6, 7)
    assert _raises(b'{"a":"\xff"}', ParseError).message.endswith("invalid UTF-8 at byte 6")
    digits = _raises(STRICT_JSON_FAILURES["huge integer"], ParseError).message
    assert "integer literal longer than 4300 digits" in digits
    # The limit is the literal's digits: a sign does not count, 4300 digits still parse.
    body = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":-' + b"9" * 4300 + b"}}"
    assert parse_request(body).params == {"x": -int("9" * 4300)}


def test_the_same_requests_without_the_flaw_parse() -> None:
    """Guard against the table above failing for a reason other than its flaw."""
    ok = [
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":{"k":1,"K":1}}}',
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1e300}}',
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\\ud83d\\ude00"}}',
        b'{"jsonrpc":"2.0","id":"\\u00e9","method":"m"}',
        '{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\ufeff"}}'.encode(),
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + b'{"a":' * 60 + b"1" + b"}" * 61,
    ]
    for body in ok:
        assert parse_request(body).method == "m"


def test_unterminated_string_with_many_escaped_quotes_is_fast() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"' + b'\\"' * 200_000
    _raises(body, ParseError)


# -- hypothesis: nothing but RPCRequest or an envelope error ------------------------------

ALLOWED = (ParseError, InvalidRequestError, InvalidParamsError)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=25,
)


def _parse_outcome(body: bytes) -> RPCRequest | RPCError:
    try:
        return parse_request(body)
    except ALLOWED as exc:
        return exc


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_only_parse_or_raise_envelope_errors(body: bytes) -> None:
    assert isinstance(_parse_outcome(body), (RPCRequest, *ALLOWED))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=60), st.sampled_from([b"[", b"{", b'{"a":', b"[{", b'"\\']))
def test_bracket_bombs_never_recurse(prefix: bytes, bomb: bytes) -> None:
    outcome = _parse_outcome(prefix + bomb * 20_000)
    assert isinstance(outcome, ParseError)


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_arbitrary_json_values(value: Any) -> None:
    body = json.dumps(value).encode()
    outcome = _parse_outcome(body)
    if isinstance(value, list):
        assert isinstance(outcome, InvalidRequestError)
    elif not isinstance(value, dict):
        assert isinstance(outcome, InvalidRequestError)
    else:
        assert isinstance(outcome, (RPCRequest, InvalidRequestError, InvalidParamsError))


ids = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=8),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.just([1]),
    st.just({"a": 1}),
)
ABSENT = object()
optional = st.just(ABSENT)


@settings(max_examples=150, deadline=None)
@given(
    jsonrpc=st.one_of(optional, st.sampled_from(["2.0", "1.0", "2", 2.0, None])),
    id=st.one_of(optional, ids),
    method=st.one_of(optional, st.text(max_size=8), st.integers(), st.none()),
    params=st.one_of(optional, st.none(), json_values),
)
def test_envelope_against_an_oracle(jsonrpc: Any, id: Any, method: Any, params: Any) -> None:
    """Generated envelopes, checked against the module's rules written out independently."""
    members = {"jsonrpc": jsonrpc, "id": id, "method": method, "params": params}
    envelope = {k: v for k, v in members.items() if v is not ABSENT}
    outcome = _parse_outcome(json.dumps(envelope).encode())

    id_ok = "id" in envelope and (
        id is None or isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))
    )
    echo = id if id_ok else None
    if envelope.get("jsonrpc") != "2.0":
        expected: Any = (InvalidRequestError, echo)
    elif not isinstance(envelope.get("method"), str) or not envelope["method"]:
        expected = (InvalidRequestError, echo)
    elif not id_ok:
        expected = (InvalidRequestError, None)
    elif isinstance(envelope.get("params"), list):
        expected = (InvalidParamsError, echo)
    elif envelope.get("params") is not None and not isinstance(envelope.get("params"), dict):
        expected = (InvalidRequestError, echo)
    else:
        assert outcome == RPCRequest(id=id, method=method, params=envelope.get("params"))
        return
    assert isinstance(outcome, RPCError)
    assert (type(outcome), outcome.request_id) == expected


# -- responses ----------------------------------------------------------------------------


def test_encode_response_is_compact_utf8_in_envelope_order() -> None:
    body = encode_response(7, {"text": "héllo 😀", "n": [1, 2]})
    assert body == '{"jsonrpc":"2.0","id":7,"result":{"text":"héllo 😀","n":[1,2]}}'.encode()
    assert encode_response(None, None) == b'{"jsonrpc":"2.0","id":null,"result":null}'


def test_encode_error_response() -> None:
    error = {"code": -32001, "message": "Task not found", "data": [{"@type": "x"}]}
    body = encode_error_response("r1", error)
    assert json.loads(body) == {"jsonrpc": "2.0", "id": "r1", "error": error}
    assert body.startswith(b'{"jsonrpc":"2.0","id":"r1","error":{')


def test_dict_forms_match_the_bytes() -> None:
    assert json.loads(encode_response("a", [1])) == response_dict("a", [1])
    err = {"code": -32600, "message": "bad"}
    assert json.loads(encode_error_response(None, err)) == error_response_dict(None, err)


@pytest.mark.parametrize("bad_id", [True, 1.5, [1], {"a": 1}])
def test_encoding_refuses_invalid_ids(bad_id: Any) -> None:
    with pytest.raises(TypeError):
        encode_response(bad_id, None)
    with pytest.raises(TypeError):
        error_response_dict(bad_id, {"code": 1, "message": "x"})


@pytest.mark.parametrize(
    "error_obj", [{}, {"code": "1", "message": "x"}, {"code": True, "message": "x"}, {"code": 1}]
)
def test_encoding_refuses_malformed_error_objects(error_obj: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        encode_error_response(1, error_obj)


def test_encoding_refuses_nan_in_results() -> None:
    with pytest.raises(ValueError):
        encode_response(1, {"x": float("nan")})


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.text(max_size=8)), json_values)
def test_response_round_trip(id: Any, result: Any) -> None:
    assert parse_response(encode_response(id, result)) == RPCResponse(id=id, result=result)


def test_parse_response_forms() -> None:
    error = {"code": -32001, "message": "Task not found"}
    parsed = parse_response(encode_error_response(3, error))
    assert parsed == RPCResponse(id=3, error=error)
    assert parsed.is_error
    assert parse_response({"jsonrpc": "2.0", "id": "x", "result": None}) == RPCResponse(id="x")
    assert not parse_response('{"jsonrpc":"2.0","id":1,"result":{}}').is_error


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1]",
        b'{"jsonrpc":"2.0","id":1}',
        b'{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}',
        b'{"jsonrpc":"1.0","id":1,"result":1}',
        b'{"id":1,"result":1}',
        b'{"jsonrpc":"2.0","id":true,"result":1}',
        b'{"jsonrpc":"2.0","id":1,"error":"boom"}',
        b'{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"x"}}',
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
        b'{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}',
        b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 10_000,
    ],
)
def test_parse_response_malformed(body: bytes) -> None:
    with pytest.raises(RemoteProtocolError):
        parse_response(body)
