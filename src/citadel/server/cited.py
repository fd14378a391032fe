"""Answers as the doors hand them out (MCP, the chat-completions endpoint): the gate's record,
each citation with a link to the page that opens its source with the quote highlighted.

Nothing here decides what is cited: a `LinkedCitation` is a copy of a `Citation` the gate
built for the request, plus its link; the doors only change the envelope. The engine's
receipt signs the answer without links, so a door signs its own copy, links included
(`citadel-receipt-2`): a changed link fails verification like a changed quote.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, create_model

from citadel.knowledge.receipts import Signer
from citadel.knowledge.verify import Receipt, source_fragment
from citadel.records import (
    Answer,
    AnswerSpan,
    Citation,
    Conflict,
    SignedReceipt,
    SourceRef,
    Standalone,
    Verdict,
)

DEFAULT_PAGE_URL = "http://127.0.0.1:8000"


def source_link(page_url: str, citation: Citation | Receipt) -> str:
    """The page at `page_url`, opening the cited document with the quote highlighted.

    The target rides in the fragment, so it never reaches a server log; the page reads it
    (`static/app.js`) and fetches the document with the reader's own key, if any."""
    return f"{page_url.rstrip('/')}/#{source_fragment(citation)}"


class _Link(BaseModel):
    url: str = Field(description="The web page, opening the source with the quote "
                                 "highlighted.")

    @classmethod
    def of(cls, citation: Citation, page_url: str) -> LinkedCitation:
        return cls(**citation.model_dump(), url=source_link(page_url, citation))


# A gate-verified citation's fields (kept in step with `Citation` by construction) plus its
# link. Not a `Citation`: only the gate builds those; this is its copy for a door.
LinkedCitation = create_model(
    "LinkedCitation", __base__=_Link,
    __doc__="A gate-verified citation (`Citation`) and the link that shows it in its source.",
    **{name: (field.annotation, field) for name, field in Citation.model_fields.items()},
)


class CitedAnswer(BaseModel):
    """A gated answer for a door: its text (with `[Sn]` markers), every citation with its
    link, and what a reader needs to trust it or not."""

    answer: str = Field(description="The answer text; `[Sn]` markers name its citations.")
    abstained: bool = Field(description="No evidence answers the question: the text says so.")
    grounded: bool
    conflict: Conflict | None = Field(default=None, description="Sources that disagree, "
                                      "and how the answer resolved it (or that it did not).")
    citations: list[LinkedCitation] = Field(default_factory=list)
    span: AnswerSpan | None = Field(default=None,
                                    description="The answer's exact words in its citation.")
    sources_consulted: list[SourceRef] = Field(
        default_factory=list, description="What was read (the evidence an abstention saw).")
    next_step: str | None = None
    degraded: bool = False
    verdict: Verdict | None = Field(default=None, description="Why the answer is what it is: "
                                    "outcome, deciding stage, reason, scores and thresholds.")
    standalone: Standalone | None = Field(default=None, description="In a conversation, the "
                                          "question answered: the follow-up made to stand "
                                          "alone.")
    request_id: str
    snapshot_id: str
    receipt: SignedReceipt | None = Field(default=None, description="The server's signature "
                                          "over this answer (check it with `verify`).")

    @classmethod
    def of(cls, answer: Answer, page_url: str, signer: Signer | None) -> CitedAnswer:
        """The door's copy of a gated answer, signed by `signer` when the engine signed the
        answer (None: signing is off, and the copy is unsigned too)."""
        cited = cls(
            answer=answer.answer, abstained=answer.abstained, grounded=answer.grounded,
            conflict=answer.conflict,
            citations=[LinkedCitation.of(c, page_url) for c in answer.citations],
            span=answer.span, sources_consulted=list(answer.sources_consulted),
            next_step=answer.next_step, degraded=answer.degraded, verdict=answer.verdict,
            standalone=answer.standalone, request_id=answer.trace.request_id,
            snapshot_id=answer.trace.snapshot_id,
        )
        if answer.receipt is None or signer is None:
            return cited
        shown = cited.model_dump(mode="json", exclude={"receipt"})
        return cited.model_copy(update={"receipt": signer.receipt(shown, answer.trace)})

    def readable(self) -> str:
        """The answer as a model or a person reads it: the text with its markers, then a
        numbered source list with each quote and its link."""
        lines = [self.answer]
        if self.standalone is not None and self.standalone.rewritten:
            lines = [f"Answering: {self.standalone.question}", "", self.answer]
        if self.conflict is not None:
            lines += ["", f"Note: the sources disagree ({self.conflict.attribute}). "
                          f"{self.conflict.explanation}".rstrip()]
        if self.citations:
            lines += ["", "Sources:"]
            for c in self.citations:
                where = f"{c.title}" + (f", {c.section}" if c.section else "")
                if c.page_start is not None:
                    where += f", p. {c.page_start}"
                lines.append(f"[{c.label}] {where} ({c.source}): \"{c.quote}\" <{c.url}>")
        elif self.abstained and self.sources_consulted:
            lines += ["", "Sources consulted (none of them answers):"]
            lines += [f"- {s.title} ({s.source})" for s in self.sources_consulted]
        return "\n".join(lines)
