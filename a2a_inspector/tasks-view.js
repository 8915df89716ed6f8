// The Tasks view: ListTasks with its filters and paging, and one task opened:
// its history, artifacts and state timeline, refreshed, subscribed to live,
// or canceled.

import { h, byId, fill, announce } from "./dom.js";
import { agent, call, stream, noteState, noteTask, A2AError } from "./agent.js";
import { STATES, plainTask, plainTaskList } from "./wire.js";
import { TaskView, eventLine, renderError, stateBadge } from "./render.js";

const detail = new TaskView({ history: true, timeline: true, raw: true });
let current = null;
let subscription = null;
/** The live events list of the task shown (made when first needed). */
let events = null;
let continueInChat = () => {};

function numberOrUndefined(id) {
  const text = byId(id).value.trim();
  return text === "" ? undefined : Number(text);
}

function listValues() {
  return {
    contextId: byId("filter-context").value.trim(),
    status: byId("filter-state").value,
    pageSize: numberOrUndefined("filter-page-size"),
    pageToken: byId("filter-page-token").value.trim(),
    historyLength: numberOrUndefined("filter-history"),
    includeArtifacts: byId("filter-artifacts").checked,
  };
}

function showError(target, err) {
  fill(target, err instanceof A2AError ? renderError(err.error) : h("span", { text: err.message }));
}

async function listTasks(event) {
  if (event) event.preventDefault();
  const status = byId("list-status");
  status.textContent = "Listing...";
  let page;
  try {
    page = plainTaskList(await call("list", listValues()));
  } catch (err) {
    showError(status, err);
    return;
  }
  for (const task of page.tasks) noteTask(task, "list");
  fill(byId("task-rows"), page.tasks.map(taskRow));
  const next = byId("next-page");
  next.disabled = !page.nextPageToken;
  next.dataset.token = page.nextPageToken;
  const total = page.totalSize !== undefined ? ` of ${page.totalSize}` : "";
  status.textContent = `${page.tasks.length} task${page.tasks.length === 1 ? "" : "s"}${total}`
    + `${page.nextPageToken ? "; more on the next page" : ""}.`
    + `${agent.version === "0.3" ? " (0.3 has no ListTasks over JSON-RPC; this used tasks/list.)" : ""}`;
}

function taskRow(task) {
  return h("tr", {},
    h("td", { "data-label": "Task" }, h("button", {
      type: "button", class: "link", text: task.id, "aria-label": `Open task ${task.id}`,
      onclick: () => openTask(task.id),
    })),
    h("td", { "data-label": "State" }, stateBadge(task.state)),
    h("td", { "data-label": "Context", text: task.contextId || "" }),
    h("td", { "data-label": "Updated", text: task.timestamp || "" }));
}

function nextPage() {
  byId("filter-page-token").value = byId("next-page").dataset.token || "";
  listTasks();
}

/** GetTask and show it in the detail pane (focus moves to its heading). */
export async function openTask(id, { focus = true } = {}) {
  stopSubscription();
  const section = byId("task-detail");
  section.hidden = false;
  byId("task-heading").textContent = `Task ${id}`;
  byId("open-id").value = id;
  current = { id };
  events = null;
  fill(byId("task-view"));
  if (focus) byId("task-heading").focus();
  await refresh();
}

async function refresh() {
  if (!current) return;
  const error = byId("task-error");
  fill(error);
  try {
    const task = plainTask(await call("get", { id: current.id, historyLength: numberOrUndefined("filter-history") }));
    noteTask(task, "get");
    current = task;
    detail.show(task);
    fill(byId("task-view"), detail.node, events ? eventsBlock() : null);
    announce(`Task ${task.state}`);
  } catch (err) {
    showError(error, err);
  }
}

function eventsList() {
  if (!events) events = h("ol", { class: "events", role: "log", "aria-live": "polite", "aria-label": "Subscription events" });
  return events;
}

function eventsBlock() {
  return h("div", {}, h("h4", { text: "Live events" }), eventsList());
}

async function subscribe() {
  if (!current || subscription) return;
  const error = byId("task-error");
  fill(error);
  fill(eventsList());
  fill(byId("task-view"), detail.node, eventsBlock());
  subscription = new AbortController();
  setSubscribed(true);
  let count = 0;
  try {
    await stream("subscribe", { id: current.id }, (event) => {
      count += 1;
      events.append(h("li", { text: eventLine(event, count) }));
      if (event.type === "error") {
        fill(error, renderError(event.error));
        return;
      }
      if (event.type === "task") noteTask(event.task, "subscribe");
      if (event.type === "status") noteState(event.taskId, event.state, event.timestamp, "subscribe");
      if (event.type !== "unknown" && event.type !== "message") detail.apply(event);
    }, subscription.signal);
    events.append(h("li", { class: "note", text: "subscription ended" }));
    announce("Subscription ended");
  } catch (err) {
    showError(error, err);
  } finally {
    subscription = null;
    setSubscribed(false);
  }
}

function setSubscribed(on) {
  byId("task-subscribe").disabled = on;
  byId("task-unsubscribe").disabled = !on;
}

function stopSubscription() {
  if (subscription) subscription.abort();
}

async function cancel() {
  if (!current) return;
  const error = byId("task-error");
  fill(error);
  try {
    const task = plainTask(await call("cancel", { id: current.id }));
    noteTask(task, "cancel");
    if (!subscription) {
      current = task;
      detail.show(task);
      fill(byId("task-view"), detail.node, events ? eventsBlock() : null);
    }
    announce(`Cancel answered: ${task.state}`);
  } catch (err) {
    showError(error, err);
  }
}

export function initTasksView(toChat) {
  continueInChat = toChat;
  const select = byId("filter-state");
  for (const state of STATES) select.append(h("option", { value: state, text: state }));
  byId("list-form").addEventListener("submit", listTasks);
  byId("next-page").addEventListener("click", nextPage);
  byId("open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const id = byId("open-id").value.trim();
    if (id) openTask(id);
  });
  byId("task-refresh").addEventListener("click", refresh);
  byId("task-subscribe").addEventListener("click", subscribe);
  byId("task-unsubscribe").addEventListener("click", stopSubscription);
  byId("task-cancel").addEventListener("click", cancel);
  byId("task-continue").addEventListener("click", () => current && continueInChat(current));
}
