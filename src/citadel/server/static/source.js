// The source panel: a document's stored text with a span highlighted. A paged document (PDF)
// shows the cited page (with the quote highlighted and the page number), and the reader can
// turn pages. Offsets from the server count Unicode code points (Python), so the text is
// sliced by code points here, not by JavaScript's UTF-16 units. Only the body is shown: what
// precedes `body_start` (a Markdown file's front matter) is counted by offsets, never shown.
import { clear, h, show } from "./dom.js";

/** A web page's source is its URL: a link that opens the page itself, scrolled to the quote
 * (a text fragment, `#:~:text=`, where the browser supports one). A file's is its path. */
export function sourceLink(source, quote) {
  if (!/^https?:\/\//i.test(source)) return source;
  // A text fragment's text is percent-encoded, "-" too (it separates prefix and suffix).
  const fragment = quote ? `#:~:text=${encodeURIComponent(quote).replace(/-/g, "%2D")}` : "";
  return h("a", { class: "source-url", href: source.split("#")[0] + fragment,
    target: "_blank", rel: "noopener noreferrer" }, source);
}

export class SourcePanel {
  /** @param headers () => the request headers of a lookup (the knowledge-base API key's) */
  constructor(root, { headers = () => ({}) } = {}) {
    this.root = root;
    this.headers = headers;
    this.documents = new Map(); // document id -> Promise of the document (one page session)
    this.part = (id) => root.querySelector(`#${id}`);
    this.part("source-close").addEventListener("click", () => this.close());
    this.part("page-prev").addEventListener("click", () => this.turn(-1));
    this.part("page-next").addEventListener("click", () => this.turn(+1));
    this.view = null;
  }

  // Lookups send no tenant: the server takes it only from an API key, the knowledge-base
  // key entered on the page if any (the customer mode's key is the agent's, not a KB key).
  async document(documentId) {
    if (!this.documents.has(documentId)) {
      this.documents.set(documentId, fetchJson(
        `/v1/documents/${encodeURIComponent(documentId)}`, this.headers()));
    }
    try {
      return await this.documents.get(documentId);
    } catch (error) {
      this.documents.delete(documentId);
      throw error;
    }
  }

  /** Open a citation's document with its quote highlighted (and its chunk shaded). */
  async showCitation(citation, number) {
    this.loading(citation.title);
    try {
      const doc = await this.document(citation.document_id);
      const chunk = doc.chunks.find((c) => c.chunk_id === citation.chunk_id);
      const quoteSpan = { start: citation.start, end: citation.end };
      this.show({ doc, chunk, quoteSpan, quote: citation.quote, what: `Citation ${number}`,
                  pages: pageRange(doc, quoteSpan, citation.page_start, citation.page_end) });
    } catch (error) {
      this.showError(error);
    }
  }

  /** Open a span of a document, as a citation link names it (`#doc=…&chunk=…&start=…&end=…`:
   * the links the MCP and chat-completions doors give each citation). */
  async showSpan({ documentId, chunkId, start, end }) {
    this.loading(documentId);
    try {
      const doc = await this.document(documentId);
      const length = [...doc.text].length; // offsets count code points
      if (end > length) throw new Error(`the link points past the end of ${documentId}`);
      if (start < (doc.body_start ?? 0)) {
        throw new Error(`the link points before the text of ${documentId}`);
      }
      const chunk = doc.chunks.find((c) => c.chunk_id === chunkId)
        || doc.chunks.find((c) => c.start <= start && end <= c.end);
      const quoteSpan = { start, end };
      const quote = [...doc.text].slice(start, end).join("");
      this.show({ doc, chunk, quoteSpan, quote, what: "Linked citation",
                  pages: pageRange(doc, quoteSpan) });
    } catch (error) {
      this.showError(error);
    }
  }

  /** Open a chunk (e.g. a source consulted for an abstention) with the chunk highlighted. */
  async showChunk(chunkId) {
    this.loading(chunkId);
    try {
      const chunk = await fetchJson(`/v1/chunks/${encodeURIComponent(chunkId)}?window=0`,
        this.headers());
      const doc = await this.document(chunk.document_id);
      const span = doc.chunks.find((c) => c.chunk_id === chunkId);
      this.show({ doc, chunk: span, quoteSpan: null, quote: null, what: `Chunk ${chunkId}`,
                  pages: pageRange(doc, span) });
    } catch (error) {
      this.showError(error);
    }
  }

  /** Forget the documents fetched so far (another key may see other documents). */
  forget() {
    this.documents.clear();
  }

  /** An abstention's sources consulted, each opening its chunk: what was read, in vain. */
  showConsulted(sources) {
    if (!sources.length) return;
    const list = clear(this.part("consulted-list"));
    for (const s of sources) {
      list.append(h("li", {}, h("button", {
        type: "button", class: "consulted-open", dataset: { chunk: s.chunk_id },
        onclick: () => this.showChunk(s.chunk_id),
      }, h("span", { class: "consulted-title" },
        s.section && s.section !== s.title ? `${s.title} › ${s.section}` : s.title),
      h("span", { class: "consulted-id" }, s.chunk_id))));
    }
    this.consulted = true;
    this.showBlock("consulted");
  }

  /** Show one of the panel's blocks, "empty", "consulted" or "doc", and hide the others. */
  showBlock(name) {
    for (const block of ["empty", "consulted", "doc"]) {
      show(this.root.querySelector(`.source-${block}`), block === name);
    }
    this.root.dataset.state = name;
  }

  loading(title) {
    this.showBlock("doc");
    this.root.dataset.state = "loading";
    this.part("source-title").textContent = title;
    this.part("source-path").textContent = "Loading…";
    clear(this.part("source-check"));
    clear(this.part("source-text"));
    show(this.part("source-pages"), false);
  }

  /** Render a view: the whole text, or for a paged document the pages in `view.pages`. */
  show(view) {
    this.view = view;
    const { doc, pages } = view;
    const shown = pages
      ? { start: doc.pages[pages.first - 1].start, end: doc.pages[pages.last - 1].end }
      : null;
    this.render(doc, view.chunk, view.quoteSpan, view.quote, view.what, shown);
    const nav = show(this.part("source-pages"), Boolean(pages));
    if (pages) {
      const { first, last } = pages;
      this.part("page-label").textContent = (first === last ? `Page ${first}`
        : `Pages ${first}–${last}`) + ` of ${doc.pages.length}`;
      nav.dataset.page = String(first);
      this.part("page-prev").disabled = first <= 1;
      this.part("page-next").disabled = last >= doc.pages.length;
    }
  }

  /** Show the page before or after the one shown (the highlight stays where it is). */
  turn(step) {
    if (!this.view?.pages) return;
    const count = this.view.doc.pages.length;
    const page = Math.min(count, Math.max(1, (step < 0 ? this.view.pages.first
      : this.view.pages.last) + step));
    this.show({ ...this.view, pages: { first: page, last: page } });
  }

  render(doc, chunk, quoteSpan, quote, what, shown = null) {
    const chars = Array.from(doc.text);
    const slice = (a, b) => chars.slice(a, b).join("");
    const chunkSpan = chunk ? { start: chunk.start, end: chunk.end } : null;
    const text = clear(this.part("source-text"));
    // Three nested ranges at most: [chunk [quote] chunk]; each boundary cut once, and only
    // inside the shown stretch (a page range, or the whole text).
    const lo = shown ? shown.start : doc.body_start ?? 0;
    const hi = shown ? shown.end : chars.length;
    const cuts = [lo, hi];
    for (const span of [chunkSpan, quoteSpan]) {
      if (span) cuts.push(...[span.start, span.end].filter((x) => x > lo && x < hi));
    }
    const points = [...new Set(cuts)].sort((a, b) => a - b);
    let chunkNode = null;
    for (let i = 0; i + 1 < points.length; i++) {
      const [a, b] = [points[i], points[i + 1]];
      const inChunk = chunkSpan && a >= chunkSpan.start && b <= chunkSpan.end;
      const inQuote = quoteSpan && a >= quoteSpan.start && b <= quoteSpan.end;
      const piece = inQuote ? h("mark", { class: "hl", id: "highlight" }, slice(a, b))
        : document.createTextNode(slice(a, b));
      if (inChunk) {
        if (!chunkNode) {
          chunkNode = h("span", { class: "chunk-range", "data-chunk": chunk.chunk_id });
          text.append(chunkNode);
        }
        chunkNode.append(piece);
      } else {
        text.append(piece);
      }
    }
    this.part("source-title").textContent = doc.title;
    clear(this.part("source-path")).append(sourceLink(doc.source, quote),
      ` · ${doc.format} · snapshot ${doc.snapshot_id}`);
    const check = clear(this.part("source-check"));
    if (quoteSpan) {
      const ok = slice(quoteSpan.start, quoteSpan.end) === quote;
      const onPages = doc.pages.length ? `, ${pagesText(pageRange(doc, quoteSpan))}` : "";
      check.append(h("span", { class: ok ? "check ok" : "check bad" },
        ok ? `✓ ${what}: the quote is at characters ${quoteSpan.start}–${quoteSpan.end}`
             + onPages
           : `✗ ${what}: the text at ${quoteSpan.start}–${quoteSpan.end} differs from the quote`));
    } else {
      check.append(h("span", { class: "check" }, `${what}` + (chunk
        ? ` · characters ${chunk.start}–${chunk.end}` : "")));
    }
    this.root.dataset.state = "shown";
    this.reveal(text.querySelector("mark.hl") || chunkNode);
  }

  /** Bring the panel's top into view below the sticky header (its scroll-margin-top), then
   * centre `target` inside the text box only: scrolling the page to centre it would slide
   * the source's title under the header. */
  reveal(target) {
    const header = document.querySelector(".topbar").getBoundingClientRect().bottom;
    const top = this.root.getBoundingClientRect().top;
    if (top < header || top > window.innerHeight * 0.6) {
      this.root.scrollIntoView({ block: "start", behavior: "instant" });
    }
    const box = this.part("source-text");
    box.scrollTop = target
      ? target.offsetTop - Math.max(0, (box.clientHeight - target.offsetHeight) / 2) : 0;
    // Still below the fold (a phone, the panel under the form): bring the panel up.
    if (target && target.getBoundingClientRect().bottom > window.innerHeight) {
      this.root.scrollIntoView({ block: "start", behavior: "instant" });
    }
  }

  showError(error) {
    this.root.dataset.state = "error";
    this.part("source-path").textContent = "";
    clear(this.part("source-text")).append(h("p", { class: "error-box" }, error.message));
  }

  /** Close the document shown: back to the sources consulted, if an abstention gave some. */
  close() {
    this.view = null;
    this.showBlock(this.consulted ? "consulted" : "empty");
  }

  /** Empty the panel (a new question: nothing shown belongs to it). */
  reset() {
    this.consulted = false;
    clear(this.part("consulted-list"));
    this.close();
  }
}

/** The pages a span lies on ({first, last}, 1-based), or null for a document without pages.
 * The citation's own page numbers are used when given; they are the same by construction. */
export function pageRange(doc, span, first = null, last = null) {
  if (!doc.pages?.length || !span) return null;
  const at = (offset) => {
    const page = doc.pages.findLast((p) => p.start <= offset && p.start < p.end);
    return page ? page.number : 1;
  };
  return { first: first ?? at(span.start), last: last ?? at(Math.max(span.start, span.end - 1)) };
}

/** "p. 12", "pp. 12–13" or "" (no pages). */
export function pagesText(range) {
  if (!range) return "";
  return range.first === range.last ? `p. ${range.first}` : `pp. ${range.first}–${range.last}`;
}

export async function fetchJson(url, headers = {}) {
  const response = await fetch(url, { headers: { ...headers, Accept: "application/json" } });
  const payload = await response.json().catch(() => null);
  if (!response.ok) {
    throw new Error(payload?.error?.message || `HTTP ${response.status}`);
  }
  return payload;
}
