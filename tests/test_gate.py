"""The citation gate: the one place a Citation can be made, and what it refuses."""

import hashlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from citadel.answering.context import build_context
from citadel.gate import gate, strip_markers
from citadel.records import (
    Chunk,
    Context,
    ContextBlock,
    Draft,
    DraftCitation,
    DraftSentence,
    RankedChunk,
)
from citadel.text.quotes import normalize

SOURCE_TEXT = (
    "---\ntitle: Refunds\n---\n# Refunds\n\n## Eligibility\n\n"
    "Returns are accepted within 30 days of delivery.\n\nItems must be unworn."
)
CONTENT = "Returns are accepted within 30 days of delivery.\n\nItems must be unworn."


def make_chunk(**changes) -> Chunk:
    start = SOURCE_TEXT.index(CONTENT)
    fields = dict(
        chunk_id="refunds-policy#2", document_id="refunds-policy", source="refunds-policy.md",
        title="Refunds", section="Eligibility", content=CONTENT, start=start,
        end=start + len(CONTENT), content_sha256=hashlib.sha256(CONTENT.encode()).hexdigest(),
    )
    fields.update(changes)
    return Chunk(**fields)


def context_of(*chunks: Chunk):
    ranked = [RankedChunk(chunk=c, retrieval_score=1.0 - i / 10, rank=i + 1)
              for i, c in enumerate(chunks)]
    return build_context(ranked, 4)


def draft(*pairs: tuple[str, str], text: str = "Returns are accepted within 30 days.") -> Draft:
    cites = tuple(DraftCitation(label=label, quote=quote) for label, quote in pairs)
    return Draft(sentences=(DraftSentence(text=text, citations=cites),), generator="test",
                 prompt_version="t")


def test_gate_accepts_a_valid_citation_with_offsets_snapshot_and_hash():
    result = gate(draft(("S1", "returns are accepted within 30 DAYS")), context_of(make_chunk()),
                  "kb-123")
    (c,) = result.citations
    assert c.chunk_id == "refunds-policy#2" and c.source == "refunds-policy.md"
    assert SOURCE_TEXT[c.start : c.end] == "Returns are accepted within 30 days"
    assert c.snapshot_id == "kb-123"
    assert c.content_sha256 == make_chunk().content_sha256
    assert result.render() == "Returns are accepted within 30 days. [S1]"


def test_gate_drops_label_not_in_context():
    result = gate(draft(("S9", "Returns are accepted within 30 days")), context_of(make_chunk()),
                  "kb")
    assert result.citations == ()
    assert result.dropped[0].reason == "label_not_in_context"


def test_gate_drops_citation_whose_chunk_lost_its_source():
    result = gate(draft(("S1", "Returns are accepted within 30 days")),
                  context_of(make_chunk(source="")), "kb")
    assert result.citations == ()
    assert result.dropped[0].reason == "missing_source_metadata"


def test_gate_drops_quote_not_in_chunk():
    result = gate(draft(("S1", "Refunds are instant and unconditional")),
                  context_of(make_chunk()), "kb")
    assert result.dropped[0].reason == "quote_not_found"


def test_gate_drops_near_miss_quote_with_changed_number():
    result = gate(draft(("S1", "Returns are accepted within 14 days of delivery")),
                  context_of(make_chunk()), "kb")
    assert result.citations == ()
    assert result.dropped[0].reason == "quote_not_found"


def test_gate_drops_chunk_whose_content_no_longer_matches_its_hash():
    result = gate(draft(("S1", "Returns are accepted within 30 days")),
                  context_of(make_chunk(content_sha256="0" * 64)), "kb")
    assert result.dropped[0].reason == "content_hash_mismatch"


def test_gate_removes_invented_markers_and_uncited_sentences():
    d = Draft(
        sentences=(
            DraftSentence(text="Refunds take 90 days [Source: internal_spec_v3.pdf §4.2].",
                          citations=(DraftCitation(label="internal_spec_v3.pdf", quote="x y"),)),
            DraftSentence(text="Returns are accepted within 30 days [S1].",
                          citations=(DraftCitation(label="S1", quote="within 30 days of"),)),
        ),
        generator="test", prompt_version="t",
    )
    result = gate(d, context_of(make_chunk()), "kb")
    assert result.render() == "Returns are accepted within 30 days. [S1]"
    reasons = sorted(x.reason for x in result.dropped)
    assert reasons == ["label_not_in_context", "uncited_sentence"]


def test_strip_markers():
    assert strip_markers("A [S1] b [Source: x.pdf §4] c.") == "A b c."


def test_strip_markers_removes_stray_brackets_of_broken_markers():
    assert strip_markers("Refunds take 5 days [S1") == "Refunds take 5 days"
    assert strip_markers("a ] b [ c") == "a b"
    assert strip_markers("[") == ""


# --- property: whatever a generator says, every emitted citation satisfies the invariant ---

OTHER = "Refunds are issued within 5 business days. Gift cards are not refundable."
CHUNKS = [make_chunk(), make_chunk(chunk_id="refunds-policy#3", content=OTHER, start=0,
                                   end=len(OTHER), content_sha256=hashlib.sha256(
                                       OTHER.encode()).hexdigest())]
WORDS = (CONTENT + " " + OTHER).split() + ["14", "90", "days", "refunds-policy.md", "§4.2"]


