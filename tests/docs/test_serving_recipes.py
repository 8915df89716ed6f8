"""docs/serving.md's Python recipes, taken from the page and served for real.

Each recipe is written to a module in a temporary folder as the page shows it, served by
gunicorn, and used by the real client (:class:`a2a_client.A2AClient`) from the site's URL:
the card it discovers must name interfaces that answer every call.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from doc_pages import block
from support.gunicorn import ServerProcess, start_gunicorn

from a2a_client import A2AClient
from a2a_core.errors import TaskNotCancelableError
from a2a_core.models import Task, TaskState, TaskStatusUpdateEvent

pytestmark = pytest.mark.slow

#: Every interface a card of the app may list: (binding, version).
INTERFACES = [("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0")]


@pytest.fixture
def before_request_site(tmp_path: Path) -> Iterator[ServerProcess]:
    """The "Flask `before_request`" site, saved as the page says and served by gunicorn."""
    recipe = block("serving.md", "Flask `before_request`")
    (tmp_path / "tenant_site.py").write_text(recipe.text)
    with start_gunicorn("tenant_site:site", log_path=tmp_path / "gunicorn.log",
                        pythonpath=[tmp_path]) as server:
        server.wait_ready()
        yield server


def test_before_request_card_names_the_routed_paths(before_request_site: ServerProcess) -> None:
    url = before_request_site.url
    with A2AClient(url) as client:
        card = client.get_card()
    assert [(i.protocol_binding, i.protocol_version, i.url)
            for i in card.supported_interfaces] == [
        ("JSONRPC", "1.0", url + "agent/"), ("JSONRPC", "0.3", url + "agent/"),
        ("HTTP+JSON", "1.0", url + "agent/rest")]


@pytest.mark.parametrize(("binding", "version"), INTERFACES)
def test_before_request_every_advertised_interface_answers(
        before_request_site: ServerProcess, binding: str, version: str) -> None:
    """Send, stream, get, cancel (and list, in 1.0) through the card's interface; the hook's
    metadata reaches the agent on every call."""
    with A2AClient(before_request_site.url, binding=binding, version=version,
                   headers={"X-Tenant": "acme"}) as client:
        assert (client.binding, client.version) == (binding, version)
        task = client.send_message("hi")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].parts[0].text == "hello from acme: hi"

        with client.stream_message("streamed") as events:
            seen = list(events)
        last = seen[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.COMPLETED
        assert client.get_task(last.task_id).artifacts[0].parts[0].text == (
            "hello from acme: streamed")

        assert client.get_task(task.id, history_length=0).id == task.id
        with pytest.raises(TaskNotCancelableError):
            client.cancel_task(task.id)
        if version == "1.0":
            assert {t.id for t in client.list_tasks()} >= {task.id, last.task_id}


def test_before_request_tenant_defaults_when_the_header_is_absent(
        before_request_site: ServerProcess) -> None:
    with A2AClient(before_request_site.url) as client:
        task = client.send_message("hi")
    assert isinstance(task, Task)
    assert task.artifacts[0].parts[0].text == "hello from public: hi"


@pytest.mark.parametrize(("named", "advertised"), [
    ("https://acme.example.com/", "https://acme.example.com/agent/"),
    ("{root}agent", "{root}agent/agent/"),  # the endpoint given as the root: the old mistake
])
def test_before_request_put_base_url_names_the_apps_root(named: str, advertised: str) -> None:
    """What the page says of ``put_base_url`` in the hook: the card appends the paths."""
    import flask

    from a2a_wsgi import put_base_url, serve

    site_module: dict[str, object] = {"__name__": "tenant_site"}
    exec(block("serving.md", "Flask `before_request`").text, site_module)
    site = site_module["site"]
    assert isinstance(site, flask.Flask)

    @site.before_request
    def public_url() -> None:
        put_base_url(flask.request.environ, named.format(root=flask.request.root_url))

    with serve(site, "127.0.0.1:0") as handle:
        card = requests.get(handle.url + "/.well-known/agent-card.json", timeout=10).json()
    root = handle.url + "/"
    assert [i["url"] for i in card["supportedInterfaces"]] == [
        advertised.format(root=root)] * 2 + [advertised.format(root=root) + "rest"]
