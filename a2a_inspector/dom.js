// Small DOM helpers. Everything an agent sends is untrusted: text goes in with
// textContent, never as markup, and only http(s) URLs become links.

/** An element with attributes (`text` sets textContent, `on<event>` adds a listener). */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "hidden" || key === "disabled" || key === "checked") node[key] = Boolean(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
}

export const byId = (id) => document.getElementById(id);

/** Replace a node's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

/** Pretty JSON when the text parses, else the text as it came. */
export function prettyText(text) {
  if (!text) return "";
  try {
    return pretty(JSON.parse(text));
  } catch {
    return text;
  }
}

/** A definition list from [term, value] pairs (values may be nodes); empty values skipped. */
export function pairs(entries, attrs = {}) {
  const list = h("dl", { class: "pairs", ...attrs });
  for (const [term, value] of entries) {
    if (value === undefined || value === null || value === "") continue;
    list.append(h("dt", { text: term }), h("dd", {}, value));
  }
  return list;
}

/** A link for http(s) URLs; anything else (javascript:, data:) stays text. */
export function safeLink(url, label) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return h("span", { text: url });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return h("span", { text: url });
  return h("a", { href: parsed.href, target: "_blank", rel: "noopener noreferrer", text: label || url });
}

/** Say something to screen readers (the polite live region). */
export function announce(text) {
  const region = byId("announcer");
  if (!region) return;
  region.textContent = "";
  window.setTimeout(() => { region.textContent = text; }, 30);
}

/** Copy text; where the clipboard API is refused, select it for Ctrl+C instead. */
export async function copyText(text, fallbackNode) {
  try {
    await navigator.clipboard.writeText(text);
    announce("Copied to the clipboard");
    return true;
  } catch {
    if (fallbackNode) {
      const range = document.createRange();
      range.selectNodeContents(fallbackNode);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    announce("Selected: press Control+C to copy");
    return false;
  }
}

let counter = 0;
/** A unique id for a message (crypto.randomUUID needs a secure context; loopback is one). */
export function newId(prefix) {
  if (window.crypto && typeof window.crypto.randomUUID === "function") return window.crypto.randomUUID();
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}
