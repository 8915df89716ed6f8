// The inspector page: reads config.json (written by the server that serves
// the page), wires the header controls and the tabs, and loads the card.

import { byId, announce } from "./dom.js";
import { agent, agentChanged, cardUrlFor, currentInterface, offers, onAgentChange } from "./agent.js";
import { settings } from "./net.js";
import { BINDINGS } from "./wire.js";
import { initCardView, loadCard } from "./card-view.js";
import { initChatView, continueTask } from "./chat-view.js";
import { initTasksView, openTask } from "./tasks-view.js";
import { initConsoleView } from "./console-view.js";

const TABS = ["card", "chat", "tasks", "console"];

export function showTab(name, { focus = false } = {}) {
  for (const other of TABS) {
    const tab = byId(`tab-${other}`);
    const selected = other === name;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    byId(`view-${other}`).hidden = !selected;
  }
  if (focus) byId(`tab-${name}`).focus();
}

function initTabs() {
  for (const name of TABS) byId(`tab-${name}`).addEventListener("click", () => showTab(name));
  byId("tab-card").parentElement.addEventListener("keydown", (event) => {
    const index = TABS.findIndex((name) => byId(`tab-${name}`) === document.activeElement);
    if (index < 0) return;
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: TABS.length - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    showTab(TABS[(moves[event.key] + TABS.length) % TABS.length], { focus: true });
  });
}

function parseHeaders(text) {
  return text.split(/\r?\n/).map((line) => line.trim()).filter(Boolean).map((line) => {
    const colon = line.indexOf(":");
    return colon > 0 ? [line.slice(0, colon).trim(), line.slice(colon + 1).trim()] : null;
  }).filter(Boolean);
}

/** Keep the Protocol and Binding selects to what the card offers. */
function syncConnection() {
  const protocol = byId("protocol");
  const binding = byId("binding");
  for (const option of binding.options) {
    option.disabled = !BINDINGS[option.value].some((version) => offers(option.value, version));
  }
  if (binding.selectedOptions[0].disabled) {
    const usable = [...binding.options].find((option) => !option.disabled);
    if (usable) binding.value = usable.value;
  }
  agent.binding = binding.value;
  for (const option of protocol.options) {
    option.disabled = !BINDINGS[agent.binding].includes(option.value) || !offers(agent.binding, option.value);
  }
  if (protocol.selectedOptions[0].disabled) {
    const usable = [...protocol.options].find((option) => !option.disabled);
    if (usable) protocol.value = usable.value;
  }
  agent.version = protocol.value;
  showEndpoint();
}

function showEndpoint() {
  const iface = currentInterface();
  const note = byId("connection-note");
  byId("endpoint").textContent = iface ? iface.url : "none";
  if (!iface) {
    note.textContent = `The card offers no ${agent.binding} interface for A2A ${agent.version}.`;
    return;
  }
  const notes = [];
  if (iface.assumed) notes.push("No card: calls go to the agent URL as JSON-RPC.");
  if (iface.tenant) notes.push(`Tenant ${iface.tenant} is sent with every call.`);
  if (settings.proxy) notes.push("Calls go through the a2a inspect proxy on this machine.");
  if (!settings.proxy && new URL(iface.url).origin !== window.location.origin) {
    notes.push(`The endpoint is on another origin than this page; the browser will block it unless the agent allows CORS. Use "a2a inspect ${agent.baseUrl}" instead.`);
  }
  note.textContent = notes.join(" ");
}

let config = {};

function setAgentUrl(url) {
  agent.baseUrl = url;
  agent.cardUrl = config.cardUrl && url === config.agentUrl ? config.cardUrl : cardUrlFor(url);
  byId("agent-url").value = url;
}

async function readConfig() {
  try {
    const response = await fetch("config.json", { cache: "no-store" });
    return response.ok ? await response.json() : {};
  } catch {
    return {};
  }
}

async function start() {
  config = await readConfig();
  settings.proxy = config.proxy || null;
  initTabs();
  initConsoleView();
  initCardView();
  initChatView(async (id) => {
    showTab("tasks");
    await openTask(id);
  });
  initTasksView((task) => {
    continueTask(task);
    showTab("chat");
    const text = document.querySelector("#parts textarea");
    if (text) text.focus();
    announce(`Continuing task ${task.id}`);
  });
  onAgentChange(syncConnection);
  byId("protocol").addEventListener("change", () => { agent.version = byId("protocol").value; syncConnection(); });
  byId("binding").addEventListener("change", () => { agent.binding = byId("binding").value; syncConnection(); });
  byId("extra-headers").addEventListener("input", (event) => { settings.extraHeaders = parseHeaders(event.target.value); });
  const input = byId("agent-url");
  if (config.proxy) {
    input.readOnly = true;
    input.title = "a2a inspect serves one agent: start it again for another";
  }
  byId("agent-form").addEventListener("submit", (event) => {
    event.preventDefault();
    try {
      setAgentUrl(new URL(input.value, window.location.href).href);
    } catch {
      byId("card-status").textContent = "That is not a URL.";
      return;
    }
    loadCard();
  });
  setAgentUrl(config.agentUrl || new URL("../", window.location.href).href);
  agentChanged();
  await loadCard();
  document.body.dataset.ready = "true";
}

start();
