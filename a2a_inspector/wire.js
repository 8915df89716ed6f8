// The wire shapes of A2A 0.3 and 1.0, over JSON-RPC and HTTP+JSON (https://a2a-protocol.org/latest/specification/).
//
// The page works on plain objects ("neutral" shapes: states spelled as in 0.3,
// parts as {type: "text"|"file"|"data", ...}); this module alone turns them
// into each dialect's JSON and reads both dialects back.

export const STATES = [
  "submitted", "working", "input-required", "auth-required",
  "completed", "canceled", "failed", "rejected",
];
export const TERMINAL = new Set(["completed", "canceled", "failed", "rejected"]);
export const INTERRUPTED = new Set(["input-required", "auth-required"]);

/** Bindings the page speaks, and the versions it speaks each in. */
export const BINDINGS = { "JSONRPC": ["1.0", "0.3"], "HTTP+JSON": ["1.0"] };

const METHODS = {
  send: { "0.3": "message/send", "1.0": "SendMessage" },
  stream: { "0.3": "message/stream", "1.0": "SendStreamingMessage" },
  get: { "0.3": "tasks/get", "1.0": "GetTask" },
  // 0.3 has no ListTasks over JSON-RPC; "tasks/list" is an alias some servers accept.
  list: { "0.3": "tasks/list", "1.0": "ListTasks" },
  cancel: { "0.3": "tasks/cancel", "1.0": "CancelTask" },
  subscribe: { "0.3": "tasks/resubscribe", "1.0": "SubscribeToTask" },
};
const STREAMING = new Set(["stream", "subscribe"]);

// HTTP+JSON 1.0: [HTTP method, path segments, the rest of the params is the body].
const ROUTES = {
  send: ["POST", ["message:send"], true],
  stream: ["POST", ["message:stream"], true],
  get: ["GET", ["tasks", "{id}"], false],
  list: ["GET", ["tasks"], false],
  cancel: ["POST", ["tasks", "{id}:cancel"], true],
  subscribe: ["POST", ["tasks", "{id}:subscribe"], true],
};

export function methodName(op, version) {
  return METHODS[op][version];
}

/** "0.3.0" -> "0.3", "1.0" -> "1.0"; "" when it is not a version. */
export function normalizeVersion(raw) {
  const match = /^\s*(\d+)\.(\d+)/.exec(String(raw ?? ""));
  return match ? `${Number(match[1])}.${Number(match[2])}` : "";
}

// -- states ------------------------------------------------------------------------------

export function wireState(state, version) {
  return version === "0.3" ? state : `TASK_STATE_${state.toUpperCase().replace(/-/g, "_")}`;
}

/** Either spelling (or the proto's integer) -> "input-required". */
export function plainState(raw) {
  const numbers = ["unknown", "submitted", "working", "completed", "failed", "canceled",
    "input-required", "rejected", "auth-required"];
  if (typeof raw === "number") return numbers[raw] || "unknown";
  const text = String(raw ?? "unknown");
  if (text.startsWith("TASK_STATE_")) {
    const name = text.slice("TASK_STATE_".length).toLowerCase().replace(/_/g, "-");
    return name === "unspecified" ? "unknown" : name === "cancelled" ? "canceled" : name;
  }
  return text;
}

// -- outgoing ----------------------------------------------------------------------------

export function wirePart(part, version) {
  if (version === "0.3") {
    if (part.type === "text") return { kind: "text", text: part.text };
    if (part.type === "file") {
      const file = { bytes: part.bytes };
      if (part.name) file.name = part.name;
      if (part.mediaType) file.mimeType = part.mediaType;
      return { kind: "file", file };
    }
    return { kind: "data", data: part.data };
  }
  if (part.type === "text") return { text: part.text };
  if (part.type === "file") {
    const out = { raw: part.bytes };
    if (part.name) out.filename = part.name;
    if (part.mediaType) out.mediaType = part.mediaType;
    return out;
  }
  return { data: part.data };
}

export function wireMessage(message, version) {
  const out = version === "0.3"
    ? { kind: "message", messageId: message.messageId, role: "user" }
    : { messageId: message.messageId, role: "ROLE_USER" };
  out.parts = message.parts.map((part) => wirePart(part, version));
  if (message.contextId) out.contextId = message.contextId;
  if (message.taskId) out.taskId = message.taskId;
  return out;
}

