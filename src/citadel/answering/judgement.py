"""The judgement stage: which context sentences answer the question, with which words.

Run by the engine between `build_context` and generation; its `Judgement` rides on the
`Context` handed to every generator and is recorded in the trace. For each sentence of each
context chunk (analysed at ingest, `Chunk.analysis`) it measures:

* **focus agreement** — how much of the question's focus the sentence (and its chunk, and its
  title/section) states, by part of speech; which of the question's names, numbers and
  dates it lacks (a changed entity or year); whether negation differs; whether it states an
  antonym of a question word;
* **answer type** — whether it holds a span of the expected type that the question does not
  already contain, and how close that span sits to the matched focus words;
* **form** — a statement, not a question, heading or fragment;
* **retrieval** — the chunk's dense similarity (the same model on every backend) and its
  authority; lexical scores and the context order differ between backends (BM25, PostgreSQL
  `ts_rank`, Qdrant's fusion), so they are left out and every backend is judged alike.

* **the reader** — the learned evidence reader's logit (`citadel.answering.reader`: a
  cross-encoder trained in this repository on question–sentence pairs), for the statements
  worth reading: the `reader_sentences` best by a cheap lexical pre-score (the rest get
  `UNREAD`). The reader also marks the answer's words in the sentence (`answer`).

A logistic model combines them into the probability that the sentence answers. Its weights
are learned (`scripts/train_judgement.py`, cross-validated by article on SQuAD 2.0 and the
demo eval set, on the scores of a reader that never saw those articles) and shipped as
`judgement_weights.json`; inference here is plain Python. A sentence answers when it is a
statement and its probability reaches the threshold (`support_threshold`, default chosen on
the training data). Two more cut-offs are fitted with it: the *floor* below which a context
is certainly irrelevant (a model is not even asked), and the *check* a language model's
cited sentence must reach.

The reader is English. A question in another language is judged lexically
(`lexical_judgement`): the share of its words, less that language's stop words, that the
sentence states; `Judgement.path` records which judged.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citadel.answering.questions import ANY_ENTITY, analyse_question
from citadel.answering.reader import Reader, ReaderScore
from citadel.config import ConfigError, Settings
from citadel.records import (
    ChunkAnalysis,
    Context,
    ContextBlock,
    Judgement,
    QuestionAnalysis,
    SentenceAnalysis,
    SentenceJudgement,
    TypedSpan,
)
from citadel.text.analysis import Analyser
from citadel.text.language import detect_language, lexical_words
from citadel.text.quotes import normalize
from citadel.text.sentences import display_text
from citadel.text.structure import answers_nothing, groups, lines, read_with, said, said_group
from citadel.text.terms import content_terms, stem

WEIGHTS_FILE = "judgement_weights.json"
TRACE_SENTENCES = 6  # best sentences kept in the trace (every answering one is among them)

FEATURES = (
    "cover", "cover_proper", "cover_noun", "cover_verb", "cover_chunk", "missing_chunk",
    "entity_missing_sentence", "entity_missing_chunk", "number_conflict", "negation_mismatch",
    "antonym", "expects_type", "type_match", "type_missing", "type_near", "head_in_sentence",
    "noun_candidate", "statement", "dense", "cover_rel", "bigram",
    "length", "matched", "authority", "wh_who", "wh_when", "wh_where", "wh_number", "wh_what",
    "wh_why_how", "wh_other", "cover_rare", "missing_rare_sentence", "missing_rare_chunk",
    "reader",
)
READER_SENTENCES = 8  # statements read per request: ~3-4 ms each on 2 cores (benchmark)
UNREAD = -8.0  # the reader feature of a sentence the reader did not read (a low logit)
# A language model may cite any sentence, and its answer takes seconds: read up to this many.
MODEL_SENTENCES = 32

# Pairs of words whose swap turns a statement into its opposite (generic English).
_ANTONYM_PAIRS = """
    increase decrease rise fall gain lose win lose first last early late begin end start end
    before after major minor more less most least large small big small high low long short
    maximum minimum open close accept reject allow forbid allow prohibit legal illegal
    public private north south east west import export buy sell internal external positive
    negative strong weak old new ancient modern success failure victory defeat majority
    minority increase reduce expand shrink include exclude support oppose upper lower rich
    poor inner outer full empty true false western eastern northern southern same different
    higher lower largest smallest earliest latest oldest newest highest lowest
