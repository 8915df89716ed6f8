// Rendering of the neutral shapes (wire.js): parts, messages, artifacts,
// stream events, and TaskView, a task kept current as events arrive.

import { h, fill, pretty, safeLink } from "./dom.js";
import { timeline } from "./agent.js";

export function stateBadge(state) {
  return h("span", { class: `state state-${state}`, text: state });
}

function base64Size(b64) {
  const text = String(b64 || "").replace(/=+$/, "");
  return Math.floor((text.length * 3) / 4);
}

function bytesOf(b64) {
  const binary = atob(String(b64).replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function downloadButton(part) {
  return h("button", {
    type: "button",
    text: `Download ${part.name || "file"}`,
    onclick: () => {
      let blob;
      try {
        blob = new Blob([bytesOf(part.bytes)], { type: part.mediaType || "application/octet-stream" });
      } catch {
        return;
      }
      const url = URL.createObjectURL(blob);
      const link = h("a", { href: url, download: part.name || "file" });
      document.body.append(link);
      link.click();
      link.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 1000);
    },
  });
}

export function renderPart(part) {
  if (part.type === "text") return h("p", { class: "text", text: part.text });
  if (part.type === "file") {
    const label = `${part.name || "file"} (${part.mediaType || "no media type"}`
      + `${part.bytes !== undefined ? `, ${base64Size(part.bytes)} bytes` : ""})`;
    const node = h("div", { class: "file" }, h("span", { text: `File: ${label} ` }));
    if (part.uri) node.append(safeLink(part.uri));
    if (part.bytes !== undefined) {
      node.append(downloadButton(part));
      if (/^image\/(png|jpeg|gif|webp)$/.test(part.mediaType || "")) {
        node.append(h("img", { src: `data:${part.mediaType};base64,${part.bytes}`, alt: part.name || "image part" }));
      }
    }
    return node;
  }
  return h("div", {}, h("span", { class: "note", text: "Data" }), h("pre", { class: "json", text: pretty(part.data) }));
}

export function renderParts(parts) {
  return h("div", { class: "parts-view" }, parts.map(renderPart));
}

export function renderMessage(message) {
  return h("div", { class: `bubble ${message.role}` },
    h("p", { class: "who", text: message.role === "agent" ? "Agent" : "You" }),
    renderParts(message.parts));
}

export function renderArtifact(artifact) {
  const title = artifact.name || artifact.artifactId;
  return h("div", { class: "box artifact" },
    h("h4", { text: `Artifact ${title}` }),
    artifact.name ? h("p", { class: "note", text: artifact.artifactId }) : null,
    artifact.description ? h("p", { class: "note", text: artifact.description }) : null,
    renderParts(artifact.parts));
}

function preview(parts) {
  const text = parts.map((part) => (part.type === "text" ? part.text
    : part.type === "file" ? `[file ${part.name || ""}]` : JSON.stringify(part.data))).join(" ");
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** One line describing a stream event, for an events log. */
export function eventLine(event, number) {
  const prefix = `#${number} `;
  if (event.type === "task") return `${prefix}task ${event.task.id}: ${event.task.state}`;
  if (event.type === "status") return `${prefix}status-update: ${event.state}${event.final ? " (final)" : ""}`;
  if (event.type === "artifact") {
    const flags = [event.append ? "append" : "", event.lastChunk ? "last chunk" : ""].filter(Boolean).join(", ");
    return `${prefix}artifact-update ${event.artifact.artifactId}${flags ? ` (${flags})` : ""}: ${preview(event.artifact.parts)}`;
  }
  if (event.type === "message") return `${prefix}message: ${preview(event.message.parts)}`;
  if (event.type === "error") return `${prefix}error ${event.error.code ?? ""} ${event.error.message ?? ""}`;
  return `${prefix}unrecognized event`;
}

export function renderError(error) {
  const parts = [`Error ${error.code ?? ""}`.trim(), error.status ? `(${error.status})` : "", `: ${error.message ?? ""}`];
  return h("div", { class: "error" }, h("span", { text: parts.join(" ").replace(" :", ":") }),
    error.data !== undefined ? h("pre", { class: "json", text: pretty(error.data) }) : null);
}

function formatTime(stamp) {
  return stamp || "";
}

/**
 * A task kept current: show(task) from a Task object, apply(event) from a
 * stream. Artifacts with `append` grow by their parts; others replace.
 */
export class TaskView {
  constructor(options = {}) {
    this.options = { history: true, timeline: true, raw: true, onOpen: null, ...options };
    this.node = h("div", { class: "task-view" });
    this.model = null;
  }

  show(task) {
    this.model = {
      id: task.id, contextId: task.contextId, state: task.state, timestamp: task.timestamp,
      statusMessage: task.statusMessage, history: task.history, raw: task.raw,
      artifacts: new Map(task.artifacts.map((artifact) => [artifact.artifactId, artifact])),
    };
    this.render();
  }

  apply(event) {
    if (event.type === "task") {
      this.show(event.task);
      return;
    }
    if (!this.model) {
      this.model = { id: event.taskId, contextId: event.contextId, state: "unknown", timestamp: "",
        statusMessage: null, history: [], raw: null, artifacts: new Map() };
    }
    if (event.type === "status") {
      this.model.state = event.state;
      this.model.timestamp = event.timestamp;
      this.model.statusMessage = event.message;
    } else if (event.type === "artifact") {
      const known = this.model.artifacts.get(event.artifact.artifactId);
      if (event.append && known) known.parts = [...known.parts, ...event.artifact.parts];
      else this.model.artifacts.set(event.artifact.artifactId, { ...event.artifact, parts: [...event.artifact.parts] });
    }
    this.render();
  }

  render() {
    const m = this.model;
    if (!m) return;
    const head = h("div", { class: "inline wrap task-head" },
      h("span", { text: "Task" }),
      this.options.onOpen
        ? h("button", { type: "button", class: "link", text: m.id, "aria-label": `Open task ${m.id}`, onclick: () => this.options.onOpen(m) })
        : h("code", { text: m.id }),
      stateBadge(m.state));
    const sections = [head,
      h("dl", { class: "pairs" },
        h("dt", { text: "Context" }), h("dd", { text: m.contextId || "" }),
        h("dt", { text: "Updated" }), h("dd", { text: formatTime(m.timestamp) }))];
    if (m.statusMessage) sections.push(h("h4", { text: "Status message" }), renderMessage(m.statusMessage));
    if (this.options.timeline) sections.push(h("h4", { text: "State timeline" }), this.renderTimeline());
    if (m.artifacts.size) {
      sections.push(h("h4", { text: "Artifacts" }), ...[...m.artifacts.values()].map(renderArtifact));
    }
    if (this.options.history && m.history && m.history.length) {
      sections.push(h("h4", { text: `History (${m.history.length})` }),
        h("ol", { class: "history" }, m.history.map((message) => h("li", {}, renderMessage(message)))));
    }
    if (this.options.raw && m.raw) {
      sections.push(h("details", {}, h("summary", { text: "Raw task JSON" }), h("pre", { class: "json", text: pretty(m.raw) })));
    }
    fill(this.node, sections);
  }

  renderTimeline() {
    const entries = timeline(this.model.id);
    if (!entries.length) return h("p", { class: "note", text: "No states seen yet." });
    return h("ol", { class: "timeline", "aria-label": "States seen by this page, oldest first" },
      entries.map((entry) => h("li", {}, stateBadge(entry.state),
        h("time", { text: entry.timestamp || entry.seen.toISOString() }),
        h("span", { class: "note", text: `via ${entry.via}` }))));
  }
}
