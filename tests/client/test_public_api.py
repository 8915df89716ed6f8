"""The public surface of a2a_client, and what importing it drags in."""

from __future__ import annotations

import subprocess
import sys

import pytest
from client_peers import Peer, task_json

import a2a_client
import a2a_core.errors
from a2a_client import A2AClient, verify_push
from a2a_core.errors import RemoteProtocolError


def test_all_names_exist_and_are_the_clients_own() -> None:
    for name in a2a_client.__all__:
        assert hasattr(a2a_client, name), name
        # the core's errors have one import path, a2a_core.errors
        value = getattr(a2a_client, name)
        if isinstance(value, (type, type(verify_push))):
            assert value.__module__.startswith("a2a_client."), name
    assert not set(a2a_client.__all__) & set(a2a_core.errors.__all__)
    assert issubclass(a2a_client.ClientError, a2a_core.errors.A2AError)
    assert issubclass(a2a_client.ConnectTimeout, a2a_client.TimeoutException)
    assert issubclass(a2a_client.TimeoutException, a2a_client.TransportError)


def test_importing_the_client_does_not_import_the_server() -> None:
    code = (
        "import sys, a2a_client, a2a_client.cli; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('werkzeug', 'a2a_wsgi')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=60)
    assert out.stdout.strip() == "[]"


def test_list_tasks_refuses_a_repeated_page_token(peer: Peer) -> None:
    page = {"tasks": [task_json("t1")], "nextPageToken": "same", "pageSize": 1, "totalSize": 9}
    peer.handlers["ListTasks"] = lambda call: page
    with A2AClient(peer.url) as client:
        tasks = client.list_tasks(page_size=1)
        assert next(tasks).id == "t1"
        assert next(tasks).id == "t1"  # the second page, asked for with token "same"
        with pytest.raises(RemoteProtocolError, match="twice"):
            next(tasks)
    tokens = [c.params.get("pageToken") for c in peer.rpc_calls("ListTasks")]
    assert tokens == [None, "same"]