""".split()  # noqa: SIM905 - a word list reads best as text
ANTONYMS: dict[str, set[str]] = {}
for _a, _b in zip(_ANTONYM_PAIRS[::2], _ANTONYM_PAIRS[1::2], strict=True):
    ANTONYMS.setdefault(stem(_a), set()).add(stem(_b))
    ANTONYMS.setdefault(stem(_b), set()).add(stem(_a))

_FAR = 12  # content words: a span this far from every matched focus word is unrelated
SAME_STATEMENT = 0.6  # content-word Jaccard: two sentences that say the same thing


class WeightsError(ConfigError):
    """The judgement weights file is missing or malformed; the message says which."""


class Logistic(BaseModel):
    """A logistic model over standardised features: z = bias + Σ w·(x − mean)/scale."""

    model_config = ConfigDict(frozen=True)

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    def logit(self, values: Sequence[float]) -> float:
        z = self.bias
        for w, x, m, s in zip(self.weights, values, self.mean, self.scale, strict=True):
            z += w * (x - m) / s
        return z


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


class JudgementWeights(BaseModel):
    """Two logistic models. The *ranker* orders a context's sentences (trained on every
    sentence: does it contain the answer?); the *decider* gives the calibrated probability
    that a sentence is a right answer (trained on each question's best-ranked sentence, from
    its ranker score, its lead over the other sentences, its own features and the
    context's best values): the threshold applies to that probability."""

    model_config = ConfigDict(frozen=True, extra="allow")

    version: str
    features: tuple[str, ...]
    ranker: Logistic
    decider: Logistic
    threshold: float
    floor: float = Field(default=0.0, description="Below this everywhere, the context is "
                         "certainly irrelevant: no model is asked.")
    check: float = Field(default=0.0, description="Least probability of a sentence a "
                         "language model cites for it to count as answering.")


# The decider's inputs: the ranker's logit, its lead over the best other sentence, the
# sentence's features, and the best value of CONTEXT_FEATURES over the context.
CONTEXT_FEATURES = ("cover", "cover_rare", "cover_chunk", "missing_rare_chunk",
                    "entity_missing_chunk", "type_match", "dense", "reader")
_CONTEXT_INDEX = tuple(FEATURES.index(n) for n in CONTEXT_FEATURES)
DECIDER_INPUTS = 2 + len(FEATURES) + len(CONTEXT_FEATURES)


def statement_groups(terms: Sequence[Sequence[str]]) -> list[int]:
    """Per sentence, the index of the first sentence that makes the same statement (most
    content words shared): overlapping chunks repeat sentences, and a copied page repeats
    them with one value changed. A sentence's lead is over *other* statements only."""
    sets = [set(t) for t in terms]
    groups: list[int] = []
    for k, a in enumerate(sets):
        groups.append(next((j for j in range(k) if groups[j] == j and a | sets[j] and
                            len(a & sets[j]) / len(a | sets[j]) >= SAME_STATEMENT), k))
    return groups


def decider_inputs(values: Sequence[Sequence[float]], logits: Sequence[float],
                   groups: Sequence[int]) -> list[list[float]]:
    """Per sentence of one context: [logit, lead over the best other statement, *features,
    *context best]."""
    best = [max((v[i] for v in values), default=0.0) for i in _CONTEXT_INDEX]
    out = []
    for k, (v, z) in enumerate(zip(values, logits, strict=True)):
        other = max((o for j, o in enumerate(logits) if groups[j] != groups[k]),
                    default=z - 5.0)
        out.append([z, z - other, *v, *best])
    return out


def load_weights(path: Path | None = None) -> JudgementWeights:
    """The shipped weights, or those in `path` (e.g. one cross-validation fold's)."""
    try:
        if path is None:
            text = resources.files("citadel.answering").joinpath(WEIGHTS_FILE).read_text("utf-8")
        else:
            text = Path(path).read_text("utf-8")
        weights = JudgementWeights.model_validate(json.loads(text))
    except OSError as exc:
        raise WeightsError(f"cannot read judgement weights {path or WEIGHTS_FILE}: "
                           f"{exc.strerror or exc}") from None
    except (ValueError, ValidationError) as exc:
        raise WeightsError(f"judgement weights {path or WEIGHTS_FILE} are malformed: "
                           f"{str(exc).splitlines()[0]}") from None
    if (weights.features != FEATURES or len(weights.ranker.weights) != len(FEATURES)
            or len(weights.decider.weights) != DECIDER_INPUTS):
        raise WeightsError(f"judgement weights {path or WEIGHTS_FILE} were trained for other "
                           "features; retrain with scripts/train_judgement.py")
    return weights


@dataclass(frozen=True)
class Candidate:
    """One context sentence with its features (what training and judging share)."""

    block: ContextBlock
    sentence: SentenceAnalysis
    values: tuple[float, ...]
    span: TypedSpan | None
    candidates: tuple[str, ...]
    matched: tuple[str, ...]
    reasons: tuple[str, ...]
    terms: tuple[str, ...]  # the sentence's content words (stemmed lemmas)
    read: ReaderScore | None = None  # the reader's verdict, if it read the sentence
    unit: Unit | None = None  # how the sentence is read (its structure); None: as it is


@dataclass(frozen=True)
class _Chunk:
    analysis: ChunkAnalysis
    terms: frozenset[str]
    heading: frozenset[str]


def _stems(terms: Sequence[str]) -> list[str]:
    return [stem(t) for t in terms]


def span_text(content: str, span: TypedSpan) -> str:
    return content[span.start:span.end]


class Judge:
    """The judgement stage. Holds the analyser (for the question, and for chunks stored
    without an analysis) and the calibrated weights (loaded on first use); safe to share
    between threads."""

    def __init__(self, analyser: Analyser | None = None, weights: JudgementWeights | None = None,
                 threshold: float | None = None, weights_path: Path | None = None,
                 reader: Reader | None = None, reader_sentences: int = READER_SENTENCES
                 ) -> None:
        self.analyser = analyser or Analyser()
        self._weights = weights
        self._weights_path = weights_path
        self._threshold = threshold
        self.reader = reader or Reader()
        self.reader_sentences = reader_sentences
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, analyser: Analyser | None = None) -> Judge:
        return cls(analyser, threshold=settings.support_threshold,
                   weights_path=settings.judgement_weights,
                   reader=Reader(settings.reader_model, threads=settings.reader_threads),
                   reader_sentences=settings.reader_sentences)

    @property
    def weights(self) -> JudgementWeights:
        with self._lock:
            if self._weights is None:
                self._weights = load_weights(self._weights_path)
            return self._weights

    @property
    def threshold(self) -> float:
        return self.weights.threshold if self._threshold is None else self._threshold

    def judge(self, question: str, context: Context, read: int | None = None) -> Judgement:
        """`read`: how many statements the reader reads (default `reader_sentences`)."""
        language = detect_language(question)
        if language != "en":
            return lexical_judgement(question, language, context, self.analyser,
                                     self.analyse_question(question))
        q, candidates, analysed = self.candidates(question, context, read)
        judged = []
        weights, threshold = self.weights, self.threshold
        checked = claim_answers(question, q, context)
        logits = [weights.ranker.logit(c.values) for c in candidates]
        groups = statement_groups([c.terms for c in candidates])
        inputs = decider_inputs([c.values for c in candidates], logits, groups)
        for c, x in zip(candidates, inputs, strict=True):
            p = sigmoid(weights.decider.logit(x))
            text = c.block.chunk.content
            sentence = text[c.sentence.start:c.sentence.end]
            claim = (c.block.label, normalize(display_text(sentence))) in checked
            reasons = (*c.reasons, "states the value the question checks") if claim else c.reasons
            answer = reader_answer(c)
            judged.append(SentenceJudgement(
                label=c.block.label, chunk_id=c.block.chunk.chunk_id,
                document_id=c.block.chunk.document_id, start=c.sentence.start,
                end=c.sentence.end, text=display_text(text[c.sentence.start:c.sentence.end]),
                answers=((p >= threshold or claim) and can_answer(sentence)
                         and (c.unit is None or c.unit.may_answer)),
                score=round(p, 4),
                span=c.span, span_text=span_text(text, c.span) if c.span else None,
                answer=answer, answer_text=span_text(text, answer) if answer else None,
                reader=round(c.read.probability, 4) if c.read else None,
                candidates=c.candidates, matched=c.matched, reasons=reasons,
                said=c.unit.said if c.unit is not None else None))
        judged.sort(key=lambda s: -s.score)
        return Judgement(question=q, sentences=tuple(judged), threshold=threshold,
                         floor=weights.floor, check=weights.check,
                         model=weights.version, path=f"reader:{self.reader.version}",
                         analysed_at_request=analysed)

    def analyse_question(self, question: str) -> QuestionAnalysis:
        return analyse_question(self.analyser.parse(question))

    def candidates(
        self, question: str, context: Context, read: int | None = None
    ) -> tuple[QuestionAnalysis, list[Candidate], int]:
        """The question's analysis, every context sentence with its features, and how many
        chunks had to be analysed now (no stored analysis)."""
        q = self.analyse_question(question)
        missing = [b.chunk.content for b in context.blocks if b.chunk.analysis is None]
        fresh = iter(self.analyser.analyse_chunks(missing) if missing else [])
        chunks: list[_Chunk] = []
        for block in context.blocks:
            analysis = block.chunk.analysis or next(fresh)
            terms = frozenset(t for s in analysis.sentences for t in _stems(s.terms))
            heading = frozenset(content_terms(f"{block.chunk.title} {block.chunk.section}"))
            chunks.append(_Chunk(analysis, terms, heading))
        raw: list[tuple[ContextBlock, SentenceAnalysis, Features, Unit]] = []
        for block, chunk in zip(context.blocks, chunks, strict=True):
            for unit in units(block.chunk.content, chunk.analysis):
                x = sentence_features(q, block, chunk, unit.sentence, unit)
                raw.append((block, unit.sentence, x, unit))
        best_cover = max((x.values["cover"] for _, _, x, _ in raw), default=0.0)
        for _, _, x, _ in raw:
            x.values["cover_rel"] = x.values["cover"] - best_cover
        verdicts = self.read(question, raw, self.reader_sentences if read is None else read)
        out = []
        for k, (block, sentence, x, unit) in enumerate(raw):
            verdict = verdicts.get(k)
            x.values["reader"] = verdict.logit if verdict is not None else UNREAD
            out.append(Candidate(block, sentence, tuple(float(x.values[n]) for n in FEATURES),
                                 x.span, x.candidates, x.matched, tuple(x.reasons),
                                 tuple(_stems(sentence.terms)), verdict, unit))
        return q, out, len(missing)

    def read(self, question: str, raw: Sequence[tuple[ContextBlock, SentenceAnalysis,
                                                       Features, Unit]], limit: int
             ) -> dict[int, ReaderScore]:
        """The reader's verdicts on the statements worth reading: the `limit` best by a
        cheap lexical pre-score (what the question's rare words, its focus and the chunk's
        dense similarity say), each text once. A line is read with its lead (a list item with
        its introduction, a table row with its header, an FAQ answer with its question)."""
        worth = sorted((k for k, (b, s, _, u) in enumerate(raw)
                        if can_answer(b.chunk.content[s.start:s.end]) and u.may_answer),
                       key=lambda k: -prescore(raw[k][2]))[:limit]
        texts: dict[tuple[str, str], list[int]] = {}
        for k in worth:
            block, _, _, unit = raw[k]
            texts.setdefault((block.chunk.title, unit.read), []).append(k)
        if not texts:
            return {}
        scores = self.reader.score(question, list(texts))
        return {k: score for ks, score in zip(texts.values(), scores, strict=True) for k in ks}


