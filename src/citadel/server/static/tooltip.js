// One shared tooltip: shows a citation's quote and where it comes from on hover or focus.
import { append, clear } from "./dom.js";

export class Tooltip {
  constructor(node) {
    this.node = node;
  }

  /** Show `content()` (nodes) next to `target` while it is hovered or focused. */
  attach(target, content) {
    const open = () => this.open(target, content());
    const close = () => this.close();
    target.addEventListener("mouseenter", open);
    target.addEventListener("focus", open);
    target.addEventListener("mouseleave", close);
    target.addEventListener("blur", close);
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
  }

  close() {
    this.node.hidden = true;
  }
}
