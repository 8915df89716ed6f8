"""The page's protocol modules (sse.js, wire.js, net.js), run in the browser on their own.

Each test imports a module into the served page and feeds it inputs whose
answer is written out here by hand, from the specifications: SSE framing split at
awkward places, both dialects' shapes, the HTTP+JSON paths, shell quoting.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import Any

import pytest
from inspector_support import composed, new_agent_app

from a2a_wsgi import serve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def page(browser: Any) -> Iterator[Any]:
    app = new_agent_app()
    with serve(composed(app)) as handle:
        context = browser.new_context()
        opened = context.new_page()
        opened.goto(handle.url + "/inspector/")
        opened.wait_for_selector("body[data-ready=true]")
        yield opened
        context.close()
    app.close()


def run(page: Any, module: str, body: str, arg: Any = None) -> Any:
    """Evaluate ``body`` (a function of ``m``, the module, and ``arg``) in the page."""
    return page.evaluate(
        f"async (arg) => {{ const m = await import('./{module}'); return ({body})(m, arg); }}", arg)


SSE_FEED = """(m, chunks) => {
    const events = [];
    const parser = new m.SSEParser((e) => events.push(e));
    for (const chunk of chunks) parser.feed(chunk);
    parser.end();
    return events;
}"""


@pytest.mark.parametrize("chunks", [
    ["data: one\r\n\r\ndata: two\r\n\r\n"],
    ["data: one\r", "\n\r", "\ndata: two\r\n", "\r\n"],  # CRLF split between chunks
    ["data: one\r\rdata: two\r\r"],  # CR alone ends a line
    ["data: one\n\n", "data: two\n\n"],
    ["da", "ta: o", "ne\n", "\nda", "ta: two\n\n"],
], ids=["crlf", "crlf-split", "cr", "lf", "split-anywhere"])
def test_sse_lines_end_in_crlf_lf_or_cr_wherever_the_chunks_split(page: Any,
                                                                  chunks: list[str]) -> None:
    events = run(page, "sse.js", SSE_FEED, chunks)
    assert [e["data"] for e in events] == ["one", "two"]


def test_sse_fields_comments_and_a_last_event_without_its_blank_line(page: Any) -> None:
    chunks = [": ping\n", "id: 7\nevent: error\ndata: a\ndata:b\ndata:  c\n\n",
              "data\n\n", "retry: 5\n\n", "data: tail"]
    events = run(page, "sse.js", SSE_FEED, chunks)
    assert events == [
        {"data": "a\nb\n c", "type": "error", "id": "7"},
        {"data": "", "type": "message", "id": "7"},
        {"data": "tail", "type": "message", "id": "7"},
    ]


def test_a_message_in_each_dialect(page: Any) -> None:
    message = {"messageId": "m-1", "contextId": "ctx-1", "taskId": "", "parts": [
        {"type": "text", "text": "hi"},
        {"type": "file", "bytes": "aGk=", "name": "a.txt", "mediaType": "text/plain"},
        {"type": "data", "data": {"k": [1]}}]}
    body = "(m, msg) => [m.wireMessage(msg, '1.0'), m.wireMessage(msg, '0.3')]"
    v1, v03 = run(page, "wire.js", body, message)
    assert v1 == {"messageId": "m-1", "role": "ROLE_USER", "contextId": "ctx-1", "parts": [
        {"text": "hi"}, {"raw": "aGk=", "filename": "a.txt", "mediaType": "text/plain"},
        {"data": {"k": [1]}}]}
    assert v03 == {"kind": "message", "messageId": "m-1", "role": "user", "contextId": "ctx-1",
                   "parts": [{"kind": "text", "text": "hi"},
                             {"kind": "file", "file": {"bytes": "aGk=", "name": "a.txt",
                                                       "mimeType": "text/plain"}},
                             {"kind": "data", "data": {"k": [1]}}]}


def test_json_rpc_calls_in_each_dialect(page: Any) -> None:
    body = """(m) => ['send', 'stream', 'get', 'list', 'cancel', 'subscribe'].map((op) => {
        const r03 = m.jsonRpcRequest(op, {}, '0.3', 'http://a/');
        const r10 = m.jsonRpcRequest(op, {}, '1.0', 'http://a/');
        return [JSON.parse(r03.body).method, JSON.parse(r10.body).method,
                r10.headers['A2A-Version'] || null, r03.headers['A2A-Version'] || null, r10.stream];
    })"""
    assert run(page, "wire.js", body) == [
        ["message/send", "SendMessage", "1.0", None, False],
        ["message/stream", "SendStreamingMessage", "1.0", None, True],
        ["tasks/get", "GetTask", "1.0", None, False],
        ["tasks/list", "ListTasks", "1.0", None, False],
        ["tasks/cancel", "CancelTask", "1.0", None, False],
        ["tasks/resubscribe", "SubscribeToTask", "1.0", None, True],
    ]


def test_params_per_dialect_blocking_list_filters_and_tenant(page: Any) -> None:
    body = """(m) => [
        m.wireParams('send', {message: {messageId: 'x', parts: []}, returnImmediately: true},
                     '0.3').configuration,
        m.wireParams('send', {message: {messageId: 'x', parts: []}, returnImmediately: true},
                     '1.0').configuration,
        m.wireParams('list', {contextId: 'c', status: 'input-required', pageSize: 5, pageToken: '',
                              includeArtifacts: false}, '1.0', 'acme'),
        m.wireParams('list', {status: 'input-required', historyLength: 0}, '0.3', 'acme'),
        m.wireParams('get', {id: 't', historyLength: 2}, '1.0'),
    ]"""
    blocking03, blocking10, list10, list03, get10 = run(page, "wire.js", body)
    assert blocking03 == {"blocking": False}
    assert blocking10 == {"returnImmediately": True}
    assert list10 == {"contextId": "c", "status": "TASK_STATE_INPUT_REQUIRED", "pageSize": 5,
                      "tenant": "acme"}
    assert list03 == {"status": "input-required", "historyLength": 0}  # no tenant in 0.3
    assert get10 == {"id": "t", "historyLength": 2}


def test_http_json_paths_methods_bodies_and_queries(page: Any) -> None:
    body = """(m) => [
        m.restRequest('send', {message: {messageId: 'x'}, tenant: 't 1'}, 'http://a/rest/'),
        m.restRequest('stream', {message: {messageId: 'x'}}, 'http://a/rest'),
        m.restRequest('get', {id: 'a/b', historyLength: 3}, 'http://a/rest'),
        m.restRequest('list', {status: 'TASK_STATE_WORKING', pageSize: 2, includeArtifacts: true},
                      'http://a/rest'),
        m.restRequest('cancel', {id: 'tsk-1'}, 'http://a/rest'),
        m.restRequest('subscribe', {id: 'tsk-1'}, 'http://a/rest'),
    ].map((r) => [r.method, r.url, r.body === undefined ? null : JSON.parse(r.body),
                  r.headers['Content-Type'] || null, r.headers['A2A-Version']])"""
    assert run(page, "wire.js", body) == [
        ["POST", "http://a/rest/t%201/message:send", {"message": {"messageId": "x"}},
         "application/a2a+json", "1.0"],
        ["POST", "http://a/rest/message:stream", {"message": {"messageId": "x"}},
         "application/a2a+json", "1.0"],
        ["GET", "http://a/rest/tasks/a%2Fb?historyLength=3", None, None, "1.0"],
        ["GET", "http://a/rest/tasks?status=TASK_STATE_WORKING&pageSize=2&includeArtifacts=true",
         None, None, "1.0"],
        ["POST", "http://a/rest/tasks/tsk-1:cancel", {}, "application/a2a+json", "1.0"],
        ["POST", "http://a/rest/tasks/tsk-1:subscribe", {}, "application/a2a+json", "1.0"],
    ]


def test_answers_of_both_dialects_read_the_same(page: Any) -> None:
    task03 = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "input-required"},
              "artifacts": [{"artifactId": "a", "parts": [{"kind": "file", "file": {
                  "uri": "https://x/f", "name": "f", "mimeType": "image/png"}}]}]}
    task10 = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_INPUT_REQUIRED"},
              "artifacts": [{"artifactId": "a", "parts": [
                  {"url": "https://x/f", "filename": "f", "mediaType": "image/png"}]}]}
    body = """(m, [t03, t10]) => {
        const slim = (e) => ({type: e.type, id: e.task && e.task.id, state: e.task && e.task.state,
                              part: e.task && e.task.artifacts[0].parts[0]});
        return [slim(m.plainSendResult(t03)), slim(m.plainSendResult({task: t10})),
                slim(m.plainEvent(t10)),
                m.plainEvent({kind: 'status-update', taskId: 't', status: {state: 'completed'},
                              final: true}),
                m.plainEvent({statusUpdate: {taskId: 't', status: {state: 'TASK_STATE_CANCELED'}}}),
                m.plainEvent({artifactUpdate: {taskId: 't', append: true,
                              artifact: {artifactId: 'a', parts: [{text: 'x'}]}}}).append,
                m.plainSendResult({message: {role: 'ROLE_AGENT', parts: [{text: 'hi'}]}})
                  .message.role,
                m.plainSendResult({kind: 'message', role: 'agent', parts: []}).type,
                [m.plainState('TASK_STATE_AUTH_REQUIRED'), m.plainState(6),
                 m.plainState('rejected')]];
    }"""
    got = run(page, "wire.js", body, [task03, task10])
    part = {"type": "file", "bytes": None, "uri": "https://x/f", "name": "f",
            "mediaType": "image/png", "metadata": None}
    assert got[0] == {"type": "task", "id": "t", "state": "input-required", "part": part}
    assert got[1] == got[0] and got[2] == got[0]
    assert got[3]["type"] == "status" and got[3]["state"] == "completed" and got[3]["final"]
    assert got[4]["state"] == "canceled" and got[4]["final"] is False
    assert got[5] is True
    assert got[6] == "agent" and got[7] == "message"
    assert got[8] == ["auth-required", "input-required", "rejected"]


def test_errors_of_each_binding(page: Any) -> None:
    body = """(m) => [
        m.readReply('JSONRPC', 200, {jsonrpc: '2.0', id: 1,
                                     error: {code: -32001, message: 'gone'}}),
        m.readReply('HTTP+JSON', 404, {error: {code: 404, status: 'NOT_FOUND', message: 'gone',
                                               details: [{reason: 'TASK_NOT_FOUND'}]}}),
        m.readReply('HTTP+JSON', 502, undefined),
        m.readReply('JSONRPC', 504, undefined),
        m.readEventData('JSONRPC', {jsonrpc: '2.0', id: 1, result: {task: {}}}),
        m.readEventData('HTTP+JSON', {statusUpdate: {}}),
    ]"""
    rpc, rest, bad_gateway, timeout, event_rpc, event_rest = run(page, "wire.js", body)
    assert rpc == {"error": {"code": -32001, "message": "gone"}}
    assert rest == {"error": {"code": 404, "status": "NOT_FOUND", "message": "gone",
                              "data": [{"reason": "TASK_NOT_FOUND"}]}}
    assert bad_gateway == {"error": {"code": 502, "message": "HTTP 502"}}
    assert timeout["error"]["message"] == "not a JSON-RPC response (HTTP 504)"
    assert event_rpc == {"result": {"task": {}}}
    assert event_rest == {"result": {"statusUpdate": {}}}


def test_card_interfaces_from_a_1_0_card_and_a_0_3_card(page: Any) -> None:
    body = """(m) => [
        m.cardInterfaces({supportedInterfaces: [
            {url: '/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'acme'},
            {url: 'https://b/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0.1'}],
            url: 'https://ignored/'}, 'https://a/x/.well-known/agent-card.json'),
        m.cardInterfaces({url: 'https://a/rpc', protocolVersion: '0.3.0',
            additionalInterfaces: [{url: 'https://a/rest', transport: 'HTTP+JSON'}]}, 'https://a/'),
    ]"""
    modern, legacy = run(page, "wire.js", body)
    assert modern == [
        {"url": "https://a/rpc", "binding": "JSONRPC", "version": "1.0", "tenant": "acme"},
        {"url": "https://b/rest", "binding": "HTTP+JSON", "version": "1.0", "tenant": ""}]
    assert legacy == [
        {"url": "https://a/rpc", "binding": "JSONRPC", "version": "0.3", "tenant": ""},
        {"url": "https://a/rest", "binding": "HTTP+JSON", "version": "0.3", "tenant": ""}]


def test_curl_lines_quote_for_the_shell_and_proxy_paths_keep_escapes(page: Any) -> None:
    body = """(m) => {
        const post = m.curlLine({method: 'POST', url: "http://a/it's", stream: true,
                                 headers: {'X-Q': "a'b"}, body: '{"t":"it\\'s $HOME `x`"}'});
        const get = m.curlLine({method: 'GET', url: 'http://a/c', headers: {}, stream: false});
        m.settings.proxy = '/proxy/';
        const routed = m.fetchUrl('http://[::1]:9000/rest/tasks/a%2Fb?x=1%2B2');
        m.settings.proxy = null;
        return [post, get, routed, m.fetchUrl('http://a/b')];
    }"""
    post, get, routed, direct = run(page, "net.js", body)
    assert shlex.split(post) == ["curl", "-sS", "-N", "-X", "POST", "http://a/it's", "-H",
                                 "X-Q: a'b", "--data-raw", """{"t":"it's $HOME `x`"}"""]
    assert get == "curl -sS 'http://a/c'"
    assert routed == "/proxy/http/[::1]:9000/rest/tasks/a%2Fb?x=1%2B2"
    assert direct == "http://a/b"
