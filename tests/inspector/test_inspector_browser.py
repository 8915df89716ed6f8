"""The inspector page in headless Chromium, against a real served app.

The app is a real ``A2AApp`` of the echo example (plus ``hang`` and
``count:N``), served with ``a2a_wsgi.serve``; a small WSGI wrapper sends
``/inspector`` and below to the inspector. Every test drives the page the
way a person would (clicks, typing, the keyboard) and reads what it shows.
"""

from __future__ import annotations

import base64
import json
import shlex
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from inspector_support import Screenshots, composed, new_agent_app

from a2a_core.models import AgentCardSignature
from a2a_wsgi import A2AApp, serve
from a2a_wsgi.settings import CardSettings
from examples.echo import EchoAgent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    app = new_agent_app()
    with serve(composed(app)) as handle:
        yield handle.url
    app.close()


def open_page(browser: Any, url: str, *, width: int = 1000, height: int = 900) -> tuple[Any, Any]:
    """A fresh context and page on ``url``, once the page says it is ready; errors collected."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda msg: page.errors.append(msg.text) if msg.type == "error" else None)
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    return context, page


@pytest.fixture()
def page(browser: Any, site: str) -> Iterator[Any]:
    context, opened = open_page(browser, site + "/inspector/")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    yield opened
    errors = opened.errors
    context.close()
    assert errors == []


def last_console_entry(page: Any) -> Any:
    return page.locator("#console-log > li").last


def request_body(entry: Any) -> Any:
    return json.loads(entry.locator("pre[aria-label^='Request body']").text_content())


def send(page: Any, text: str, *, mode: str = "blocking") -> None:
    page.click("#tab-chat")
    page.check(f"#composer input[name=mode][value={mode}]")
    page.fill("#parts li:first-child textarea", text)
    page.click("#send")


# -- the card ----------------------------------------------------------------------------


def test_the_card_is_shown_rendered_and_raw_with_both_variants(
        page: Any, site: str, expect: Any, screenshots: Screenshots) -> None:
    card_url = site + "/.well-known/agent-card.json"
    plain = requests.get(card_url, timeout=5)
    strict = requests.get(card_url, headers={"A2A-Version": "1.0"}, timeout=5)
    rendered = page.locator("#card-rendered")
    expect(rendered.locator("h3").first).to_have_text("Echo Agent 1.0.0")
    expect(rendered).to_contain_text("Answers with the text it is sent")
    expect(rendered.locator(".cards h4")).to_have_text(["Echo"])
    expect(rendered).to_contain_text("unsigned")
    expect(rendered.locator("table")).to_contain_text(site + "/")
    validators = page.locator("#card-validators")
    expect(validators).to_contain_text(plain.headers["ETag"])
    assert json.loads(page.locator("#card-raw").text_content()) == plain.json()
    page.select_option("#card-variant", "1.0")
    expect(validators).to_contain_text(strict.headers["ETag"])
    assert json.loads(page.locator("#card-raw").text_content()) == strict.json()
    page.click("#card-revalidate")
    expect(page.locator("#card-status")).to_contain_text("304 Not Modified")
    page.select_option("#card-variant", "default")
    screenshots.take(page, "card.png")


def test_a_signed_card_lists_its_signatures(browser: Any, expect: Any) -> None:
    header = base64.urlsafe_b64encode(json.dumps(
        {"alg": "ES256", "kid": "card-key-1", "typ": "JOSE"}).encode()).decode().rstrip("=")
    app = A2AApp(
        EchoAgent(),
        card=CardSettings(overrides={"signatures": [
        AgentCardSignature(protected=header, signature="c2lnbmF0dXJl")]}),
    )
    with serve(composed(app)) as handle:
        context, page = open_page(browser, handle.url + "/inspector/")
        rendered = page.locator("#card-rendered")
        expect(rendered).to_contain_text("1 signature (not verified here)")
        expect(rendered).to_contain_text("card-key-1")
        expect(rendered).to_contain_text("ES256")
        context.close()
    app.close()


# -- chat --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_a_blocking_send_of_text_data_and_file_parts(page: Any, version: str,
                                                     expect: Any) -> None:
    page.select_option("#protocol", version)
    page.click("#tab-chat")
    page.fill("#parts li:first-child textarea", f"hello in {version}")
    page.click("#add-data")
    page.fill("#parts li:nth-child(2) textarea", '{"n": 1}')
    page.click("#add-file")
    page.set_input_files("#parts li:nth-child(3) input[type=file]", files=[
        {"name": "note.txt", "mimeType": "text/plain", "buffer": b"file body"}])
    page.click("#send")
    answer = page.locator("#transcript > li").last
    expect(answer.locator(".state")).to_have_text("completed")
    expect(answer.locator(".artifact")).to_contain_text(f"hello in {version}")
    expect(answer.locator(".artifact pre")).to_contain_text('"n": 1')
    expect(answer.locator(".artifact .file")).to_contain_text("note.txt (text/plain, 9 bytes)")
    body = request_body(last_console_entry(page))
    raw = base64.b64encode(b"file body").decode()
    if version == "1.0":
        assert body["method"] == "SendMessage"
        assert body["params"]["configuration"] == {"returnImmediately": False}
        assert body["params"]["message"]["role"] == "ROLE_USER"
        assert body["params"]["message"]["parts"] == [
            {"text": "hello in 1.0"}, {"data": {"n": 1}},
            {"raw": raw, "filename": "note.txt", "mediaType": "text/plain"}]
    else:
        assert body["method"] == "message/send"
        assert body["params"]["configuration"] == {"blocking": True}
        assert body["params"]["message"]["kind"] == "message"
        assert body["params"]["message"]["parts"] == [
            {"kind": "text", "text": "hello in 0.3"}, {"kind": "data", "data": {"n": 1}},
            {"kind": "file", "file": {"bytes": raw, "name": "note.txt", "mimeType": "text/plain"}}]
    headers = last_console_entry(page).locator("pre[aria-label^='Request headers']").text_content()
    assert ("A2A-Version: 1.0" in headers) == (version == "1.0")
    # The reply's context is kept for the next message; the finished task is not.
    context_id = answer.locator("dd").first.text_content()
    assert page.input_value("#context-id") == context_id
    assert page.input_value("#task-id") == ""


def test_mistakes_are_reported_where_they_happen(page: Any, expect: Any) -> None:
    page.click("#tab-chat")
    page.fill("#task-id", "no-such-task")
    send(page, "to nowhere")
    answer = page.locator("#transcript > li").last
    expect(answer.locator(".error")).to_contain_text("Error -32001")
    expect(page.locator("#chat-error")).to_contain_text("-32001")
    page.fill("#task-id", "")
    page.click("#parts li:first-child button")  # remove the only part
    page.click("#send")
    expect(page.locator("#chat-error")).to_have_text("Write some text or add a part first")
    page.click("#add-text")
    page.select_option("#protocol", "0.3")
    page.click("#tab-chat")
    page.click("#add-data")
    page.fill("#parts li:nth-child(2) textarea", "[1, 2]")
    page.click("#send")
    expect(page.locator("#chat-error")).to_have_text(
        "Data part 3: A2A 0.3 data parts must be JSON objects")


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_a_stream_shows_each_event_as_it_arrives(page: Any, version: str, expect: Any,
                                                 screenshots: Screenshots) -> None:
    page.select_option("#protocol", version)
    send(page, "count:10", mode="stream")
    events = page.locator("#transcript .events").last
    assert events.get_attribute("role") == "log"
    # Mid-stream (a snapshot taken in the page): some chunks shown, the task still working.
    midway = page.wait_for_function("""() => {
        const item = document.querySelector('#transcript > li:last-child');
        const events = item && item.querySelector('.events');
        if (!events || events.children.length < 4) return null;
        return {state: item.querySelector('.task-head .state').textContent,
                chunks: item.querySelectorAll('.artifact .text').length};
    }""").json_value()
    assert midway["state"] == "working" and 1 <= midway["chunks"] < 10, midway
    answer = page.locator("#transcript > li").last
    expect(events).to_contain_text("stream ended after 13 events")
    lines = events.locator("li").all_text_contents()
    assert lines[0].startswith("#1 task tsk-") and lines[0].endswith(": submitted")
    assert lines[1] == "#2 status-update: working"
    assert lines[2].startswith("#3 artifact-update ") and lines[2].endswith(": chunk 1")
    assert "(append, last chunk): chunk 10" in lines[11]
    assert lines[12] == "#13 status-update: completed" + (" (final)" if version == "0.3" else "")
    expect(answer.locator(".task-head .state")).to_have_text("completed")
    expect(answer.locator(".artifact .text")).to_have_count(10)
    assert answer.locator(".artifact h4").text_content() == "Artifact counting"
    if version == "1.0":
        screenshots.take(page, "chat.png")


# -- tasks -------------------------------------------------------------------------------


def test_tasks_are_listed_paged_opened_subscribed_to_and_canceled(
        page: Any, expect: Any, screenshots: Screenshots) -> None:
    send(page, "first in this context")
    first = page.locator("#transcript > li").last
    expect(first.locator(".state")).to_have_text("completed")
    first_task = first.locator(".task-head button.link").text_content()
    context_id = page.input_value("#context-id")
    send(page, "hang", mode="immediate")
    hang = page.locator("#transcript > li").last
    expect(hang.locator(".state")).to_have_text("submitted")  # returned at once
    hang_id = hang.locator(".task-head button.link").text_content()

    page.click("#tab-tasks")
    page.fill("#filter-context", context_id)
    page.fill("#filter-page-size", "1")
    page.click("#list-tasks")
    expect(page.locator("#list-status")).to_have_text("1 task of 2; more on the next page.")
    rows = page.locator("#task-rows tr")
    expect(rows).to_have_count(1)
    first_id = rows.first.locator("button").text_content()
    page.click("#next-page")
    expect(page.locator("#list-status")).to_have_text("1 task of 2.")
    second_id = rows.first.locator("button").text_content()
    assert sorted([first_id, second_id]) == sorted([first_task, hang_id])
    expect(page.locator("#next-page")).to_be_disabled()
    page.fill("#filter-context", "")
    page.fill("#filter-page-size", "")
    page.fill("#filter-page-token", "")
    page.select_option("#filter-state", "working")
    for _ in range(50):  # the task was returned submitted; the agent moves it on at once
        page.click("#list-tasks")
        expect(page.locator("#list-status")).not_to_have_text("Listing...")
        if hang_id in page.locator("#task-rows").text_content():
            break
        page.wait_for_timeout(100)
    expect(page.locator("#task-rows")).to_contain_text(hang_id)
    assert all(state == "working" for state in
               page.locator("#task-rows .state").all_text_contents())

    page.click(f"#task-rows button[aria-label='Open task {hang_id}']")
    expect(page.locator("#task-heading")).to_have_text(f"Task {hang_id}")
    assert page.evaluate("document.activeElement.id") == "task-heading"
    view = page.locator("#task-view")
    expect(view.locator(".task-head .state")).to_have_text("working")
    expect(view.locator(".history")).to_contain_text("hang")
    page.click("#task-subscribe")
    live = page.locator("#task-view .events")
    expect(live.locator("li").first).to_have_text(f"#1 task {hang_id}: working")
    page.click("#task-cancel")
    expect(live).to_contain_text("status-update: canceled")
    expect(live).to_contain_text("subscription ended")
    expect(view.locator(".task-head .state")).to_have_text("canceled")
    timeline = view.locator(".timeline .state").all_text_contents()
    assert timeline[-1] == "canceled" and "working" in timeline
    expect(page.locator("#task-unsubscribe")).to_be_disabled()
    # A finished task cannot be canceled: the error is shown as the agent sent it.
    page.fill("#open-id", first_task)
    page.click("#open-task")
    expect(page.locator("#task-view .task-head .state")).to_have_text("completed")
    page.click("#task-cancel")
    expect(page.locator("#task-error")).to_contain_text("Error -32002")
    page.fill("#open-id", hang_id)
    page.click("#open-task")
    expect(page.locator("#task-view .task-head .state")).to_have_text("canceled")
    screenshots.take(page, "tasks.png")
    page.click("#task-continue")
    assert page.get_attribute("#tab-chat", "aria-selected") == "true"
    assert page.input_value("#task-id") == hang_id
    assert page.input_value("#context-id") == context_id
    expect(page.locator("#parts li:first-child textarea")).to_be_focused()


# -- the console -------------------------------------------------------------------------


def test_the_console_shows_raw_json_and_a_curl_line_that_works(
        page: Any, expect: Any, screenshots: Screenshots) -> None:
    page.click("#tab-console")
    expect(page.locator("#console-log > li")).to_have_count(2)  # the two card variants
    page.click("#console-clear")
    expect(page.locator("#console-log > li")).to_have_count(0)
    send(page, "curl me")
    expect(page.locator("#transcript > li").last.locator(".state")).to_have_text("completed")
    send(page, "count:2", mode="stream")
    expect(page.locator("#transcript .events").last).to_contain_text("stream ended")
    page.click("#tab-console")
    entries = page.locator("#console-log > li")
    expect(entries).to_have_count(2)
    blocking = entries.first
    expect(blocking.locator(".summary")).to_contain_text("SendMessage")
    expect(blocking.locator(".summary")).to_contain_text("HTTP 200")
    answer = json.loads(blocking.locator("pre[aria-label^='Response body']").text_content())
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    streamed = entries.last
    expect(streamed.locator(".summary")).to_contain_text("SendStreamingMessage")
    frames = [json.loads(text) for text in streamed.locator(".events pre").all_text_contents()]
    assert len(frames) == 5 and all(frame["jsonrpc"] == "2.0" for frame in frames)
    assert "-N" in streamed.locator(".curl code").text_content().split()

    blocking.locator(".curl button").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    curl = blocking.locator(".curl code").text_content()
    assert copied == curl
    replayed = replay_curl(curl)
    assert replayed["result"]["task"]["artifacts"][0]["parts"] == [{"text": "curl me"}]
    screenshots.take(page, "console.png")


def replay_curl(line: str) -> Any:
    """Run a ``curl -sS -X M URL -H ... --data-raw BODY`` line with requests."""
    words = shlex.split(line)
    assert words[:2] == ["curl", "-sS"]
    method, url, headers, body = "GET", "", {}, None
    rest = iter(words[2:])
    for word in rest:
        if word == "-X":
            method = next(rest)
        elif word == "-H":
            name, _, value = next(rest).partition(": ")
            headers[name] = value
        elif word == "--data-raw":
            body = next(rest).encode()
        elif word != "-N":
            url = word
    return requests.request(method, url, headers=headers, data=body, timeout=10).json()


# -- keyboard and small screens ----------------------------------------------------------


def focused(page: Any) -> Any:
    return page.evaluate("""() => {
        const e = document.activeElement;
        const style = getComputedStyle(e);
        return {id: e.id, tag: e.tagName.toLowerCase(), text: (e.textContent || '').trim(),
                label: e.getAttribute('aria-label') || (e.labels && e.labels[0] ?
                       e.labels[0].textContent.trim() : ''),
                outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0};
    }""")


def tab_to(page: Any, count: int = 1) -> Any:
    for _ in range(count):
        page.keyboard.press("Tab")
    return focused(page)


def test_the_main_controls_work_from_the_keyboard_alone(page: Any, expect: Any) -> None:
    order = [tab_to(page) for _ in range(7)]
    assert [(f["id"] or f["text"]) for f in order] == [
        "Skip to content", "agent-url", "load-card", "protocol", "binding", "Request headers",
        "tab-card"]
    assert all(f["outline"] for f in order), order
    page.keyboard.press("ArrowRight")
    assert focused(page)["id"] == "tab-chat"
    assert page.get_attribute("#tab-chat", "aria-selected") == "true"
    assert page.is_visible("#view-chat") and not page.is_visible("#view-card")
    text = tab_to(page)
    assert text["label"] == "Text part 1" and text["outline"]
    page.keyboard.type("typed, not clicked")
    page.keyboard.press("Control+Enter")
    answer = page.locator("#transcript > li").last
    expect(answer.locator(".state")).to_have_text("completed")
    expect(answer.locator(".artifact")).to_contain_text("typed, not clicked")
    page.focus("#parts li:first-child textarea")
    labels = [tab_to(page) for _ in range(9)]
    assert [f["label"] or f["id"] or f["text"] for f in labels] == [
        "Remove text part 1", "add-text", "add-file", "add-data", "Context id", "Task id",
        "Blocking", "send", "new-conversation"]
    assert all(f["outline"] for f in labels), labels
    page.focus("#composer input[value=blocking]")
    page.keyboard.press("ArrowRight")
    assert page.is_checked("#composer input[value=immediate]")
    page.keyboard.press("ArrowLeft")
    link = answer.locator(".task-head button.link")
    link.focus()
    assert focused(page)["outline"]
    page.keyboard.press("Enter")
    expect(page.locator("#task-heading")).to_be_focused()
    assert page.get_attribute("#tab-tasks", "aria-selected") == "true"
    expect(page.locator("#task-view .task-head .state")).to_have_text("completed")
    page.focus("#tab-tasks")
    page.keyboard.press("End")
    assert focused(page)["id"] == "tab-console"
    page.keyboard.press("Home")
    assert focused(page)["id"] == "tab-card"
    assert page.get_attribute("#announcer", "aria-live") == "polite"


def no_horizontal_scroll(page: Any) -> bool:
    return bool(page.evaluate(
        "document.documentElement.scrollWidth <= window.innerWidth"
        " && document.body.scrollWidth <= window.innerWidth"))


def test_every_view_fits_a_360_px_screen(browser: Any, site: str, expect: Any,
                                         screenshots: Screenshots) -> None:
    context, page = open_page(browser, site + "/inspector/", width=360, height=740)
    assert no_horizontal_scroll(page), "card"
    send(page, "a-very-long-unbroken-word-" * 8, mode="stream")
    expect(page.locator("#transcript .events").last).to_contain_text("stream ended")
    assert no_horizontal_scroll(page), "chat"
    screenshots.take(page, "narrow-chat.png", max_height=1600)
    page.click("#tab-tasks")
    page.click("#list-tasks")
    expect(page.locator("#task-rows tr").first).to_be_visible()
    page.locator("#task-rows button").first.click()
    expect(page.locator("#task-view .task-head")).to_be_visible()
    assert no_horizontal_scroll(page), "tasks"
    page.click("#tab-console")
    assert no_horizontal_scroll(page), "console"
    page.click("#tab-card")
    assert no_horizontal_scroll(page), "card"
    errors = page.errors
    context.close()
    assert errors == []


# -- the other binding, a mount, and `a2a inspect` ---------------------------------------


def test_the_http_json_binding_when_the_card_lists_it(page: Any, site: str, expect: Any) -> None:
    card = requests.get(site + "/.well-known/agent-card.json", timeout=5).json()
    rest = [i for i in card.get("supportedInterfaces", []) if i["protocolBinding"] == "HTTP+JSON"]
    if not rest:
        pytest.skip("the served card lists no HTTP+JSON interface yet")
    page.select_option("#binding", "HTTP+JSON")
    expect(page.locator("#endpoint")).to_have_text(rest[0]["url"])
    send(page, "over rest")
    answer = page.locator("#transcript > li").last
    expect(answer.locator(".state")).to_have_text("completed")
    expect(answer.locator(".artifact")).to_contain_text("over rest")
    entry = last_console_entry(page)
    expect(entry.locator(".summary")).to_contain_text("POST message:send")
    assert "Content-Type: application/a2a+json" in entry.locator(
        "pre[aria-label^='Request headers']").text_content()
    send(page, "count:3", mode="stream")
    expect(page.locator("#transcript .events").last).to_contain_text("stream ended after 6 events")
    page.click("#tab-tasks")
    page.select_option("#filter-state", "completed")
    page.click("#list-tasks")
    expect(page.locator("#task-rows tr").first).to_be_visible()
    assert last_console_entry(page).locator(".summary").text_content().count("GET tasks") == 1


def test_mounted_beside_another_app_it_talks_to_its_mount(browser: Any, expect: Any) -> None:
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    app = new_agent_app()

    def other(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"the host site"]

    with serve(DispatcherMiddleware(other, {"/a2a": composed(app)})) as handle:
        context, page = open_page(browser, handle.url + "/a2a/inspector")
        assert page.input_value("#agent-url") == handle.url + "/a2a/"
        expect(page.locator("#card-rendered h3").first).to_have_text("Echo Agent 1.0.0")
        expect(page.locator("#endpoint")).to_have_text(handle.url + "/a2a/")
        send(page, "mounted")
        expect(page.locator("#transcript .artifact")).to_contain_text("mounted")
        errors = page.errors
        context.close()
    app.close()
    assert errors == []


def test_a2a_inspect_shows_a_separately_served_agent_through_its_proxy(
        browser: Any, expect: Any, screenshots: Screenshots) -> None:
    from a2a_client._inspect import start_inspector

    agent = A2AApp(EchoAgent())
    with serve(agent) as served, start_inspector(served.url + "/") as inspector:
        context, page = open_page(browser, inspector.url)
        origins: set[str] = set()
        page.on("request", lambda request: origins.add(origin_of(request.url)))
        expect(page.locator("#card-rendered h3").first).to_have_text("Echo Agent 1.0.0")
        assert page.input_value("#agent-url") == served.url + "/"
        assert page.get_attribute("#agent-url", "readonly") is not None
        expect(page.locator("#connection-note")).to_have_text(
            "Calls go through the a2a inspect proxy on this machine.")
        send(page, "through a2a inspect", mode="stream")
        expect(page.locator("#transcript .events").last).to_contain_text("stream ended")
        expect(page.locator("#transcript .artifact")).to_contain_text("through a2a inspect")
        page.click("#tab-console")
        entry = last_console_entry(page)
        expect(entry.locator(".summary")).to_contain_text(f"POST {served.url}/")
        assert entry.locator(".curl code").text_content().startswith(
            f"curl -sS -N -X POST '{served.url}/'")
        page.click("#tab-chat")
        screenshots.take(page, "inspect.png")
        errors = page.errors
        context.close()
    agent.close()
    assert errors == []
    assert origins == {origin_of(inspector.url)}, origins


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
