// Customer mode: ask the support agent as the customer whose API key is given, and show the
// order system's facts (authoritative, each with the tool call that produced it) in their own
// card, apart from the cited policy answer (which the answer card renders as usual).
import { clear, h, show } from "./dom.js";

const REFUND_INTENTS = new Set(["refund_eligibility", "request_refund"]);

/** POST the question with the key as a bearer token; rejects with the server's message. */
export async function askAgent(url, apiKey, body, signal) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json",
      Authorization: `Bearer ${apiKey}`,
    },
    body: JSON.stringify(body),
    signal,
  });
  const payload = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(payload?.error?.message || `HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return payload;
}

/** Why there is no policy answer, or null when none was asked for. */
export function policyNote(response) {
  const reasons = response.degraded_reasons.filter((r) => r.startsWith("knowledge base:"));
  if (!reasons.length) return null;
  return "Our policy documents can't be consulted right now, so no policy is quoted "
    + `(${reasons.map((r) => r.replace(/^knowledge base:\s*/, "")).join("; ")}).`;
}

export class BusinessView {
  constructor(root) {
    this.root = root;
    this.part = (id) => root.querySelector(`#${id}`);
  }

  reset() {
    show(this.root, false);
    this.root.dataset.state = "idle";
    clear(this.part("business-facts"));
    show(clear(this.part("business-note")), false);
    this.part("business-meta").textContent = "";
  }

  render(response) {
    show(this.root);
    this.part("business-meta").textContent =
      `${response.customer_id} · intent ${response.intent} · ${response.decider}`;
    const note = this.part("business-note");
    if (!response.business_available) {
      show(note).className = "business-note warn";
      note.textContent = "The order system is unavailable right now: nothing is said about "
        + "your orders, and eligibility is never guessed from policy text.";
    } else if (!response.business.length) {
      show(note).className = "business-note";
      note.textContent = "No order lookups: this question is about policy only.";
    } else if (REFUND_INTENTS.has(response.intent)
               && response.business.some((r) => r.call.name === "list_orders")) {
      show(note).className = "business-note";
      note.textContent = "Which order do you mean? Ask again with its number.";
    }
    const list = this.part("business-facts");
    for (const result of response.business) list.append(this.fact(result));
    this.root.dataset.state = "done";
  }

  fact(result) {
    const args = Object.entries(result.call.arguments)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
    return h("li", { class: "fact", dataset: { tool: result.call.name, outcome: result.outcome } },
      h("p", { class: "fact-summary" }, result.summary),
      fields(result.data),
      h("div", { class: "fact-call" },
        h("code", {}, `${result.call.name}(${args})`), " → ",
        h("span", { class: `outcome o-${result.outcome}` }, result.outcome),
        h("span", { class: "muted" }, ` · ${result.source}`
          + (result.authoritative ? " · authoritative" : ""))));
  }
}

/** The scalar fields of the record a tool returned (eligibility, refund or order). */
function fields(data) {
  const record = data.eligibility || data.refund || data.order;
  if (!record) return null;
  const rows = [];
  for (const [key, value] of Object.entries(record)) {
    if (value === null || typeof value === "object") continue;
    let shown = value;
    let label = key.replaceAll("_", " ");
    if (typeof value === "boolean") shown = value ? "yes" : "no";
    else if (key.endsWith("_minor")) {
      label = label.replace(/ minor$/, "");
      shown = money(value, record.currency);
    } else if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value)) {
      shown = value.slice(0, 10);
    }
    if (key === "currency") continue;
    rows.push(h("dt", {}, label), h("dd", { dataset: { field: key } }, String(shown)));
  }
  return h("dl", { class: "fact-data" }, rows);
}

function money(minor, currency) {
  try {
    return new Intl.NumberFormat("en-GB", { style: "currency", currency }).format(minor / 100);
  } catch (_) {
    return `${(minor / 100).toFixed(2)} ${currency}`;
  }
}
