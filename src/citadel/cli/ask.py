from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from citadel.records import Answer, Citation

_RESOLUTION = {"flagged": "the sources disagree",
               "authoritative": "answered from the most authoritative source"}


def pages(citation: Citation) -> str:
    """`p. 12`, `pp. 12–13`, or "" for a source without pages."""
    first, last = citation.page_start, citation.page_end
    if first is None:
        return ""
    return f"p. {first}" if last in (None, first) else f"pp. {first}–{last}"


def where(citation: Citation) -> str:
    """`spec.pdf › 4.2 Thresholds, p. 12`: the source, its section and the quote's pages."""
    place = f"{citation.source} › {citation.section}" if citation.section else citation.source
    return ", ".join(part for part in (place, pages(citation)) if part)


def render_answer(answer: Answer, why: bool = False) -> str:
    lines = [f"Answer: {answer.answer}"]
    if answer.standalone is not None and answer.standalone.rewritten:
        lines.insert(0, f"Answering: {answer.standalone.question}")
    if answer.conflict is not None:
        c = answer.conflict
        sides = " vs ".join(f"{v} [{cid}]" for v, cid in zip(c.values, c.chunk_ids, strict=True))
        lines.append(f"Conflict ({_RESOLUTION[c.resolution]}): {c.attribute}: {sides}")
    if answer.citations:
        lines.append("Sources:")
        for c in answer.citations:
            lines.append(f'  [{c.chunk_id}] "{c.quote}" ({where(c)})')
    if answer.span is not None:
        lines.append(f"Exact answer: {answer.span.text} [{answer.span.chunk_id}]")
    if answer.missing:
        lines.append(f"Missing: {answer.missing}")
    if answer.abstained or answer.missing:
        if answer.sources_consulted:
            lines.append("Sources consulted:")
            lines.extend(f"  [{s.chunk_id}] {s.title}" for s in answer.sources_consulted)
        elif answer.abstained:
            lines.append("Sources consulted: none matched the question")
    if answer.next_step:
        lines.append(f"Next step: {answer.next_step}")
    if answer.degraded:
        lines.append("(degraded: " + "; ".join(answer.trace.degraded_reasons) + ")")
    if why and answer.verdict is not None:
        lines.append(f"Why: {answer.verdict.explanation}")
    return "\n".join(lines)


@click.command()
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the whole Answer as JSON.")
@click.option("--top-k", type=click.IntRange(1, 100), default=None)
# The operator owns the knowledge base, so naming a tenant locally needs no key; without
# --tenant only public documents are searched.
@click.option("--tenant", default=None,
              help="Also this tenant's documents (default: public documents only).")
@click.option("--category", default=None, help="Only documents of this category.")
@click.option("--why", is_flag=True,
              help="Also say why: the stage that decided, its reason and its figures.")
def ask(question: str, as_json: bool, top_k: int | None, tenant: str | None,
        category: str | None, why: bool) -> None:
    """Answer QUESTION from the active knowledge base, with verified citations."""
    from citadel.config import Settings
    from citadel.engine import Engine

    engine = Engine.open(Settings.load())
    try:
        answer = engine.answer(question, top_k=top_k, tenant=tenant, category=category)
    finally:
        engine.close()
    click.echo(answer.model_dump_json(indent=2) if as_json else render_answer(answer, why))
