// The Console view: every request and its response as raw JSON (stream
// events appended as they arrive), each with a copyable curl line.

import { h, byId, fill, prettyText, copyText } from "./dom.js";
import { observe } from "./net.js";

const MAX_ENTRIES = 200;
/** record id -> {item, summary, response, events}. */
const shown = new Map();

function headerText(headers) {
  const list = Array.isArray(headers) ? headers : Object.entries(headers);
  return list.map(([name, value]) => `${name}: ${value}`).join("\n");
}

function summaryLine(record) {
  const outcome = record.error
    ? h("span", { class: "status-bad", text: record.error })
    : record.status === null ? h("span", { class: "note", text: "waiting" })
      : h("span", { class: record.status < 400 ? "status-ok" : "status-bad", text: `HTTP ${record.status}` });
  return [
    h("strong", { text: `#${record.id} ${record.label}` }),
    h("span", { text: `${record.method} ${record.url}` }),
    outcome,
    record.ms !== null ? h("span", { class: "note", text: `${record.ms} ms` }) : null,
    record.stream ? h("span", { class: "note", text: `${record.events.length} event${record.events.length === 1 ? "" : "s"}` }) : null,
  ];
}

function entry(record) {
  const curl = h("code", { text: record.curl });
  const summary = h("div", { class: "summary" }, summaryLine(record));
  const response = h("pre", { class: "json", "aria-label": `Response body of request ${record.id}` });
  const responseHeaders = h("pre", { class: "json", "aria-label": `Response headers of request ${record.id}` });
  const events = h("ol", { class: "events", "aria-label": `Events of request ${record.id}` });
  const item = h("li", { "data-record": record.id },
    summary,
    h("div", { class: "curl" }, curl, h("button", {
      type: "button", text: "Copy curl", "aria-label": `Copy curl line of request ${record.id}`,
      onclick: () => copyText(record.curl, curl),
    })),
    h("details", {}, h("summary", { text: "Request" }),
      h("pre", { class: "json", "aria-label": `Request headers of request ${record.id}`, text: headerText(record.headers) }),
      record.body !== undefined ? h("pre", { class: "json", "aria-label": `Request body of request ${record.id}`, text: prettyText(record.body) }) : null),
    h("details", { open: true }, h("summary", { text: "Response" }),
      h("details", {}, h("summary", { text: "Response headers" }), responseHeaders), events, response));
  return { item, summary, response, responseHeaders, events };
}

function update(kind, record, event) {
  const list = byId("console-log");
  let view = shown.get(record.id);
  if (kind === "start") {
    view = entry(record);
    shown.set(record.id, view);
    list.append(view.item);
    while (list.children.length > MAX_ENTRIES) {
      shown.delete(Number(list.firstElementChild.dataset.record));
      list.firstElementChild.remove();
    }
    byId("console-count").textContent = String(record.id);
  }
  if (!view) return;
  fill(view.summary, summaryLine(record));
  if (kind === "response") view.responseHeaders.textContent = headerText(record.responseHeaders);
  if (kind === "event") {
    const label = [event.id ? `id: ${event.id}` : "", event.type !== "message" ? `event: ${event.type}` : ""].filter(Boolean).join(" ");
    view.events.append(h("li", {}, label ? h("span", { class: "note", text: label }) : null,
      h("pre", { class: "json", text: prettyText(event.data) })));
  }
  if (kind === "end" && record.responseText !== null) view.response.textContent = prettyText(record.responseText);
}

export function initConsoleView() {
  observe(update);
  byId("console-clear").addEventListener("click", () => {
    fill(byId("console-log"));
    shown.clear();
  });
}
