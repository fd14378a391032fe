// The answer card: renders a stream of events (meta, citation, delta, done, error).
// Citation markers `[Sn]` in the text become numbered links; the server sends each citation
// event before any text that carries its marker, so a marker always has its citation here.
import { clear, h, normalize, show } from "./dom.js";
import { pagesText } from "./source.js";

const MARKER = /\s*\[(S\d+)\]/g;

export class AnswerView {
  /**
   * @param root the <article> of the answer
   * @param tooltip a Tooltip
   * @param openCitation (citation, number) => void: show a citation in its source
   * @param openChunk (chunkId) => void: show a consulted chunk in its source
   * @param showConsulted (sources) => void: list an abstention's sources consulted
   */
  constructor(root, { tooltip, openCitation, openChunk, showConsulted }) {
    this.root = root;
    this.tooltip = tooltip;
    this.openCitation = openCitation;
    this.openChunk = openChunk;
    this.showConsulted = showConsulted;
    this.part = (id) => root.querySelector(`#${id}`);
  }

  reset() {
    this.text = "";
    this.citations = [];
    this.meta = null;
    this.answer = null;
    show(this.root);
    this.setState("streaming");
    for (const id of ["answering", "conflict", "abstention", "error"]) {
      show(clear(this.part(id)), false);
    }
    for (const id of ["citations", "trace"]) show(this.part(id), false);
    clear(this.part("citation-list"));
    clear(this.part("trace-list"));
    clear(this.part("answer-text"));
    this.part("verdict").textContent = "Answering…";
    this.part("verdict").className = "badge v-pending";
    this.part("answer-meta").textContent = "";
    this.renderText();
  }

  setState(state) {
    this.root.dataset.state = state;
    this.streaming = state === "streaming";
  }

  handle(type, data) {
    if (type === "meta") this.onMeta(data);
    else if (type === "citation") this.onCitation(data.citation);
    else if (type === "delta") this.onDelta(data.text);
    else if (type === "done") this.onDone(data.answer);
    else if (type === "error") this.fail(data.message || "The answer failed.");
  }

  onMeta(meta) {
    this.meta = meta;
    this.part("answer-meta").textContent = `snapshot ${meta.snapshot_id} · ${meta.backend}`;
    this.renderAnswering(meta.standalone);
  }

  /** A follow-up made to stand alone: the question really answered. */
  renderAnswering(standalone) {
    const rewritten = standalone && standalone.question !== standalone.original;
    const line = show(clear(this.part("answering")), Boolean(rewritten));
    if (rewritten) line.append(h("span", { class: "muted" }, "Answering: "), standalone.question);
  }

  onCitation(citation) {
    this.citations.push(citation);
    this.renderCitationList();
  }

  onDelta(text) {
    this.text += text;
    this.renderText();
  }

  onDone(answer) {
    this.answer = answer;
    this.streaming = false;
    // The final answer is authoritative; a conflict's box states what its text says around
    // the cited sentences.
    const split = answer.conflict ? splitConflict(answer.answer, answer.conflict) : null;
    this.text = split ? split.body : answer.answer;
    this.renderText();
    this.renderCitationList(); // now with the answer span marked in its quote
    this.renderVerdict(answer);
    this.renderAnswering(answer.standalone);
    this.renderConflict(answer.conflict, answer, split?.heading);
    if (answer.abstained) {
      this.renderAbstention(answer);
      this.showConsulted?.(answer.sources_consulted);
    }
    this.renderTrace(answer.trace);
    this.setState("done");
  }

  /** Show a finished answer at once (customer mode: not streamed); without one, `note` says
   * why there is no policy part, and with no note either the card stays hidden. */
  replay(answer, note) {
    if (!answer) {
      this.streaming = false;
      show(this.root, Boolean(note));
      this.part("verdict").textContent = "Unavailable";
      this.part("verdict").className = "badge v-abstained";
      this.text = note || "";
      this.renderText();
      this.setState("done");
      return;
    }
    this.onMeta({ snapshot_id: answer.trace.snapshot_id, backend: answer.trace.backend });
    for (const citation of answer.citations) this.onCitation(citation);
    this.onDone(answer);
  }

  fail(message) {
    const box = this.part("error");
    show(clear(box)).append(h("strong", {}, "Something went wrong. "), message);
    this.part("verdict").textContent = "Error";
    this.part("verdict").className = "badge v-error";
    this.setState("error");
    this.renderText();
  }

  stopped() {
    if (this.root.dataset.state !== "streaming") return;
    this.part("verdict").textContent = "Stopped";
    this.part("verdict").className = "badge v-muted";
    this.setState("stopped");
    this.renderText();
  }