def mutated_quote():
    source = st.sampled_from([CONTENT, OTHER])
    window = st.tuples(source, st.integers(0, 80), st.integers(1, 80)).map(
        lambda t: t[0][t[1] : t[1] + t[2]]
    )
    return st.one_of(
        window,
        window.map(str.upper),
        window.map(lambda q: re.sub(r"\d+", "14", q)),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
        st.text(max_size=40),
    )


labels = st.one_of(st.sampled_from(["S1", "S2", "S3", "S9", "s1", "S1 ", "", "refunds-policy#2",
                                    "[Source: internal_spec_v3.pdf §4.2]"]),
                   st.text(max_size=10))
sentences = st.builds(
    lambda text, cites: DraftSentence(text=text, citations=tuple(cites)),
    st.text(max_size=60),
    st.lists(st.builds(DraftCitation, label=labels, quote=mutated_quote()), max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(sentences, max_size=5))
def test_every_emitted_citation_satisfies_the_invariant(sents):
    context = context_of(*CHUNKS)
    by_label = {b.label: b.chunk for b in context.blocks}
    result = gate(Draft(sentences=tuple(sents), generator="fuzz", prompt_version="t"), context,
                  "kb-fuzz")
    texts = {"refunds-policy#2": SOURCE_TEXT, "refunds-policy#3": OTHER}
    for c in result.citations:
        chunk = by_label[c.label]  # 1. the label was in this request's context
        assert c.chunk_id == chunk.chunk_id
        assert (c.document_id, c.source, c.title, c.section) == (  # 2. real metadata
            chunk.document_id, chunk.source, chunk.title, chunk.section)
        assert texts[c.chunk_id][c.start : c.end] == c.quote  # 3. quote at its offsets
        assert normalize(c.quote) and normalize(c.quote) in normalize(chunk.content)
        assert c.snapshot_id == "kb-fuzz" and c.content_sha256 == chunk.content_sha256  # 4.
    for s in result.sentences:
        assert s.labels and set(s.labels) <= set(by_label)
        assert "[" not in s.text


def test_gate_names_the_pages_of_the_quote_not_of_the_whole_chunk():
    content = "End of page three. Start of page four. More on four."
    chunk = Chunk(chunk_id="spec#7", document_id="spec", source="spec.pdf", title="Spec",
                  section="4.2 Thresholds", content=content, start=1000,
                  end=1000 + len(content),
                  content_sha256=hashlib.sha256(content.encode()).hexdigest(),
                  page_start=3, page_end=4, page_breaks=(1000 + content.index("Start"),))
    context = Context(blocks=(ContextBlock(label="S1", ranked=RankedChunk(
        chunk=chunk, retrieval_score=1.0, rank=1)),))

    def pages(quote: str) -> tuple[int | None, int | None]:
        draft = Draft(generator="t", prompt_version="t", sentences=(DraftSentence(
            text=quote, citations=(DraftCitation(label="S1", quote=quote),)),))
        [citation] = gate(draft, context, "kb-x").citations
        return citation.page_start, citation.page_end

    assert pages("End of page three.") == (3, 3)
    assert pages("Start of page four.") == (4, 4)
    assert pages("More on four.") == (4, 4)
    assert pages("page three. Start of page") == (3, 4)


def test_a_chunk_cannot_claim_pages_it_does_not_span():
    fields = dict(chunk_id="spec#1", document_id="spec", source="spec.pdf", title="Spec",
                  section="Spec", content="abc", start=10, end=13, content_sha256="x")
    Chunk(**fields, page_start=2, page_end=3, page_breaks=(11,))
    for bad in ({"page_start": 2, "page_end": 5, "page_breaks": (11,)},
                {"page_start": 2, "page_end": 3, "page_breaks": (13,)},
                {"page_end": 3},
                {"page_start": 0, "page_end": 0}):
        with pytest.raises(ValidationError):
            Chunk(**fields, **bad)


def test_gate_verifies_the_answer_span_inside_a_kept_quote():
    from citadel.records import DraftSpan

    ctx = context_of(make_chunk())
    quote = "Returns are accepted within 30 days of delivery."
    d = draft(("S1", quote)).model_copy(update={"span": DraftSpan(label="S1", text="30 days",
                                                                  kind="DATE")})
    result = gate(d, ctx, "kb-1")
    assert result.span is not None and result.span.text == "30 days"
    assert SOURCE_TEXT[result.span.start:result.span.end] == "30 days"
    assert result.span.chunk_id == "refunds-policy#2"


def test_gate_widens_a_number_span_to_its_currency_sign_inside_the_quote():
    from citadel.records import DraftSpan

    content = "UK express delivery costs £9.95 and arrives the next business day."
    chunk = make_chunk(chunk_id="shipping#2", document_id="shipping", content=content, start=0,
                       end=len(content),
                       content_sha256=hashlib.sha256(content.encode()).hexdigest())
    d = draft(("S1", "UK express delivery costs £9.95"),
              text="UK express delivery costs £9.95.").model_copy(
        update={"span": DraftSpan(label="S1", text="9.95", kind="MONEY")})
    result = gate(d, context_of(chunk), "kb-1")
    assert result.span is not None and result.span.text == "£9.95"
    assert content[result.span.start:result.span.end] == "£9.95"


def test_gate_drops_a_span_not_in_the_quote_or_of_another_label():
    from citadel.records import DraftSpan

    ctx = context_of(make_chunk())
    quote = "Returns are accepted within 30 days of delivery."
    for span in (DraftSpan(label="S1", text="90 days"), DraftSpan(label="S2", text="30 days")):
        assert gate(draft(("S1", quote)).model_copy(update={"span": span}), ctx,
                    "kb-1").span is None
