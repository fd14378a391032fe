// The page: wires the form, the mode switcher, the answer card and the source panel.
import { AnswerView } from "./answer.js";
import { BusinessView, askAgent, policyNote } from "./customer.js";
import { clear, h, show } from "./dom.js";
import { askMode, customerMode } from "./modes.js";
import { SourcePanel, fetchJson } from "./source.js";
import { postEventStream } from "./sse.js";
import { Tooltip } from "./tooltip.js";

/** A mode's API key, kept for this browser tab only (sessionStorage: never in the URL, gone
 * when the tab closes). Storage can be unavailable (privacy settings): then nothing is kept. */
const keyStore = {
  name: (mode) => `citadel.apiKey.${mode.id}`,
  get(mode) {
    try { return sessionStorage.getItem(this.name(mode)) || ""; } catch (_) { return ""; }
  },
  set(mode, key) {
    try {
      if (key) sessionStorage.setItem(this.name(mode), key);
      else sessionStorage.removeItem(this.name(mode));
    } catch (_) { /* not kept */ }
  },
};

// Earlier questions a follow-up is asked with (the server's limit).
const MAX_TURNS = 8;

/** The request headers that present `key` (none without one). */
function authorization(key) {
  return key ? { Authorization: `Bearer ${key}` } : {};
}

