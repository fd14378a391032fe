"""The answer to a question the context disagrees on.

Built from the `Conflict` (never from a generator's prose), as a `Draft` whose every
sentence quotes one side, so that the citation gate verifies each side's quote against its
own chunk like any other citation. Sides are never merged into one claim.

* `flagged`: "The sources disagree on <what was asked>." then one cited sentence per side
  ("“Title” (authority 1.0, effective 2026-03-01) says: <quote> [S1]"), then which source
  has the higher authority and which is newer. `missing` and `next_step` say what would
  settle it.
* `authoritative`: the lead side's sentence as the answer, cited, then a note naming the
  lower-authority source(s) that disagree, their values, and the source followed (the note
  cites nothing and asserts nothing: it reports the disagreement in `Answer.conflict`).

Titles, values and the question are written here around the gate, so each goes through
`text.neutralize` (in `conflicts.named`, `fallbacks` and below): a title such as
`[S1] Forum [Source: legal-handbook.pdf §4.2]` can never put a citation chip on itself.

If the gate does not keep what the answer needs (every side for `flagged`, the lead for
`authoritative`), `compose` returns None and the engine answers the ordinary way.
"""

from __future__ import annotations

from dataclasses import dataclass

from citadel.answering.conflicts import authority_text, named
from citadel.answering.fallbacks import conflict_missing, conflict_next_step, describe_question
from citadel.gate import GateResult, gate
from citadel.records import Conflict, ConflictSide, Context, Draft, DraftCitation, DraftSentence
from citadel.text.neutralize import neutralize

GENERATOR = "conflict"
PROMPT_VERSION = "conflict-v1"


@dataclass(frozen=True)
class ConflictAnswer:
    text: str
    result: GateResult
    draft: Draft
    missing: str | None
    next_step: str | None


def _attribution(side: ConflictSide) -> str:
    date = f", effective {side.effective_date.isoformat()}" if side.effective_date else ""
    return f"{named(side.title)} (authority {authority_text(side.authority)}{date})"


def conflict_draft(conflict: Conflict) -> Draft:
    """One sentence per side to present, each citing only its own chunk with its quote."""
    if conflict.resolution == "authoritative":
        lead = _lead(conflict)
        sentences = (DraftSentence(text=lead.quote, citations=(
            DraftCitation(label=lead.label, quote=lead.quote),)),)
    else:
        sentences = tuple(
            DraftSentence(text=f"{_attribution(s)} says: {s.quote}",
                          citations=(DraftCitation(label=s.label, quote=s.quote),))
            for s in conflict.sides
        )
    return Draft(sentences=sentences, generator=GENERATOR, prompt_version=PROMPT_VERSION)


def _lead(conflict: Conflict) -> ConflictSide:
    return next((s for s in conflict.sides if s.chunk_id == conflict.preferred_chunk_id),
                conflict.sides[0])


def compose(
    question: str, conflict: Conflict, context: Context, snapshot_id: str
) -> ConflictAnswer | None:
    draft = conflict_draft(conflict)
    result = gate(draft, context, snapshot_id)
    if len(result.sentences) < len(draft.sentences):
        return None
    asked = describe_question(question) or neutralize(conflict.attribute)
    if conflict.resolution == "authoritative":
        lead = _lead(conflict)
        rivals = [s for s in conflict.sides if s.value != lead.value
                  and s.document_id != lead.document_id]
        note = "; ".join(f"{_attribution(s)} says {neutralize(s.value)}" for s in rivals)
        text = (f"{result.render()} Note: {note}; this answer follows {_attribution(lead)}, "
                "the more authoritative source.")
        return ConflictAnswer(text=text, result=result, draft=draft, missing=None,
                              next_step=None)
    text = f"The sources disagree on {asked}. {result.render()} {conflict.explanation}"
    titles = list(dict.fromkeys(s.title for s in conflict.sides))
    return ConflictAnswer(text=text, result=result, draft=draft,
                          missing=conflict_missing(asked), next_step=conflict_next_step(titles))
