"""What schemathesis (and matching the OpenAPI document to the server) found in the
HTTP+JSON binding, each as the request that showed it, against the echo example's app."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.wsgi_calls import call, environ

from examples.echo import app


def _rest(method: str, path: str, body: Any = None, query: str = "") -> tuple[int, Any]:
    data = b"" if body is None else json.dumps(body).encode()
    status, _headers, answer = call(app, environ(method, "/rest" + path, data, query=query))
    return int(status.split()[0]), json.loads(answer)


def _send(message: dict[str, Any], **extra: Any) -> tuple[int, Any]:
    return _rest("POST", "/message:send", {"message": {
        "messageId": "m-1", "role": "ROLE_USER", **message}, **extra})


def test_a_parts_filename_that_is_no_string_is_refused_not_dropped() -> None:
    status, answer = _send({"parts": [{"text": "x", "filename": {}}]})
    assert status == 400, answer
    assert "filename" in answer["error"]["message"]
    status, answer = _send({"parts": [{"text": "x", "filename": "notes.txt"}]})
    assert status == 200, answer


@pytest.mark.parametrize(("written", "accepted"), [(2.0, True), (1e2, True), (2.5, False),
                                                   (1e300, False)])
def test_an_integer_written_with_a_fraction_of_zero_is_that_integer(
    written: float, accepted: bool,
) -> None:
    status, answer = _send({"parts": [{"text": "x"}]},
                           configuration={"historyLength": written})
    assert (status == 200) is accepted, answer
    if not accepted:
        assert "historyLength" in answer["error"]["message"]


def test_a_push_config_listing_takes_an_int32_page_size_only() -> None:
    status, task = _send({"parts": [{"text": "x"}]})
    assert status == 200, task
    path = f"/tasks/{task['task']['id']}/pushNotificationConfigs"
    assert _rest("GET", path, query="pageSize=2147483647")[0] == 200
    status, answer = _rest("GET", path, query="pageSize=2147483648")
    assert status == 400 and "pageSize" in answer["error"]["message"], answer


@pytest.mark.parametrize("scheme", ["Basic\n", "Bearer\n"])
def test_a_push_authentication_scheme_ending_in_a_newline_is_refused(scheme: str) -> None:
    status, task = _send({"parts": [{"text": "x"}]})
    assert status == 200, task
    config = {"url": "https://example.com/hook",
              "authentication": {"scheme": scheme, "credentials": "c-1"}}
    status, answer = _rest("POST", f"/tasks/{task['task']['id']}/pushNotificationConfigs",
                           config)
    assert status == 400, answer
    assert "authentication.scheme" in answer["error"]["message"]
