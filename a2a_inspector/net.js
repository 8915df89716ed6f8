// Every HTTP exchange the page makes goes through exchange(): it adds the
// user's extra headers, routes the request through the local proxy when the
// page runs under `a2a inspect`, and records request and response (streamed
// events included) for the console, with a curl line for the real target URL.

import { readEvents } from "./sse.js";

export const settings = {
  /** Path prefix of the `a2a inspect` proxy ("/proxy/"), or null: fetch the agent directly. */
  proxy: null,
  /** [name, value] pairs sent with every request. */
  extraHeaders: [],
};

const observers = [];
let nextRecord = 1;

/** observer(kind, record, extra): kind is "start", "response", "event" or "end". */
export function observe(observer) {
  observers.push(observer);
}

function notify(kind, record, extra) {
  for (const observer of observers) observer(kind, record, extra);
}

/** The URL fetch() uses: the target itself, or the proxy path naming it. */
export function fetchUrl(target) {
  if (!settings.proxy) return target;
  const url = new URL(target);
  return `${settings.proxy}${url.protocol.slice(0, -1)}/${url.host}${url.pathname}${url.search}`;
}

/** Single-quote a word for a POSIX shell. */
export function shellQuote(word) {
  return `'${String(word).replace(/'/g, "'\\''")}'`;
}

/** The curl command that repeats a request against the agent itself. */
export function curlLine(request) {
  const words = ["curl", "-sS"];
  if (request.stream) words.push("-N");
  if (request.method !== "GET" || request.body !== undefined) words.push("-X", request.method);
  words.push(shellQuote(request.url));
  for (const [name, value] of Object.entries(request.headers)) words.push("-H", shellQuote(`${name}: ${value}`));
  if (request.body !== undefined) words.push("--data-raw", shellQuote(request.body));
  return words.join(" ");
}

export class NetworkError extends Error {}

/**
 * Send one request. Returns {status, headers, text, json, streamed}; a
 * text/event-stream answer is read to its end, each event passed to onEvent
 * (its data parsed as JSON, or undefined when it is not JSON).
 */
export async function exchange(request, { onEvent, signal } = {}) {
  const headers = { ...request.headers };
  for (const [name, value] of settings.extraHeaders) headers[name] = value;
  const sent = { ...request, headers };
  const record = {
    id: nextRecord++, label: request.label, started: new Date(), method: request.method,
    url: request.url, headers, body: request.body, curl: curlLine(sent), stream: request.stream,
    status: null, responseHeaders: [], responseText: null, events: [], error: null, ms: null,
  };
  notify("start", record);
  let response;
  try {
    response = await fetch(fetchUrl(request.url), {
      method: request.method, headers, body: request.body, signal,
      redirect: "manual", cache: "no-store", credentials: "same-origin",
    });
  } catch (err) {
    finish(record, signal && signal.aborted ? "stopped" : `network error: ${err.message}`);
    throw new NetworkError(record.error);
  }
  record.status = response.status;
  record.responseHeaders = [...response.headers.entries()];
  if (response.type === "opaqueredirect") {
    finish(record, "the server redirected; the inspector does not follow redirects");
    throw new NetworkError(record.error);
  }
  notify("response", record);
  const type = response.headers.get("Content-Type") || "";
  if (type.toLowerCase().startsWith("text/event-stream") && response.body) {
    await readStream(response, record, onEvent, signal);
    return { status: response.status, headers: response.headers, streamed: true };
  }
  let text;
  try {
    text = await response.text();
  } catch (err) {
    finish(record, signal && signal.aborted ? "stopped" : `read failed: ${err.message}`);
    throw new NetworkError(record.error);
  }
  record.responseText = text;
  finish(record, null);
  return { status: response.status, headers: response.headers, text, json: parseJson(text), streamed: false };
}

async function readStream(response, record, onEvent, signal) {
  try {
    await readEvents(response.body, (event) => {
      record.events.push(event);
      notify("event", record, event);
      if (onEvent) onEvent(parseJson(event.data), event);
    });
  } catch (err) {
    if (!(signal && signal.aborted)) {
      finish(record, `stream broken: ${err.message}`);
      throw new NetworkError(record.error);
    }
    finish(record, "stopped");
    return;
  }
  finish(record, null);
}

function finish(record, error) {
  record.error = error;
  record.ms = Date.now() - record.started.getTime();
  notify("end", record);
}

function parseJson(text) {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