def prescore(x: Features) -> float:
    """Which sentences the reader reads first: those stating the question's rare words and
    focus, in chunks close to it."""
    v = x.values
    return 2.0 * v["cover_rare"] + v["cover"] + 0.5 * v["cover_chunk"] + v["dense"]


def reader_answer(c: Candidate) -> TypedSpan | None:
    """The reader's answer span as offsets in the chunk, typed like the analyser's span it
    falls in (else ANSWER). A line read with its lead is answered in the source's own words:
    the span's words are found in the line, else there is no span."""
    if c.read is None or c.read.span is None:
        return None
    content = c.block.chunk.content
    read = c.unit.read if c.unit is not None else content[c.sentence.start:c.sentence.end]
    words = read[c.read.span[0]:c.read.span[1]].strip()
    at = content.find(words, c.sentence.start, c.sentence.end) if words else -1
    if at < 0:
        return None
    start, end = at, at + len(words)
    kind = next((sp.kind for sp in c.sentence.spans if sp.start <= start and end <= sp.end
                 and sp.kind != "NOUN"), "ANSWER")
    return TypedSpan(start=start, end=end, kind=kind, head=words.split()[-1].lower())


@dataclass(frozen=True)
class Unit:
    """What the judgement reads as one statement: a sentence of a line, or a whole
    introduced list; how the reader reads it and how an answer says it (`text.structure`)."""

    sentence: SentenceAnalysis
    role: str
    read: str
    said: str | None = None
    lead_terms: frozenset[str] = frozenset()

    @property
    def may_answer(self) -> bool:
        return not answers_nothing(self.role)