  // --- rendering ------------------------------------------------------------------------

  /** Which citation a marker refers to: the one of that label quoted in the text before it. */
  citationFor(label, precedingText) {
    const candidates = this.citations.filter((c) => c.label === label);
    const before = normalize(precedingText);
    return candidates.find((c) => before.includes(normalize(c.quote))) || candidates[0];
  }

  renderText() {
    const node = clear(this.part("answer-text"));
    let last = 0;
    let segmentStart = 0;
    for (const m of this.text.matchAll(MARKER)) {
      node.append(this.text.slice(last, m.index));
      const citation = this.citationFor(m[1], this.text.slice(segmentStart, m.index));
      if (citation) node.append(this.citationLink(citation));
      last = m.index + m[0].length;
      segmentStart = last;
    }
    node.append(this.text.slice(last));
    if (this.streaming) node.append(h("span", { class: "caret" }));
  }

  number(citation) {
    return this.citations.indexOf(citation) + 1;
  }

  citationLink(citation) {
    const n = this.number(citation);
    const link = h("a", {
      class: "cite", href: "#", "data-n": n, "data-chunk": citation.chunk_id,
      "aria-label": `Citation ${n}: ${citation.title}`,
      onclick: (event) => { event.preventDefault(); this.openCitation(citation, n); },
    }, String(n));
    this.tooltip.attach(link, () => [
      h("div", { class: "tip-quote" }, `“${citation.quote}”`),
      h("div", { class: "tip-source" }, sourceLine(citation)),
    ]);
    return link;
  }

  /** The quote, with the answer's exact words (`answer.span`) marked when they lie in it. */
  quoteParts(c) {
    const span = this.answer && this.answer.span;
    if (!span || span.chunk_id !== c.chunk_id || span.start < c.start || span.end > c.end) {
      return [c.quote];
    }
    const a = span.start - c.start;
    const b = span.end - c.start;
    return [c.quote.slice(0, a), h("mark", { class: "answer-span" }, c.quote.slice(a, b)),
      c.quote.slice(b)];
  }

  renderCitationList() {
    const list = clear(this.part("citation-list"));
    show(this.part("citations"), this.citations.length > 0);
    this.citations.forEach((c, i) => {
      list.append(h("li", { class: "citation", "data-n": i + 1 },
        h("button", {
          type: "button", class: "citation-open",
          onclick: () => this.openCitation(c, i + 1),
        },
        h("span", { class: "citation-n" }, String(i + 1)),
        h("span", { class: "citation-body" },
          h("span", { class: "citation-title" }, sourceLine(c)),
          h("q", { class: "citation-quote" }, ...this.quoteParts(c)),
          h("span", { class: "citation-receipt" },
            `${c.source} · chars ${c.start}–${c.end}${pages(c) ? ` · ${pages(c)}` : ""} · `
            + `${c.snapshot_id} · `
            + `sha256 ${c.content_sha256.slice(0, 10)}…`)))));
    });
  }

  renderVerdict(answer) {
    const badge = this.part("verdict");
    if (answer.conflict) {
      badge.textContent = "Sources disagree";
      badge.className = "badge v-conflict";
    } else if (answer.abstained) {
      badge.textContent = answer.degraded ? "Unavailable" : "Not found";
      badge.className = "badge v-abstained";
    } else {
      badge.textContent = `Grounded · ${answer.citations.length} citation`
        + (answer.citations.length === 1 ? "" : "s");
      badge.className = "badge v-grounded";
    }
    if (answer.degraded && !answer.abstained) {
      this.part("answer-meta").append(" · degraded");
    }
  }

  /** The disagreement, stated once: the answer text keeps only its cited sentences
   * (`splitConflict`); `heading` is the text's opening sentence, if it had one. */
  renderConflict(conflict, answer, heading = null) {
    if (!conflict) return;
    const box = show(clear(this.part("conflict")));
    const authoritative = conflict.resolution === "authoritative";
    box.append(h("h3", {}, heading || (authoritative
      ? "The sources disagree — the answer follows the most authoritative one"
      : "The sources disagree")));
    box.append(h("p", {}, h("strong", {}, `${conflict.attribute}: `),
      conflict.values.join(" vs ")));
    if (conflict.sides?.length) {
      box.append(h("ul", { class: "conflict-sides" }, conflict.sides.map((side) => h("li", {},
        h("strong", {}, side.value), " — ", side.title,
        side.effective_date ? h("span", { class: "muted" }, ` (effective ${side.effective_date})`)
          : null,
        " ", this.chunkLink(side.chunk_id,
          side.chunk_id === conflict.preferred_chunk_id ? " (preferred)" : "")))));
    } else {
      box.append(h("p", { class: "small" }, "In: ", conflict.chunk_ids.map((id, i) => [
        i ? ", " : "", this.chunkLink(id, id === conflict.preferred_chunk_id ? " (preferred)" : ""),
      ])));
    }
    if (conflict.explanation) box.append(h("p", {}, conflict.explanation));
    if (!answer.abstained && answer.next_step) {
      box.append(h("p", { class: "small" }, h("strong", {}, "Next step: "), answer.next_step));
    }
    this.appendWhy(box, answer.verdict);
  }

