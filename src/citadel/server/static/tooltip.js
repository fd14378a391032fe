// One shared tooltip: shows a citation's quote and where it comes from on hover or focus.
// It closes when the pointer or focus leaves, and also on a click (the source opens beside
// the answer: the quote is there now, and the tooltip would cover the answer), on Escape, and
// when a scroll moves its link (the page's or a box's: it would no longer point at it).
import { append, clear } from "./dom.js";

export class Tooltip {
  constructor(node) {
    this.node = node;
    this.anchor = null; // the link shown for, and where it was then
    // Capture: a scroll inside a box (the source text) does not bubble to the document.
    document.addEventListener("scroll", () => this.onScroll(), { capture: true, passive: true });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.close();
    });
  }

  /** Show `content()` (nodes) next to `target` while it is hovered or focused. */
  attach(target, content) {
    const open = () => this.open(target, content());
    const close = () => this.close();
    target.addEventListener("mouseenter", open);
    target.addEventListener("focus", open);
    target.addEventListener("mouseleave", close);
    target.addEventListener("blur", close);
    target.addEventListener("click", close);
  }

  open(target, nodes) {
    append(clear(this.node), [nodes]);
    this.node.hidden = false;
    const box = target.getBoundingClientRect();
    const tip = this.node.getBoundingClientRect();
    const left = Math.min(Math.max(8, box.left + box.width / 2 - tip.width / 2),
                          window.innerWidth - tip.width - 8);
    const above = box.top - tip.height - 10;
    const top = above > 8 ? above : box.bottom + 10;
    this.node.style.left = `${left + window.scrollX}px`;
    this.node.style.top = `${top + window.scrollY}px`;
    this.anchor = { target, top: box.top, left: box.left };
  }

  /** Close if a scroll moved the link. Scroll events arrive a frame late: the one of a scroll
   * that brought the link under the pointer, before it opened, leaves it where it was. */
  onScroll() {
    if (this.node.hidden || !this.anchor) return;
    const box = this.anchor.target.getBoundingClientRect();
    if (box.top !== this.anchor.top || box.left !== this.anchor.left) this.close();
  }

  close() {
    this.node.hidden = true;
    this.anchor = null;
  }
}