def units(content: str, analysis: ChunkAnalysis) -> list[Unit]:
    """Every sentence of a chunk as the judgement reads it, then each introduced list whole."""
    found = lines(content)
    out: list[Unit] = []
    for sentence in analysis.sentences:
        line = next((ln for ln in found if ln.start <= sentence.start < ln.end), None)
        text = content[sentence.start:sentence.end]
        if line is None or (line.lead is None and line.role == "text"):
            out.append(Unit(sentence, "text", display_text(text)))
            continue
        read = read_with(content, line, (sentence.start, sentence.end))
        whole = text.strip() == content[line.start:line.end].strip()
        said_text = said(content, line) if whole else None
        # An item or row alone says little ("- Visa"): its lead's words count as its own. An
        # FAQ answer or a line under a heading is only read with its lead: the question's
        # topic is not the fact the line states.
        lead_terms = _terms_in(analysis, line.lead) if line.role in ("item", "row") else (
            frozenset())
        out.append(Unit(sentence, line.role, read, said_text, lead_terms))
    for group in groups(found):
        parts = [s for s in analysis.sentences if group.start <= s.start < group.end]
        if not parts:
            continue
        merged = _merged(parts, group.start, group.end)
        spoken = said_group(content, group)
        out.append(Unit(merged, "list", spoken, spoken))
    return out


