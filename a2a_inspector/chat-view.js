// The Chat view: compose a message of text, file and data parts, send it
// blocking, returning immediately or streaming, and watch the answer arrive.

import { h, byId, fill, announce, newId } from "./dom.js";
import { agent, call, stream, noteState, noteTask, A2AError } from "./agent.js";
import { INTERRUPTED, plainSendResult } from "./wire.js";
import { TaskView, eventLine, renderError, renderMessage } from "./render.js";

let partCount = 0;
let streamControl = null;
let openTask = () => {};

function removeButton(item, label) {
  return h("button", {
    type: "button", text: "Remove", "aria-label": `Remove ${label}`,
    onclick: () => {
      const next = item.nextElementSibling || item.previousElementSibling;
      item.remove();
      const focusable = next && next.querySelector("textarea, input");
      (focusable || byId("add-text")).focus();
    },
  });
}

/** Add an editor for one part and focus it. */
export function addPart(type, focus = true) {
  partCount += 1;
  const id = `part-${partCount}`;
  const label = `${type} part ${partCount}`;
  const item = h("li", { class: "part-editor", "data-type": type });
  let input;
  if (type === "text") {
    input = h("textarea", { id, rows: 3, placeholder: "Message text (Ctrl+Enter sends)" });
  } else if (type === "file") {
    input = h("input", { id, type: "file" });
  } else {
    input = h("textarea", { id, rows: 3, spellcheck: "false", placeholder: "{\"key\": \"value\"}" });
  }
  item.append(h("label", { for: id, text: label[0].toUpperCase() + label.slice(1) }), input,
    h("div", { class: "part-actions" }, removeButton(item, label)));
  if (type === "text") input.addEventListener("keydown", sendOnCtrlEnter);
  byId("parts").append(item);
  if (focus) input.focus();
  return input;
}

function sendOnCtrlEnter(event) {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    byId("composer").requestSubmit();
  }
}

function readBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/** The parts as written; raises with a message naming the part that is wrong. */
async function collectParts() {
  const parts = [];
  for (const item of byId("parts").children) {
    const type = item.dataset.type;
    const input = item.querySelector("textarea, input");
    const label = item.querySelector("label").textContent;
    if (type === "text") {
      if (input.value !== "") parts.push({ type: "text", text: input.value });
    } else if (type === "file") {
      const file = input.files && input.files[0];
      if (!file) throw new Error(`${label}: choose a file`);
      parts.push({ type: "file", bytes: await readBase64(file), name: file.name, mediaType: file.type || "application/octet-stream" });
    } else {
      let data;
      try {
        data = JSON.parse(input.value);
      } catch (err) {
        throw new Error(`${label}: not JSON (${err.message})`);
      }
      if (agent.version === "0.3" && (data === null || typeof data !== "object" || Array.isArray(data))) {
        throw new Error(`${label}: A2A 0.3 data parts must be JSON objects`);
      }
      parts.push({ type: "data", data });
    }
  }
  if (!parts.length) throw new Error("Write some text or add a part first");
  return parts;
}

function mode() {
  return byId("composer").querySelector("input[name=mode]:checked").value;
}

/** After an answer: stay in its context; continue its task only while it waits for input. */
function followUp(contextId, taskId, state) {
  if (contextId) byId("context-id").value = contextId;
  byId("task-id").value = taskId && INTERRUPTED.has(state) ? taskId : "";
}

function exchangeItem(message) {
  const item = h("li", { class: "exchange" }, renderMessage({ role: "user", parts: message.parts }));
  byId("transcript").append(item);
  return item;
}

function taskView() {
  return new TaskView({ history: false, raw: false, timeline: false, onOpen: (m) => openTask(m.id) });
}

