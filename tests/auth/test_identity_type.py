"""One identity type: a Principal, which is the identity string with its tenant and claims.

``auth=`` (an authenticator's answer), ``put_identity("user:1")`` (a site's
login) and an ``AgentContext`` built with a plain string all hand the agent a
:class:`Principal`; it prints, formats, compares and serialises as its
identity string. Over HTTP both ways reach the agent as the same type.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
import requests
from greeter_agent import Greeter

from a2a_core.auth import Principal
from a2a_wsgi import A2AApp, AgentContext, get_identity, put_identity
from a2a_wsgi.auth import BearerAuthenticator


def print_form(value: object) -> str:
    """What ``print`` and ``logging``'s ``%s`` show of ``value``."""
    return "%s" % (value,)  # noqa: UP031 (the %-form is the one logging uses)


def test_a_principal_is_its_identity_string() -> None:
    caller = Principal(identity="user:1", tenant="acme", claims={"scope": "a2a"})
    assert isinstance(caller, str)
    assert str(caller) == "user:1" and type(str(caller)) is str
    assert f"Hello {caller}" == "Hello user:1" and print_form(caller) == "user:1"
    assert caller == "user:1" and {"user:1": 1}[caller] == 1
    assert json.dumps({"who": caller}) == '{"who": "user:1"}'
    assert (caller.identity, caller.tenant, dict(caller.claims)) == ("user:1", "acme",
                                                                     {"scope": "a2a"})
    assert type(caller.identity) is str
    assert repr(caller) == "Principal(identity='user:1', tenant='acme', claims={'scope': 'a2a'})"
    # A new token of the same subject is the same caller; another subject is not.
    assert caller == Principal(identity="user:1", claims={"exp": 2})
    assert caller != Principal(identity="user:2")
    assert Principal("user:1") == caller


def test_a_principal_keeps_its_tenant_and_claims_when_copied_or_pickled() -> None:
    caller = Principal(identity="svc", tenant="t1", claims={"iat": 1})
    for again in (pickle.loads(pickle.dumps(caller)), copy.copy(caller), copy.deepcopy(caller)):
        assert type(again) is Principal
        assert (again.identity, again.tenant, dict(again.claims)) == ("svc", "t1", {"iat": 1})


def test_a_principal_is_immutable_and_refuses_what_is_not_a_name() -> None:
    caller = Principal(identity="alice")
    with pytest.raises(AttributeError, match="immutable"):
        caller.tenant = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del caller.claims
    with pytest.raises(TypeError, match="is a str, not int"):
        Principal(identity=7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tenant is a str or None"):
        Principal(identity="a", tenant=3)  # type: ignore[arg-type]


def test_put_identity_records_a_principal() -> None:
    environ: dict[str, Any] = {}
    assert get_identity(environ) is None
    put_identity(environ, "user:1")
    found = get_identity(environ)
    assert type(found) is Principal and found == "user:1"
    kept = Principal(identity="bob", tenant="acme")
    put_identity(environ, kept)
    assert get_identity(environ) is kept
    put_identity(environ, None)
    assert get_identity(environ) is None
    # A string written into the overrides by hand reads back as put_identity stores it.
    assert type(get_identity({"a2a.overrides": {"identity": "carol"}})) is Principal


@pytest.mark.parametrize("odd", [{"sub": "alice"}, 7, object()])
def test_put_identity_refuses_an_object_with_a_clear_error(odd: object) -> None:
    with pytest.raises(TypeError, match=r"is a str or a Principal, not .*user\.pk"):
        put_identity({}, odd)  # type: ignore[arg-type]


def test_an_agent_context_makes_a_principal_of_a_string() -> None:
    context = AgentContext(task_id="t", context_id="c", identity="user:1")
    assert type(context.identity) is Principal and context.identity == "user:1"
    assert AgentContext(task_id="t", context_id="c").identity is None


def _greeting(base: str, headers: dict[str, str]) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    answer = requests.post(base + "/", json=body, timeout=10,
                           headers={"A2A-Version": "1.0", **headers})
    assert answer.status_code == 200, answer.text
    text = answer.json()["result"]["task"]["artifacts"][0]["parts"][0]["text"]
    assert isinstance(text, str)
    return text


def test_auth_and_put_identity_reach_the_agent_as_the_same_type(
        serve: Callable[[Callable[..., Any]], Any]) -> None:
    app = A2AApp(Greeter(), auth=BearerAuthenticator({"tok-1": "user:1"}.get))

    def site_login(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("HTTP_X_SITE_USER"):  # a stand-in for the site's session
            put_identity(environ, f"user:{environ['HTTP_X_SITE_USER']}")
        return app(environ, start_response)

    try:
        base = serve(site_login).url
        by_token = _greeting(base, {"Authorization": "Bearer tok-1"})
        by_site = _greeting(base, {"X-Site-User": "1"})
        assert by_token == by_site == "Hello user:1 (a2a_core.auth.Principal)"
    finally:
        app.close()