def _terms_in(analysis: ChunkAnalysis, span: tuple[int, int] | None) -> frozenset[str]:
    if span is None:
        return frozenset()
    return frozenset(stem(t) for s in analysis.sentences if span[0] <= s.start < span[1]
                     for t in s.terms)


def _merged(parts: Sequence[SentenceAnalysis], start: int, end: int) -> SentenceAnalysis:
    """One analysis for a list and its introduction: their words, spans and flags together."""
    return SentenceAnalysis(
        start=start, end=end,
        terms=tuple(t for s in parts for t in s.terms),
        offsets=tuple(o for s in parts for o in s.offsets),
        tags="".join(s.tags for s in parts),
        spans=tuple(sp for s in parts for sp in s.spans),
        negated=any(s.negated for s in parts),
        statement=True,
    )


@dataclass(frozen=True)
class Features:
    values: dict[str, float]
    span: TypedSpan | None
    candidates: tuple[str, ...]
    matched: tuple[str, ...]
    reasons: list[str]


def sentence_features(
    q: QuestionAnalysis, block: ContextBlock, chunk: _Chunk, s: SentenceAnalysis,
    unit: Unit | None = None,
) -> Features:
    content = block.chunk.content
    terms = _stems(s.terms)
    # A line read with its lead states what the lead says too ("We accept:" + "- Visa").
    present = set(terms) | (unit.lead_terms if unit is not None else frozenset())
    focus = set(q.focus)
    entities = set(q.entities)
    matched = focus & present
    reasons: list[str] = []
    f: dict[str, float] = dict.fromkeys(FEATURES, 0.0)

    def share(kinds: str) -> float:
        words = {t for t, tag in zip(q.focus, q.tags, strict=True) if tag in kinds}
        return len(words & present) / len(words) if words else 1.0

    n_focus = len(focus) or 1
    f["cover"] = len(matched) / n_focus
    in_chunk = focus & (chunk.terms | chunk.heading)
    f["cover_chunk"] = len(in_chunk) / n_focus
    f["missing_chunk"] = min(3, len(focus - chunk.terms - chunk.heading))
    f["cover_proper"] = (len(entities & present) / len(entities)) if entities else 1.0
    f["cover_noun"] = share("NA")
    f["cover_verb"] = share("V")
    lacking = entities - present
    f["entity_missing_sentence"] = min(3, len(lacking))
    f["entity_missing_chunk"] = min(3, len(entities - chunk.terms - chunk.heading))
    reasons.append(f"focus {len(matched)}/{len(focus)} matched")
    rare = dict(zip(q.focus, q.rarity, strict=True))
    total = sum(rare.values()) or 1.0
    f["cover_rare"] = sum(rare[t] for t in matched) / total
    f["missing_rare_sentence"] = max((rare[t] for t in focus - present), default=0.0)
    f["missing_rare_chunk"] = max((rare[t] for t in focus - chunk.terms - chunk.heading),
                                  default=0.0)
    if lacking:
        reasons.append("does not state " + ", ".join(sorted(lacking)))
    q_numbers = {e for e in entities if e[:1].isdigit()}
    s_numbers = {t for t, tag in zip(terms, s.tags, strict=False) if tag == "M"}
    if q_numbers - present and s_numbers - q_numbers:
        f["number_conflict"] = 1.0
        reasons.append("states other numbers: " + ", ".join(sorted(s_numbers - q_numbers)))
    if q.negated != s.negated:
        f["negation_mismatch"] = 1.0
        reasons.append("negation differs")
    flipped = [t for t in focus - present if ANTONYMS.get(t, set()) & present]
    if flipped:
        f["antonym"] = 1.0
        reasons.append("states the opposite of " + ", ".join(sorted(flipped)))
    span, distance = best_span(q, s, terms, content, matched)
    typed = [k for k in q.expected if k != "NOUN"]
    f["expects_type"] = 1.0 if typed else 0.0
    if span is not None and span.kind in typed:
        f["type_match"] = 1.0
        f["type_near"] = 1.0 / (1.0 + distance)
        reasons.append(f"answer type {span.kind}: {span_text(content, span)!r}")
    elif typed:
        f["type_missing"] = 1.0
        reasons.append(f"no {'/'.join(typed[:3])} to answer with")
    if span is not None and span.kind == "NOUN":
        f["noun_candidate"] = 1.0 / (1.0 + distance)
    if q.head and (q.head in present or any(sp.head == q.head for sp in s.spans)):
        f["head_in_sentence"] = 1.0
    # A table row or list item read with its lead is a statement, verb or not.
    structured = unit is not None and unit.role in ("row", "item", "list") and unit.said
    statement = s.statement or bool(structured)
    f["statement"] = 1.0 if statement else 0.0
    if not statement:
        reasons.append("not a statement")
    ranked = block.ranked
    f["dense"] = max(0.0, min(1.0, ranked.dense_score or 0.0))
    pairs = set(zip(q.focus, q.focus[1:], strict=False))
    if pairs:
        f["bigram"] = len(pairs & set(zip(terms, terms[1:], strict=False))) / len(pairs)
    f["length"] = math.log1p(len(terms))
    f["matched"] = math.log1p(len(matched))
    f["authority"] = block.chunk.authority
    f[_wh_feature(q.wh)] = 1.0
    kinds = [k for k in q.expected if k != "NOUN"] or list(ANY_ENTITY)
    asked = set(q.focus) | set(q.entities)
    values = tuple(dict.fromkeys(
        span_text(content, sp) for sp in s.spans if sp.kind in kinds
        and not set(content_terms(span_text(content, sp))) <= asked))
    return Features(f, span, values, tuple(sorted(matched)), reasons)