async function sendBlocking(message, item, immediate) {
  const result = plainSendResult(await call("send", { message, returnImmediately: immediate }));
  if (result.type === "message") {
    item.append(renderMessage(result.message));
    followUp(result.message.contextId, null, null);
    announce("The agent answered with a message");
  } else if (result.type === "task") {
    noteTask(result.task, "send");
    const view = taskView();
    view.show(result.task);
    item.append(h("div", { class: "bubble agent" }, view.node));
    followUp(result.task.contextId, result.task.id, result.task.state);
    announce(`Task ${result.task.state}`);
  } else {
    item.append(h("p", { class: "warn", text: "The answer is neither a task nor a message." }));
  }
}

async function sendStreaming(message, item) {
  const view = taskView();
  const events = h("ol", { class: "events", role: "log", "aria-live": "polite", "aria-label": "Stream events" });
  const replies = h("div", {});
  item.append(h("div", { class: "bubble agent" }, h("p", { class: "who", text: "Stream" }), view.node, replies,
    h("details", { open: true }, h("summary", { text: "Events" }), events)));
  let count = 0;
  let last = { contextId: null, taskId: null, state: null };
  streamControl = new AbortController();
  byId("stop-stream").disabled = false;
  try {
    await stream("stream", { message }, (event) => {
      count += 1;
      events.append(h("li", { text: eventLine(event, count) }));
      if (event.type === "message") {
        replies.append(renderMessage(event.message));
        last = { contextId: event.message.contextId, taskId: null, state: null };
      } else if (event.type === "error") {
        replies.append(renderError(event.error));
      } else if (event.type !== "unknown") {
        view.apply(event);
        const task = view.model;
        if (event.type === "task") noteTask(event.task, "stream");
        if (event.type === "status") noteState(event.taskId, event.state, event.timestamp, "stream");
        last = { contextId: task.contextId, taskId: task.id, state: task.state };
      }
    }, streamControl.signal);
    events.append(h("li", { class: "note", text: `stream ended after ${count} event${count === 1 ? "" : "s"}` }));
    announce(`Stream ended${last.state ? `: ${last.state}` : ""}`);
  } finally {
    streamControl = null;
    byId("stop-stream").disabled = true;
  }
  followUp(last.contextId, last.taskId, last.state);
}

async function onSend(event) {
  event.preventDefault();
  const error = byId("chat-error");
  error.textContent = "";
  let parts;
  try {
    parts = await collectParts();
  } catch (err) {
    error.textContent = err.message;
    return;
  }
  const message = {
    messageId: newId("msg"), parts,
    contextId: byId("context-id").value.trim(), taskId: byId("task-id").value.trim(),
  };
  const item = exchangeItem(message);
  const send = byId("send");
  send.disabled = true;
  try {
    if (mode() === "stream") await sendStreaming(message, item);
    else await sendBlocking(message, item, mode() === "immediate");
    for (const input of byId("parts").querySelectorAll("textarea")) {
      if (input.closest("li").dataset.type === "text") input.value = "";
    }
  } catch (err) {
    item.append(err instanceof A2AError ? renderError(err.error) : h("p", { class: "error", text: err.message }));
    error.textContent = err.message;
  } finally {
    send.disabled = false;
  }
}

export function initChatView(open) {
  openTask = open;
  byId("add-text").addEventListener("click", () => addPart("text"));
  byId("add-file").addEventListener("click", () => addPart("file"));
  byId("add-data").addEventListener("click", () => addPart("data"));
  byId("composer").addEventListener("submit", onSend);
  byId("stop-stream").addEventListener("click", () => streamControl && streamControl.abort());
  byId("new-conversation").addEventListener("click", () => {
    byId("context-id").value = "";
    byId("task-id").value = "";
    fill(byId("transcript"));
    announce("New conversation");
  });
  addPart("text", false);
}

/** Continue a task from elsewhere (the Tasks view): its ids go into the composer. */
export function continueTask(task) {
  byId("context-id").value = task.contextId || "";
  byId("task-id").value = task.id || "";
}
