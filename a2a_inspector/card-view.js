// The Card view: the card rendered, raw, per version variant, with its
// validators (ETag...), its signatures and its findings against the published
// A2A schemas (POST card-check: the check the server and `a2a card --check` run).

import { h, byId, fill, pairs, pretty, safeLink } from "./dom.js";
import { agent, agentChanged } from "./agent.js";
import { exchange } from "./net.js";
import * as wire from "./wire.js";

/** variant -> {status, headers, text, json}. */
const variants = new Map();

const VARIANT_HEADERS = { default: {}, "1.0": { "A2A-Version": "1.0" } };

function cardRequest(variant, extra = {}) {
  return {
    label: variant === "1.0" ? "agent card (A2A-Version: 1.0)" : "agent card",
    method: "GET", url: agent.cardUrl, headers: { Accept: "application/json", ...VARIANT_HEADERS[variant], ...extra },
    stream: false,
  };
}

async function fetchVariant(variant) {
  const reply = await exchange(cardRequest(variant));
  variants.set(variant, { status: reply.status, headers: reply.headers, text: reply.text, json: reply.json });
  return variants.get(variant);
}

/** Fetch both variants; the default one becomes the card the other views use. */
export async function loadCard() {
  const status = byId("card-status");
  status.textContent = `Loading ${agent.cardUrl} ...`;
  variants.clear();
  fill(byId("card-schema"));
  let main;
  try {
    main = await fetchVariant("default");
    await fetchVariant("1.0");
  } catch (err) {
    status.textContent = `Could not fetch the card: ${err.message}. Calls go to the agent URL as JSON-RPC.`;
    setCard(null);
    return;
  }
  if (main.status !== 200 || !main.json || typeof main.json !== "object") {
    status.textContent = `The card URL answered HTTP ${main.status}${main.json ? "" : " without JSON"}. Calls go to the agent URL as JSON-RPC.`;
    setCard(null);
    renderRaw();
    return;
  }
  status.textContent = "";
  setCard(main.json);
  await checkVariants();
}

const CHECKED = [["default", "Without A2A-Version"], ["1.0", "With A2A-Version: 1.0"]];

/** Each variant served as JSON, checked against the published schemas (the same variant
 *  twice only once). */
async function checkVariants() {
  const rows = [];
  for (const [variant, label] of CHECKED) {
    const shown = variants.get(variant);
    if (!shown || shown.status !== 200 || !shown.json || typeof shown.json !== "object") continue;
    const plain = variants.get("default");
    if (variant === "1.0" && plain && plain.text === shown.text) continue;
    try {
      const reply = await fetch("card-check", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: shown.text,
      });
      rows.push(renderCheck(label, reply.status, await reply.json()));
    } catch (err) {
      rows.push(h("p", { class: "warn", text: `${label}: the check failed: ${err.message}` }));
    }
  }
  fill(byId("card-schema"), ...rows);
}

function renderCheck(label, status, answer) {
  if (status !== 200) return h("p", { class: "warn", text: `${label}: ${answer.error || `HTTP ${status}`}` });
  const count = answer.findings.length;
  const verdict = count ? `${count} finding${count > 1 ? "s" : ""}` : "valid";
  return h("div", { class: "box schema-check" },
    h("p", { class: count ? "warn" : "", text: `${label}: ${verdict} against the A2A ${answer.schema} schema` }),
    count ? h("ul", {}, answer.findings.map((f) => h("li", {}, h("code", { text: f.path }), ` ${f.message}`))) : null);
}

function setCard(card) {
  agent.card = card;
  agent.interfaces = card ? wire.cardInterfaces(card, agent.cardUrl) : [];
  renderCard();
  renderRaw();
  agentChanged();
}

function yesNo(value) {
  return value ? "yes" : "no";
}

function renderCard() {
  const target = byId("card-rendered");
  const card = agent.card;
  if (!card) {
    fill(target);
    return;
  }
  const caps = card.capabilities || {};
  const provider = card.provider ? `${card.provider.organization || ""} ${card.provider.url || ""}`.trim() : "";
  fill(target,
    h("div", { class: "box" },
      h("h3", { text: `${card.name || "(no name)"}${card.version ? ` ${card.version}` : ""}` }),
      h("p", { text: card.description || "" }),
      pairs([
        ["Provider", provider],
        ["Documentation", card.documentationUrl ? safeLink(card.documentationUrl) : ""],
        ["Input modes", (card.defaultInputModes || []).join(", ")],
        ["Output modes", (card.defaultOutputModes || []).join(", ")],
        ["Signature", signatureSummary(card)],
      ])),
    h("h3", { text: "Capabilities" }),
    pairs([
      ["Streaming", yesNo(caps.streaming)],
      ["Push notifications", yesNo(caps.pushNotifications)],
      ["Extended card", yesNo(caps.extendedAgentCard || card.supportsAuthenticatedExtendedCard)],
      ["Extensions", (caps.extensions || []).length ? renderExtensions(caps.extensions) : "none"],
    ]),
    h("h3", { text: "Interfaces" }),
    renderInterfaces(),
    h("h3", { text: `Skills (${(card.skills || []).length})` }),
    h("ul", { class: "cards" }, (card.skills || []).map(renderSkill)),
    renderSecurity(card),
    renderSignatures(card));
}