def _wh_feature(wh: str) -> str:
    return {"who": "wh_who", "when": "wh_when", "where": "wh_where", "how many": "wh_number",
            "how much": "wh_number", "how long": "wh_number", "what": "wh_what",
            "which": "wh_what", "why": "wh_why_how", "how": "wh_why_how"}.get(wh, "wh_other")


def best_span(
    q: QuestionAnalysis, s: SentenceAnalysis, terms: Sequence[str], content: str,
    matched: set[str],
) -> tuple[TypedSpan | None, int]:
    """The candidate answer of the sentence: a span of an expected kind whose words the
    question does not already contain, closest to the matched focus words (entities of the
    first expected kinds before noun phrases); and its distance in content words."""
    if not q.expected:
        return None, _FAR
    asked = set(q.focus) | set(q.entities) | ({q.head} if q.head else set())
    anchors = [i for i, t in enumerate(terms) if t in matched]
    best: tuple[float, TypedSpan, int] | None = None
    for sp in s.spans:
        if sp.kind not in q.expected:
            continue
        words = set(content_terms(content[sp.start:sp.end]))
        if words and words <= asked:
            continue  # the question's own words are not its answer
        inside = [i for i, o in enumerate(s.offsets) if sp.start <= o < sp.end]
        if anchors and inside:
            distance = min(abs(i - a) for i in inside for a in anchors)
        elif anchors:
            before = sum(1 for o in s.offsets if o < sp.start)
            distance = min(abs(before - a) for a in anchors)
        else:
            distance = _FAR
        distance = min(distance, _FAR)
        kind_rank = q.expected.index(sp.kind)
        score = (1.0 if sp.kind != "NOUN" else 0.4) - 0.05 * kind_rank + 1.0 / (1 + distance)
        if q.head and sp.head == q.head:
            score += 0.5
        if best is None or score > best[0]:
            best = (score, sp, distance)
    if best is None:
        return None, _FAR
    return best[1], best[2]


