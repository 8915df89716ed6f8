// The agent being inspected: its card, the interface chosen (binding and
// version), the states seen per task, and call()/stream() that speak to it.

import * as wire from "./wire.js";
import { exchange } from "./net.js";

export const agent = {
  baseUrl: "",
  cardUrl: "",
  /** The card (default variant) as parsed JSON, or null. */
  card: null,
  interfaces: [],
  version: "1.0",
  binding: "JSONRPC",
};

const listeners = [];

/** listener() runs whenever the card or the chosen interface changes. */
export function onAgentChange(listener) {
  listeners.push(listener);
}

export function agentChanged() {
  for (const listener of listeners) listener();
}

export function cardUrlFor(baseUrl) {
  const url = new URL(baseUrl);
  if (url.pathname.endsWith(".json")) return url.href;
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/.well-known/agent-card.json`;
  url.search = "";
  return url.href;
}

/** Whether the card offers (binding, version); with no card, only JSON-RPC is assumed. */
export function offers(binding, version) {
  if (!agent.card) return binding === "JSONRPC";
  return agent.interfaces.some((item) => item.binding === binding && item.version === version);
}

/** The interface calls go to: the card's entry for (binding, version), else the agent URL. */
export function currentInterface() {
  const found = agent.interfaces.find(
    (item) => item.binding === agent.binding && item.version === agent.version,
  );
  if (found) return found;
  if (agent.card && agent.interfaces.length) return null;
  return agent.binding === "JSONRPC"
    ? { url: agent.baseUrl, binding: "JSONRPC", version: agent.version, tenant: "", assumed: true }
    : null;
}

export class A2AError extends Error {
  constructor(error) {
    const code = error && error.code !== undefined ? `${error.code} ` : "";
    super(`${code}${(error && error.message) || "error"}`);
    this.error = error;
  }
}

export function buildRequest(op, values) {
  const iface = currentInterface();
  if (!iface) {
    throw new Error(`The card offers no ${agent.binding} interface for A2A ${agent.version}`);
  }
  const params = wire.wireParams(op, values, iface.version, iface.tenant);
  return iface.binding === "HTTP+JSON"
    ? wire.restRequest(op, params, iface.url)
    : wire.jsonRpcRequest(op, params, iface.version, iface.url);
}

/** One non-streaming operation; its result, or an A2AError. */
export async function call(op, values) {
  const request = buildRequest(op, values);
  const reply = await exchange(request);
  if (reply.streamed) throw new Error("the server answered a plain call with a stream");
  const outcome = wire.readReply(request.binding, reply.status, reply.json);
  if (outcome.error) throw new A2AError(outcome.error);
  return outcome.result;
}

/**
 * A streaming operation: onEvent gets each event in the neutral shape
 * (wire.plainEvent), or {type: "error", error} for an error event. An answer
 * that is not a stream (an error before streaming began) raises A2AError.
 */
export async function stream(op, values, onEvent, signal) {
  const request = buildRequest(op, values);
  const reply = await exchange(request, {
    signal,
    onEvent: (data) => {
      if (data === undefined) {
        onEvent({ type: "error", error: { message: "an event whose data is not JSON" } });
        return;
      }
      const item = wire.readEventData(request.binding, data);
      onEvent(item.error ? { type: "error", error: item.error } : wire.plainEvent(item.result));
    },
  });
  if (reply.streamed) return;
  const outcome = wire.readReply(request.binding, reply.status, reply.json);
  if (outcome.error) throw new A2AError(outcome.error);
  onEvent(wire.plainEvent(outcome.result));
}

// -- what the page has seen of each task ------------------------------------------------

const timelines = new Map();

/** Note a task's state as seen at some moment (consecutive repeats are kept once). */
export function noteState(taskId, state, timestamp, via) {
  if (!taskId || !state) return;
  const list = timelines.get(taskId) || [];
  const last = list[list.length - 1];
  if (last && last.state === state && (last.timestamp === timestamp || !timestamp)) return;
  list.push({ state, timestamp: timestamp || "", via, seen: new Date() });
  timelines.set(taskId, list);
}

export function timeline(taskId) {
  return timelines.get(taskId) || [];
}

/** Note every state an answer shows (a task, a list of tasks, a stream event). */
export function noteTask(task, via) {
  noteState(task.id, task.state, task.timestamp, via);
}
