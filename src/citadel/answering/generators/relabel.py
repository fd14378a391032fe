"""A small model's label slip: the right quote under the wrong label.

Qwen2.5-1.5B copies a sentence exactly and then names the block by its position ("S3" for
the third block shown) rather than by its label: 6 of the 13 citations of its v2 answers to
the demo questions were such quotes, every one verbatim in another block of the same request.
The quote is the evidence; the label is the model's pointer to it. So before the gate, a
citation whose quote is not in the block its label names, but is in exactly one other block
of this request's context, is pointed at that block (and counted, `Draft.relabelled`). A
quote found in no block, or in several, or a label that was never handed out (S9, a file
name) is left as written, and the gate drops it. Nothing
outside this request's context can be reached, and the gate still verifies every citation.
"""

from __future__ import annotations

from citadel.records import Context, Draft, DraftCitation, DraftSentence
from citadel.text.quotes import locate_quote, normalize


def relabel_citation(citation: DraftCitation, context: Context) -> DraftCitation:
    block = context.get(citation.label.strip())
    # A label never handed out (S9, a file name) is not a slip: the gate drops it.
    if block is None or not normalize(citation.quote) or locate_quote(
            citation.quote, block.chunk.content):
        return citation
    found = [b.label for b in context.blocks if locate_quote(citation.quote, b.chunk.content)]
    return citation.model_copy(update={"label": found[0]}) if len(found) == 1 else citation


def relabel_sentence(sentence: DraftSentence, context: Context) -> tuple[DraftSentence, int]:
    cites = tuple(relabel_citation(c, context) for c in sentence.citations)
    changed = sum(a.label != b.label for a, b in zip(sentence.citations, cites, strict=True))
    return (sentence.model_copy(update={"citations": cites}) if changed else sentence), changed


def relabel_draft(draft: Draft, context: Context) -> Draft:
    sentences, changed = [], 0
    for sentence in draft.sentences:
        s, n = relabel_sentence(sentence, context)
        sentences.append(s)
        changed += n
    unattached = tuple(relabel_citation(c, context) for c in draft.unattached)
    changed += sum(a.label != b.label for a, b in zip(draft.unattached, unattached, strict=True))
    if not changed:
        return draft
    return draft.model_copy(update={"sentences": tuple(sentences), "unattached": unattached,
                                    "relabelled": draft.relabelled + changed})