/** The params object of one operation, from neutral values; unset members are left out. */
export function wireParams(op, values, version, tenant) {
  const params = {};
  const set = (key, value) => {
    if (value !== undefined && value !== null && value !== "") params[key] = value;
  };
  if (op === "send" || op === "stream") {
    params.message = wireMessage(values.message, version);
    if (op === "send") {
      const immediate = Boolean(values.returnImmediately);
      params.configuration = version === "0.3" ? { blocking: !immediate } : { returnImmediately: immediate };
    }
  } else if (op === "list") {
    set("contextId", values.contextId);
    set("status", values.status ? wireState(values.status, version) : undefined);
    set("pageSize", values.pageSize);
    set("pageToken", values.pageToken);
    set("historyLength", values.historyLength);
    if (values.includeArtifacts) params.includeArtifacts = true;
  } else {
    params.id = values.id;
    if (op === "get") set("historyLength", values.historyLength);
  }
  if (version === "1.0" && tenant) params.tenant = tenant;
  return params;
}

let nextRequestId = 1;

/** A JSON-RPC call: POST to the interface URL, the version's method name. */
export function jsonRpcRequest(op, params, version, url) {
  const streaming = STREAMING.has(op);
  const headers = { "Content-Type": "application/json" };
  if (version === "1.0") headers["A2A-Version"] = "1.0";
  if (streaming) headers["Accept"] = "text/event-stream";
  const envelope = { jsonrpc: "2.0", id: nextRequestId++, method: METHODS[op][version], params };
  return {
    op, version, binding: "JSONRPC", label: envelope.method, method: "POST", url, headers,
    body: JSON.stringify(envelope), stream: streaming,
  };
}

/** An HTTP+JSON (1.0) call: the route's path below the interface URL, tenant first. */
export function restRequest(op, params, url) {
  const [method, pattern, hasBody] = ROUTES[op];
  const rest = { ...params };
  const tenant = rest.tenant;
  delete rest.tenant;
  const segments = pattern.map((segment) => {
    if (!segment.startsWith("{")) return segment;
    const close = segment.indexOf("}");
    const name = segment.slice(1, close);
    const value = rest[name];
    delete rest[name];
    return encodeURIComponent(String(value ?? "")) + segment.slice(close + 1);
  });
  if (tenant) segments.unshift(encodeURIComponent(tenant));
  let target = `${url.replace(/\/+$/, "")}/${segments.join("/")}`;
  const headers = { "A2A-Version": "1.0" };
  let body;
  if (hasBody) {
    headers["Content-Type"] = "application/a2a+json";
    body = JSON.stringify(rest);
  } else {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(rest)) query.append(key, String(value));
    if ([...query.keys()].length) target += `?${query}`;
  }
  if (STREAMING.has(op)) headers["Accept"] = "text/event-stream";
  return {
    op, version: "1.0", binding: "HTTP+JSON", label: `${method} ${pattern.join("/")}`,
    method, url: target, headers, body, stream: STREAMING.has(op),
  };
}

// -- incoming ----------------------------------------------------------------------------

/** {result} or {error: {code, message, data}} from one non-streamed answer. */
export function readReply(binding, status, json) {
  if (binding === "JSONRPC") {
    if (json && typeof json === "object" && "error" in json) return { error: json.error };
    if (json && typeof json === "object" && "result" in json) return { result: json.result };
    return { error: { code: status, message: `not a JSON-RPC response (HTTP ${status})` } };
  }
  if (status >= 200 && status < 300) return { result: json };
  return { error: restError(status, json) };
}

/** One SSE event's data: a JSON-RPC response (JSON-RPC), a bare StreamResponse (HTTP+JSON). */
export function readEventData(binding, data) {
  if (data && typeof data === "object" && "error" in data) {
    return { error: binding === "JSONRPC" ? data.error : restError(0, data) };
  }
  if (binding === "JSONRPC") return data && "result" in data ? { result: data.result } : { error: { message: "event without result" } };
  return { result: data };
}

function restError(status, json) {
  const error = json && json.error;
  if (error && typeof error === "object") {
    return { code: error.code ?? status, status: error.status, message: error.message, data: error.details };
  }
  return { code: status, message: `HTTP ${status}` };
}

/** A part of either dialect -> {type, text | bytes/uri/name/mediaType | data}. */
export function plainPart(part) {
  if (!part || typeof part !== "object") return { type: "data", data: part };
  const meta = { metadata: part.metadata };
  if (part.kind === "text" || (part.kind === undefined && "text" in part)) {
    return { type: "text", text: String(part.text ?? ""), mediaType: part.mediaType, ...meta };
  }
  if (part.kind === "file") {
    const file = part.file || {};
    return { type: "file", bytes: file.bytes, uri: file.uri, name: file.name, mediaType: file.mimeType, ...meta };
  }
  if (part.kind === undefined && ("raw" in part || "url" in part)) {
    return { type: "file", bytes: part.raw, uri: part.url, name: part.filename, mediaType: part.mediaType, ...meta };
  }
  return { type: "data", data: part.data, mediaType: part.mediaType, ...meta };
}