class Page {
  constructor() {
    this.$ = (id) => document.getElementById(id);
    this.tooltip = new Tooltip(this.$("tooltip"));
    // Source lookups present the knowledge-base key (the customer mode's key is the agent's).
    this.source = new SourcePanel(this.$("source"), {
      headers: () => authorization(keyStore.get(askMode)),
    });
    this.business = new BusinessView(this.$("business"));
    this.answer = new AnswerView(this.$("answer"), {
      tooltip: this.tooltip,
      openCitation: (c, n) => this.source.showCitation(c, n),
      openChunk: (id) => this.source.showChunk(id),
      showConsulted: (sources) => this.source.showConsulted(sources),
    });
    this.controller = null;
    // This tab's thread: the questions asked so far, in memory only (never stored), sent with
    // a follow-up so that "And for the EU?" is answered as the question it asks.
    this.thread = [];
    // What the server offers (`GET /v1/about`): until it answers, no examples and no
    // Customer support tab, which is shown only when the server has a business database.
    this.about = { examples: {}, customer_support: false };
    this.modes = [askMode];
    this.setMode(askMode);
    this.renderModes();
    this.$("ask-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.ask(this.$("question").value);
    });
    this.$("question").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        this.ask(this.$("question").value);
      }
    });
    this.$("follow-up").addEventListener("submit", (event) => {
      event.preventDefault();
      this.followUp();
    });
    this.$("follow-up-question").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        this.followUp();
      }
    });
    this.$("new-thread").addEventListener("click", () => this.newThread());
    this.$("stop").addEventListener("click", () => this.controller?.abort());
    this.$("api-key").addEventListener("input", () => {
      keyStore.set(this.mode, this.$("api-key").value.trim());
      if (this.mode === askMode) this.source.forget(); // another key may see other documents
    });
    this.checkReady();
    this.aboutLoaded = this.loadAbout();
    trackHeaderHeight(document.querySelector(".topbar"));
    window.addEventListener("hashchange", () => this.openLink());
    this.openLink();
  }

  /** A citation link (`/#doc=…&chunk=…&start=…&end=…`, from MCP or the chat API) opens its
   * document with the quote highlighted. The target is in the fragment: no server sees it.
   * It opens once the tabs and examples are in place: they would push the quote down. */
  async openLink() {
    const link = new URLSearchParams(window.location.hash.slice(1));
    const number = (name) => (/^\d+$/.test(link.get(name) || "") ? Number(link.get(name)) : null);
    const [start, end] = [number("start"), number("end")];
    if (!link.get("doc") || start === null || end === null || end <= start) return;
    await this.aboutLoaded;
    this.source.showSpan({ documentId: link.get("doc"), chunkId: link.get("chunk"), start, end });
  }

  setMode(mode) {
    this.mode = mode;
    this.$("question").placeholder = mode.placeholder;
    const examples = clear(this.$("examples"));
    const questions = this.about.examples[mode.examples] || [];
    if (questions.length) examples.append(h("span", { class: "muted" }, "Try:"));
    for (const q of questions) {
      examples.append(h("button", {
        type: "button", class: "chip",
        onclick: () => { this.$("question").value = q; this.ask(q); },
      }, q));
    }
    for (const tab of this.$("modes").children) {
      tab.classList.toggle("active", tab.dataset.mode === mode.id);
    }
    for (const node of document.querySelectorAll("[data-mode-only]")) {
      show(node, node.dataset.modeOnly === mode.id);
    }
    const key = this.$("api-key");
    key.value = keyStore.get(mode);
    key.placeholder = mode.apiKey.placeholder;
    key.required = mode.apiKey.required;
    this.$("api-key-label").textContent = mode.apiKey.required ? "API key" : "API key (optional)";
    if (mode !== this.shown) {
      // A reply belongs to the mode that asked for it, and so does the source it opened.
      this.shown = mode;
      this.controller?.abort();
      this.business.reset();
      show(this.$("answer"), false);
      this.source.reset();
      this.thread = [];
      this.renderThread();
    }
  }

  /** Ask the follow-up box's question with this thread's questions. */
  followUp() {
    const box = this.$("follow-up-question");
    const question = box.value;
    box.value = "";
    this.ask(question, { followUp: true });
  }

  /** "New question": forget the thread and start again from the question box. */
  newThread() {
    this.controller?.abort();
    this.thread = [];
    this.renderThread();
    show(this.$("answer"), false);
    this.source.reset();
    this.$("question").value = "";
    this.$("question").focus();
  }

  /** The thread's questions above the answer (from the second on), and the follow-up box
   * under it once there is an answer to follow up. */
  renderThread() {
    const list = clear(this.$("thread"));
    show(list, this.thread.length > 1);
    this.thread.forEach((turn, i) => list.append(h("li", {
      class: i === this.thread.length - 1 ? "current" : null }, turn.question)));
    show(this.$("follow-up"), Boolean(this.mode.threads && this.thread.length
      && !this.controller));
  }

  renderModes() {
    const nav = clear(this.$("modes"));
    show(nav, this.modes.length > 1);
    for (const mode of this.modes) {
      nav.append(h("button", {
        type: "button", class: "tab", dataset: { mode: mode.id },
        onclick: () => this.setMode(mode),
      }, mode.label));
    }
    this.setMode(this.mode);
  }

  async ask(question, { followUp = false } = {}) {
    question = question.trim();
    if (!question) return;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    if (!followUp) this.thread = []; // the question box starts a new thread
    const history = this.thread.slice(-MAX_TURNS);
    this.busy(true);
    this.answer.reset();
    this.business.reset();
    this.source.reset(); // the previous answer's source is no source of this one
    show(this.$("policy-label"), false); // only over a customer-mode reply's policy part
    try {
      if (this.mode.agentUrl) {
        await this.askAgent(question, controller.signal);
      } else {
        await postEventStream(this.mode.streamUrl, this.mode.body(question, history), {
          signal: controller.signal,
          headers: authorization(this.$("api-key").value.trim()),
          onEvent: (type, data) => this.answer.handle(type, data),
        });
      }
      if (this.$("answer").dataset.state === "streaming") {
        this.answer.fail("The stream ended before the answer was complete.");
      }
      if (this.mode.threads && this.$("answer").dataset.state === "done") {
        this.thread.push({ question }); // only questions: an answer is never sent back
      }
    } catch (error) {
      if (error.name === "AbortError") {
        this.answer.stopped();
      } else {
        this.answer.fail(error.message);
        this.business.root.dataset.state = "error";
        if (error.status === 401) this.$("api-key").focus();
      }
    } finally {
      if (this.controller === controller) {
        this.controller = null;
        this.busy(false);
        this.renderThread();
      }
    }
  }

  /** Customer mode: order facts in their own card, then the cited policy answer. */
  async askAgent(question, signal) {
    const key = this.$("api-key").value.trim();
    if (!key) {
      this.$("api-key").focus();
      throw new Error("Enter a customer API key first (`citadel demo-data` prints the demo "
        + "customers' keys).");
    }
    const response = await askAgent(this.mode.agentUrl, key, this.mode.body(question), signal);
    this.business.render(response);
    show(this.$("policy-label"));
    this.answer.replay(response.answer, policyNote(response));
  }

  busy(on) {
    this.$("ask").disabled = on;
    show(this.$("stop"), on);
    this.$("ask").textContent = on ? "Answering…" : "Ask";
  }

  /** The served knowledge base's example questions and whether customer support is on. */
  async loadAbout() {
    try {
      this.about = await fetchJson("/v1/about");
    } catch (_) {
      return; // no examples and no customer tab: the status line says what is wrong
    }
    this.modes = this.about.customer_support ? [askMode, customerMode] : [askMode];
    this.renderModes();
  }

  async checkReady() {
    const status = this.$("status");
    const text = status.querySelector(".status-text");
    try {
      // With the tab's key the count includes that tenant's documents (public ones only without).
      const headers = authorization(keyStore.get(askMode));
      const state = await fetch("/readyz", { headers }).then((r) => r.json());
      status.dataset.ready = state.ready ? "yes" : "no";
      text.textContent = state.ready ? knowledgeBaseLine(state) : `not ready: ${state.reason}`;
      status.title = [state.reason, state.snapshot_id && `snapshot ${state.snapshot_id}`
        + (state.backend ? ` · ${state.backend} backend` : "")].filter(Boolean).join("\n");
    } catch (error) {
      status.dataset.ready = "no";
      text.textContent = "server unreachable";
    }
  }
}

/** Keep `--header-h` (style.css) at the sticky top bar's height: the source panel sits below
 * it, and a citation scrolls the panel's title there, not under it. */
function trackHeaderHeight(bar) {
  const set = () => document.documentElement.style.setProperty(
    "--header-h", `${Math.ceil(bar.getBoundingClientRect().height)}px`);
  set();
  new ResizeObserver(set).observe(bar);
}

/** "25 documents · updated 6 Dec 2026, 10:40" (the snapshot id is in the line's title). */
export function knowledgeBaseLine(state) {
  const parts = [];
  if (state.documents != null) {
    parts.push(`${state.documents} document${state.documents === 1 ? "" : "s"}`);
  }
  const updated = state.updated_at ? new Date(state.updated_at) : null;
  if (updated && !Number.isNaN(updated.getTime())) {
    parts.push(`updated ${new Intl.DateTimeFormat(undefined,
      { dateStyle: "medium", timeStyle: "short" }).format(updated)}`);
  }
  return parts.join(" · ") || "knowledge base ready";
}

window.citadel = new Page();