function renderExtensions(extensions) {
  return h("ul", {}, extensions.map((ext) => h("li", {},
    h("code", { text: ext.uri }), ext.required ? " (required)" : "", ext.description ? ` - ${ext.description}` : "")));
}

function renderInterfaces() {
  if (!agent.interfaces.length) return h("p", { class: "note", text: "The card lists no interface." });
  return h("div", { class: "table-wrap" }, h("table", {},
    h("thead", {}, h("tr", {}, ["URL", "Binding", "Version", "Tenant"].map((name) => h("th", { scope: "col", text: name })))),
    h("tbody", {}, agent.interfaces.map((item) => h("tr", {},
      h("td", {}, h("code", { text: item.url })),
      h("td", { text: item.binding }),
      h("td", { text: item.version }),
      h("td", { text: item.tenant || "" }))))));
}

function renderSkill(skill) {
  return h("li", { class: "box" },
    h("h4", { text: skill.name || skill.id }),
    h("p", { class: "note" }, h("code", { text: skill.id })),
    h("p", { text: skill.description || "" }),
    (skill.tags || []).length ? h("ul", { class: "tags", "aria-label": "Tags" }, skill.tags.map((tag) => h("li", { text: tag }))) : null,
    (skill.examples || []).length ? h("div", {}, h("p", { class: "note", text: "Examples" }),
      h("ul", {}, skill.examples.map((example) => h("li", { text: example })))) : null,
    pairs([
      ["Input modes", (skill.inputModes || []).join(", ")],
      ["Output modes", (skill.outputModes || []).join(", ")],
    ]));
}

function renderSecurity(card) {
  const schemes = card.securitySchemes || {};
  const names = Object.keys(schemes);
  if (!names.length) return null;
  return h("div", {}, h("h3", { text: "Security schemes" }),
    pairs(names.map((name) => [name, JSON.stringify(schemes[name])])));
}

function signatureSummary(card) {
  const list = Array.isArray(card.signatures) ? card.signatures : [];
  return list.length ? `${list.length} signature${list.length > 1 ? "s" : ""} (not verified here)` : "unsigned";
}

/** A JWS protected header, decoded from base64url JSON (null when it is not). */
function protectedHeader(text) {
  try {
    const b64 = String(text).replace(/-/g, "+").replace(/_/g, "/");
    const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

function renderSignatures(card) {
  const list = Array.isArray(card.signatures) ? card.signatures : [];
  if (!list.length) return h("div", {}, h("h3", { text: "Signatures" }), h("p", { text: "unsigned" }));
  return h("div", {}, h("h3", { text: "Signatures" }),
    h("ol", {}, list.map((sig) => {
      const header = protectedHeader(sig.protected);
      return h("li", { class: "box" }, header
        ? pairs([["alg", header.alg], ["kid", header.kid], ["typ", header.typ], ["jku", header.jku]])
        : h("p", { class: "warn", text: "The protected header is not base64url JSON." }),
      sig.header ? h("pre", { class: "json", text: pretty(sig.header) }) : null);
    })));
}

function renderRaw() {
  const variant = byId("card-variant").value;
  const shown = variants.get(variant);
  const validators = byId("card-validators");
  if (!shown) {
    fill(validators);
    byId("card-raw").textContent = "";
    byId("card-variants-note").textContent = "";
    return;
  }
  const header = (name) => (shown.headers ? shown.headers.get(name) : null);
  fill(validators, ...[["Status", String(shown.status)], ["ETag", header("ETag")],
    ["Cache-Control", header("Cache-Control")], ["Last-Modified", header("Last-Modified")],
    ["Vary", header("Vary")], ["Content-Type", header("Content-Type")]]
    .filter(([, value]) => value)
    .flatMap(([term, value]) => [h("dt", { text: term }), h("dd", { text: value })]));
  byId("card-raw").textContent = shown.json ? pretty(shown.json) : shown.text || "";
  byId("card-variants-note").textContent = variantsNote();
}

function variantsNote() {
  const plain = variants.get("default");
  const strict = variants.get("1.0");
  if (!plain || !strict || !plain.headers || !strict.headers) return "";
  if (plain.text === strict.text) return "Both variants are the same document.";
  return `The variants differ: the 1.0 one has ETag ${strict.headers.get("ETag") || "(none)"}, `
    + `the other ${plain.headers.get("ETag") || "(none)"}.`;
}

/** GET again with If-None-Match: a 304 says the copy shown is current. */
async function revalidate() {
  const variant = byId("card-variant").value;
  const shown = variants.get(variant);
  const etag = shown && shown.headers ? shown.headers.get("ETag") : null;
  const status = byId("card-status");
  if (!etag) {
    status.textContent = "No ETag to revalidate with: load the card first.";
    return;
  }
  try {
    const reply = await exchange(cardRequest(variant, { "If-None-Match": etag }));
    status.textContent = reply.status === 304
      ? `304 Not Modified: the copy with ETag ${etag} is current.`
      : `HTTP ${reply.status}: the card changed (new ETag ${reply.headers.get("ETag") || "none"}).`;
  } catch (err) {
    status.textContent = `Revalidation failed: ${err.message}`;
  }
}

export function initCardView() {
  byId("card-variant").addEventListener("change", renderRaw);
  byId("card-revalidate").addEventListener("click", revalidate);
}