export function plainMessage(message) {
  const role = String(message.role ?? "");
  return {
    messageId: message.messageId,
    role: role === "ROLE_AGENT" || role === "agent" ? "agent" : "user",
    parts: (message.parts || []).map(plainPart),
    contextId: message.contextId,
    taskId: message.taskId,
  };
}

export function plainArtifact(artifact) {
  return {
    artifactId: artifact.artifactId,
    name: artifact.name,
    description: artifact.description,
    parts: (artifact.parts || []).map(plainPart),
  };
}

export function plainTask(task) {
  const status = task.status || {};
  return {
    id: task.id,
    contextId: task.contextId,
    state: plainState(status.state),
    timestamp: status.timestamp,
    statusMessage: status.message ? plainMessage(status.message) : null,
    artifacts: (task.artifacts || []).map(plainArtifact),
    history: (task.history || []).map(plainMessage),
    raw: task,
  };
}

/** A SendMessage result: {type: "task", task} or {type: "message", message}. */
export function plainSendResult(result) {
  const event = plainEvent(result);
  if (event.type === "task" || event.type === "message") return event;
  return { type: "unknown", raw: result };
}

/** A stream event (1.0 StreamResponse member, or 0.3 `kind`) in one shape. */
export function plainEvent(result) {
  if (!result || typeof result !== "object") return { type: "unknown", raw: result };
  const kind = result.kind;
  if ("task" in result) return { type: "task", task: plainTask(result.task) };
  if ("statusUpdate" in result) return statusEvent(result.statusUpdate);
  if ("artifactUpdate" in result) return artifactEvent(result.artifactUpdate);
  if (kind === "status-update") return statusEvent(result);
  if (kind === "artifact-update") return artifactEvent(result);
  if (kind === "task" || (kind === undefined && "status" in result && "id" in result)) {
    return { type: "task", task: plainTask(result) };
  }
  if ("message" in result && !("role" in result)) return { type: "message", message: plainMessage(result.message) };
  if (kind === "message" || "parts" in result) return { type: "message", message: plainMessage(result) };
  if ("status" in result && "taskId" in result) return statusEvent(result);
  if ("artifact" in result) return artifactEvent(result);
  return { type: "unknown", raw: result };
}

function statusEvent(update) {
  const status = update.status || {};
  return {
    type: "status",
    taskId: update.taskId,
    contextId: update.contextId,
    state: plainState(status.state),
    timestamp: status.timestamp,
    message: status.message ? plainMessage(status.message) : null,
    final: update.final === true,
  };
}

function artifactEvent(update) {
  return {
    type: "artifact",
    taskId: update.taskId,
    contextId: update.contextId,
    artifact: plainArtifact(update.artifact || {}),
    append: update.append === true,
    lastChunk: update.lastChunk === true,
  };
}

/** A ListTasks result in either dialect. */
export function plainTaskList(result) {
  return {
    tasks: (result.tasks || []).map(plainTask),
    nextPageToken: result.nextPageToken || "",
    pageSize: result.pageSize,
    totalSize: result.totalSize,
  };
}

// -- cards -------------------------------------------------------------------------------

/** The interfaces a card offers: 1.0 `supportedInterfaces`, else the 0.3 fields. */
export function cardInterfaces(card, cardUrl) {
  const out = [];
  const add = (url, binding, version, tenant) => {
    if (!url) return;
    let absolute;
    try {
      absolute = new URL(url, cardUrl).href;
    } catch {
      return;
    }
    out.push({ url: absolute, binding: String(binding || "JSONRPC"), version: normalizeVersion(version) || "0.3", tenant: tenant || "" });
  };
  if (Array.isArray(card.supportedInterfaces)) {
    for (const item of card.supportedInterfaces) {
      if (item && typeof item === "object") add(item.url, item.protocolBinding, item.protocolVersion, item.tenant);
    }
    return out;
  }
  add(card.url, card.preferredTransport, card.protocolVersion || "0.3");
  for (const item of card.additionalInterfaces || []) {
    if (item && typeof item === "object") add(item.url, item.transport, card.protocolVersion || "0.3");
  }
  return out;
}