def claim_answers(question: str, q: QuestionAnalysis, context: Context
                  ) -> set[tuple[str, str]]:
    """(label, normalised sentence) of the sentences that answer a yes/no question stating a
    value ("Is the return window 14 days?"): those the fact check finds stating a value of
    that kind about what the question asks (`conflicts.candidates`: relevant, tied to the
    question's words, in scope). The answer to such a question is the value the documents
    give, whatever the model's score for a question it was hardly trained on."""
    if q.wh != "yes/no" or not q.expected:
        return set()
    from citadel.answering.conflicts import candidates

    return {(c.block.label, normalize(c.fact.sentence)) for c in candidates(question, context)}


def can_answer(sentence: str) -> bool:
    """A question or a heading never answers, whatever its score (a verbless statement such
    as "UK express delivery: £9.95" may: the model weighs the missing verb)."""
    text = sentence.strip()
    return bool(text) and not text.endswith("?") and not text.startswith("#")


def for_trace(judgement: Judgement) -> Judgement:
    """The judgement as the trace keeps it: its best sentences only (every answering one)."""
    keep = max(TRACE_SENTENCES, len(judgement.answering))
    return judgement.model_copy(update={"sentences": judgement.sentences[:keep]})


LEXICAL_ANSWER = 0.6  # share of the question's words a sentence must state (other languages)
_PREFIX = 5  # a shared 5-letter prefix counts as the same word (Satz / Satzes)


def _word_key(word: str) -> str:
    """Inflections share a prefix; a compound name ("Gauß-Bonnet") must match whole."""
    return word if "-" in word else word[:_PREFIX]


def language_rarity(word: str, language: str) -> float:
    """How rare a word is in that language, 0 .. 1 (wordfreq's Zipf scale): a sentence must
    state the question's rare words ("Gauß-Bonnet") more than its common ones ("besagt")."""
    from wordfreq import zipf_frequency

    return max(0.05, min(1.0, (8.0 - zipf_frequency(word, language)) / 8.0))


def lexical_judgement(question: str, language: str, context: Context, analyser: Analyser,
                      q: QuestionAnalysis) -> Judgement:
    """A question the reader cannot read (not English): a sentence answers when it states
    at least LEXICAL_ANSWER of the question's words (weighted by rarity in that language),
    that language's stop words left out.
    The question's English analysis rides along for the trace only."""
    from citadel.text.sentences import sentence_spans

    focus = lexical_words(question, language)
    weight = {w: language_rarity(w, language) for w in focus}
    total = sum(weight.values()) or 1.0
    judged = []
    for block in context.blocks:
        content = block.chunk.content
        spans = ([(s.start, s.end) for s in block.chunk.analysis.sentences]
                 if block.chunk.analysis is not None else sentence_spans(content))
        for start, end in spans:
            text = content[start:end]
            present = {_word_key(w) for w in lexical_words(text, language)}
            matched = tuple(w for w in focus if _word_key(w) in present)
            share = sum(weight[w] for w in matched) / total
            judged.append(SentenceJudgement(
                label=block.label, chunk_id=block.chunk.chunk_id,
                document_id=block.chunk.document_id, start=start, end=end,
                text=display_text(text), answers=share >= LEXICAL_ANSWER and can_answer(text),
                score=round(share, 4), matched=matched,
                reasons=(f"{language}: {len(matched)}/{len(focus)} question words stated",)))
    judged.sort(key=lambda s: -s.score)
    return Judgement(question=q, sentences=tuple(judged), threshold=LEXICAL_ANSWER,
                     floor=0.0, check=LEXICAL_ANSWER, model="lexical",
                     path=f"lexical:{language}")