  /** A short "Why?" under an abstention or a conflict: the verdict in words, its reason code
   * on hover (the full verdict is in the trace). */
  appendWhy(box, verdict) {
    if (!verdict?.explanation) return;
    box.append(h("details", { class: "why" },
      h("summary", {}, "Why?"),
      h("p", { class: "small", title: verdict.reason }, verdict.explanation)));
  }

  renderAbstention(answer) {
    const box = show(clear(this.part("abstention")));
    if (answer.missing) {
      box.append(h("div", { class: "abstain-row" },
        h("span", { class: "abstain-label" }, "Missing"),
        h("span", {}, answer.missing)));
    }
    if (answer.sources_consulted.length) {
      box.append(h("div", { class: "abstain-row" },
        h("span", { class: "abstain-label" }, "Sources consulted"),
        h("ul", { class: "consulted" }, answer.sources_consulted.map((s) => h("li", {},
          this.chunkLink(s.chunk_id, ""), " ",
          h("span", { class: "muted" }, `${s.title}${s.section ? ` › ${s.section}` : ""}`))))));
    }
    if (answer.next_step) {
      box.append(h("div", { class: "abstain-row" },
        h("span", { class: "abstain-label" }, "Next step"),
        h("span", {}, answer.next_step)));
    }
    this.appendWhy(box, answer.verdict);
  }

  chunkLink(chunkId, suffix) {
    return h("a", {
      href: "#", class: "chunk-link",
      onclick: (event) => { event.preventDefault(); this.openChunk(chunkId); },
    }, chunkId + suffix);
  }

  renderTrace(trace) {
    const list = clear(this.part("trace-list"));
    const rows = [
      ["request id", trace.request_id],
      ["snapshot", trace.snapshot_id],
      ["backend", `${trace.backend} · ${trace.strategy}`],
      ["generator", `${trace.generator} (${trace.prompt_version})`],
      ["retrieved", trace.retrieved.join(", ") || "—"],
      ["citations", `${trace.citations_emitted} emitted, ${trace.citations_dropped.length} dropped`],
      ["latency", Object.entries(trace.latencies_ms).map(([k, v]) => `${k} ${v} ms`).join(" · ")],
    ];
    for (const [key, value] of rows) list.append(h("dt", {}, key), h("dd", {}, value));
    show(this.part("trace"));
  }
}

/** A conflict answer's text (citadel.answering.decision.composing) states the disagreement
 * around its cited sentences: "The sources disagree on …." before them and the explanation
 * after ("flagged"), or "Note: … says …; this answer follows …" after ("authoritative"). The
 * conflict box states all of that, so the text keeps its cited sentences alone, and its
 * opening sentence becomes the box's heading. A text of another shape is kept whole. */
export function splitConflict(text, conflict) {
  let body = text;
  const last = [...body.matchAll(MARKER)].pop();
  if (last) {
    const end = last.index + last[0].length;
    const after = body.slice(end).trim();
    if (after.startsWith("Note:") || (after && after === conflict.explanation?.trim())) {
      body = body.slice(0, end);
    }
  }
  // The first side's sentence starts with its title in quotes: “Title” (authority …) says: …
  const first = conflict.sides?.[0];
  const at = first && body.startsWith("The sources disagree")
    ? body.indexOf(`“${first.title}”`) : -1;
  if (at <= 0) return { heading: null, body };
  return { heading: body.slice(0, at).trim().replace(/\.$/, ""), body: body.slice(at) };
}

export function sourceLine(c) {
  const place = c.section && c.section !== c.title ? `${c.title} › ${c.section}` : c.title;
  return pages(c) ? `${place}, ${pages(c)}` : place;
}

/** A citation's pages ("p. 12", "pp. 12–13"), "" for a source without pages. */
function pages(c) {
  return c.page_start ? pagesText({ first: c.page_start, last: c.page_end ?? c.page_start }) : "";
}
