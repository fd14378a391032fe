// The page: wires the form, the mode switcher, the answer card and the source panel.
import { AnswerView } from "./answer.js";
import { BusinessView, askAgent, policyNote } from "./customer.js";
import { clear, h, show } from "./dom.js";
import { askMode, customerMode } from "./modes.js";
import { SourcePanel } from "./source.js";
import { postEventStream } from "./sse.js";
import { Tooltip } from "./tooltip.js";

const MODES = [askMode, customerMode];

class Page {
  constructor() {
    this.$ = (id) => document.getElementById(id);
    this.tooltip = new Tooltip(this.$("tooltip"));
    this.source = new SourcePanel(this.$("source"));
    this.business = new BusinessView(this.$("business"));
    this.answer = new AnswerView(this.$("answer"), {
      tooltip: this.tooltip,
      openCitation: (c, n) => this.source.showCitation(c, n),
      openChunk: (id) => this.source.showChunk(id),
    });
    this.controller = null;
    this.setMode(MODES[0]);
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
    this.$("stop").addEventListener("click", () => this.controller?.abort());
    this.checkReady();
  }

  setMode(mode) {
    this.mode = mode;
    this.$("question").placeholder = mode.placeholder;
    const examples = clear(this.$("examples"));
    if (mode.examples?.length) examples.append(h("span", { class: "muted" }, "Try:"));
    for (const q of mode.examples || []) {
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
    if (mode !== this.shown) {
      // A reply belongs to the mode that asked for it.
      this.shown = mode;
      this.controller?.abort();
      this.business.reset();
      show(this.$("answer"), false);
    }
  }

  renderModes() {
    const nav = clear(this.$("modes"));
    show(nav, MODES.length > 1);
    for (const mode of MODES) {
      nav.append(h("button", {
        type: "button", class: "tab", dataset: { mode: mode.id },
        onclick: () => this.setMode(mode),
      }, mode.label));
    }
    this.setMode(this.mode);
  }

  async ask(question) {
    question = question.trim();
    if (!question) return;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.busy(true);
    this.answer.reset();
    this.business.reset();
    show(this.$("policy-label"), false); // only over a customer-mode reply's policy part
    try {
      if (this.mode.agentUrl) {
        await this.askAgent(question, controller.signal);
      } else {
        await postEventStream(this.mode.streamUrl, this.mode.body(question), {
          signal: controller.signal,
          onEvent: (type, data) => this.answer.handle(type, data),
        });
      }
      if (this.$("answer").dataset.state === "streaming") {
        this.answer.fail("The stream ended before the answer was complete.");
      }
    } catch (error) {
      if (error.name === "AbortError") {
        this.answer.stopped();
      } else {
        this.answer.fail(error.message);
        this.business.root.dataset.state = "error";
      }
    } finally {
      if (this.controller === controller) {
        this.controller = null;
        this.busy(false);
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

  async checkReady() {
    const status = this.$("status");
    const text = status.querySelector(".status-text");
    try {
      const state = await fetch("/readyz").then((r) => r.json());
      status.dataset.ready = state.ready ? "yes" : "no";
      text.textContent = state.ready
        ? `${state.snapshot_id} · ${state.backend}`
        : `not ready: ${state.reason}`;
      status.title = state.reason || `serving snapshot ${state.snapshot_id}`;
    } catch (error) {
      status.dataset.ready = "no";
      text.textContent = "server unreachable";
    }
  }
}

window.citadel = new Page();
