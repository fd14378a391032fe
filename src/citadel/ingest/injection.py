"""Planted instructions: document text that tries to instruct the assistant instead of
informing the reader.

A chunk is flagged at ingestion (`suspicious=True` with a reason) when its text matches one
of the rules below, or when it overlaps text that an HTML page hides from its readers
(`display:none`, `visibility:hidden`, the `hidden` attribute, `aria-hidden="true"`, a zero
font size: see `loaders.extract_html`). Text a reader never sees has no business in an
answer, and hidden text is the classic carrier of instructions aimed at a model.

At query time `context.build_context` keeps flagged chunks out of the context entirely (and
records each in the trace): a flagged chunk never reaches a generator, so it can never be
quoted, cited, followed, or used to pick or authorize any action. We exclude rather than
"quote as content" because the cost of exclusion is small (the honest sentences around a
planted one are lost) and the alternative relies on every generator, including a language
model reading the text, resisting the instruction.

The rules are patterns, so they are bypassable (paraphrase, other languages, text split
across chunks) and can misfire on unusual honest text; docs/poison.md lists the limits.
Bump RULES_VERSION when they change: it is part of the snapshot fingerprint, so a changed
rule set rebuilds snapshots instead of silently mixing old and new flags.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from citadel.records import Chunk

RULES_VERSION = "injection-rules-v2"

_F = re.I | re.M
_ASSISTANT = r"(?:AI|assistant|chat\s?bot|bot|LLM|language\s+model|GPT|ChatGPT|Claude|agent)"


# Paraphrased instructions (rules-v2): who the text claims to be, whom it addresses, what it
# asks for. Each needs the instruction's shape (clause-initial imperative, "you" addressed,
# a first-person role claim), never a topic word alone: honest policy text says "managers can
# override the refund policy" or "we never share other customers' data".
_CLAUSE = r"(?:^|[.!?;:]\s+|,\s*|\b(?:please|and|then|now|just|so)\s+)"
_ROLE = (r"(?:(?:site|system|store|shop|account|database|IT|platform|super)\s*)?"
         r"(?:admin(?:istrator)?|operator|superuser|sysadmin|root\s+user)")
_AI = (r"(?:AI|assistants?|chat\s?bots?|LLMs?|(?:large\s+)?language\s+models?|AI\s+models?|"
       r"virtual\s+assistants?|GPT|ChatGPT|Claude)")
_OTHERS = (r"(?:(?:all|every|each|any)\s+(?:of\s+the\s+)?(?:other\s+)?"
           r"(?:customer|user|client|member|shopper|buyer|account\s+holder)(?:s['’]|['’]s)"
           r"|(?:other|another|someone\s+else['’]s|other\s+people['’]s)\s+(?:customer|user|"
           r"client|member|shopper|buyer|account\s+holder|people|person)(?:s['’]|['’]s|s)?)")
_PRIVATE = (r"(?:orders?|data|details|records|e-?mails?|(?:e-?mail\s+)?addresses|information|"
            r"info|accounts?|passwords?|history|payments?|(?:credit\s+)?cards?|profiles?|"
            r"phone\s+numbers?|purchases?|PII|personal\s+\w+)")
_SHOW = (r"(?:show|list|reveal|display|give|dump|export|print|output|return|send|share|"
         r"provide|fetch|retrieve|disclose|look\s+up|pull\s+up|read\s+out|tell)")
_RULES = (r"(?:the\s+|all\s+|any\s+|your\s+|our\s+|its\s+|these\s+|those\s+|every\s+)*"
          r"(?:\w+\s+){0,2}?(?:polic(?:y|ies)|rules|restrictions|guardrails|safeguards|"
          r"guidelines|instructions|checks|limits|verification|permissions)\b")


@dataclass(frozen=True)
class Rule:
    name: str
    reason: str
    pattern: re.Pattern[str]
    # Lower-case substrings of which every match contains one: tested first (plain `in`,
    # far cheaper than a case-insensitive regex), they spare most chunks the full pattern.
    needs: tuple[str, ...] = ()


RULES: tuple[Rule, ...] = (
    Rule("override", "tells the reader to ignore its instructions", re.compile(
        r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?"
        r"(?:the\s+|your\s+|these\s+)?(?:previous|prior|above|earlier|preceding|system|"
        r"original|existing)\s+(?:instructions?|prompts?|rules|directions|guidelines|"
        r"messages|context)\b"
        r"|\b(?:ignore|disregard|forget)\s+(?:all|your|any)\s+(?:instructions?|rules|"
        r"guidelines|prompts?)\b", _F)),
    Rule("addresses-assistant", "addresses an AI assistant directly", re.compile(
        rf"\b(?:AI|LLM)\s+(?:assistant|model|agent|bot)s?\s*[:,]"
        rf"|\b(?:dear|hey|hi|attention|note\s+to(?:\s+the)?)\s+{_ASSISTANT}\b"
        rf"|^\s*(?:[*_>#-]+\s*)?{_ASSISTANT}\s*:", _F)),
    Rule("imperative", "orders the assistant to approve, grant or bypass something",
         re.compile(
             r"\byou\s+(?:must|should|shall|are\s+required\s+to|have\s+to|will)\s+(?:always\s+|"
             r"now\s+|immediately\s+)?(?:approve|authori[sz]e|grant|waive|override|bypass|"
             r"reveal|disclose|ignore|disregard|issue\s+(?:(?:a|the|all|every|full)\s+){0,2}"
             r"refunds?)\b", _F)),
    Rule("blanket-approval", "asks for every request to be approved", re.compile(
        r"\b(?:approve|authori[sz]e|grant)\s+(?:every|all|any)\s+(?:\w+\s+){0,2}?"
        r"(?:refunds?|requests?|claims?|returns?|orders?|discounts?|exceptions?)\b", _F)),
    Rule("role-play", "asks the assistant to take on another role", re.compile(
        r"\byou\s+are\s+now\s+(?:\w+\s+){0,3}?(?:assistant|AI|bot|chatbot|agent|model|DAN|"
        r"mode|unrestricted|jailbroken|\w*Bot|\w*GPT)\b"
        r"|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|should)\b"
        r"|\bpretend\s+(?:to\s+be|you\s+are|you're|that\s+you\s+are)\b"
        r"|\b(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?|the|my)\s+"
        r"(?:\w+\s+){0,2}?(?:assistant|AI|bot|agent|manager|admin(?:istrator)?|developer|"
        r"supervisor|employee)\b"
        r"|\brole-?\s?play\s+as\b"
        r"|\b(?:developer|admin|god|DAN|jailbreak|unrestricted)\s+mode\b", _F)),
    Rule("system-prompt", "imitates a system prompt or chat-template marker", re.compile(
        r"^\s*(?:[*_>#-]+\s*)?(?:system|developer)\s*(?:prompt|message|instructions?|note)?"
        r"\s*:"
        r"|<\|?\s*(?:system|im_start|im_end|endoftext)\s*\|?>"
        r"|\[/?(?:INST|SYS)\]|<</?SYS>>"
        r"|\b(?:BEGIN|END)\s+(?:SYSTEM\s+)?(?:PROMPT|INSTRUCTIONS)\b"
        r"|\bnew\s+(?:system\s+)?instructions?\s*:"
        r"|\bsystem\s+override\b", _F)),
    Rule("conceal", "asks for something to be hidden from the user", re.compile(
        r"\bdo\s+not\s+(?:tell|inform|mention|reveal|disclose)\s+(?:this\s+)?(?:to\s+)?"
        r"the\s+(?:user|human)\b", _F)),
    Rule("role-claim", "claims an administrator or operator role to give orders", re.compile(
        rf"\b(?:I\s+am|I['’]m|speaking\s+as|this\s+is)\s+(?:the|your)\s+{_ROLE}\b"
        rf"(?!['’]s|\s+(?:guide|panel|console|page|account|dashboard|view|area|role|settings|"
        rf"menu|tools?)\b)"
        rf"|\bas\s+(?:an?|the|your)\s+(?:{_ROLE}|system|developer)\s*,?\s+(?:I\s+(?:hereby\s+)?"
        rf"(?:authori[sz]e|instruct|order|command|permit|allow|require)\b|(?:please\s+)?"
        rf"(?:ignore|disregard|bypass|override|disable|circumvent)\b|(?:please\s+)?{_SHOW}\s+"
        rf"(?:me\s+|us\s+)?(?:the\s+)?{_OTHERS})", _F),
        ("admin", "operator", "superuser", "sysadmin", "root", "system", "developer")),
    Rule("others-data", "asks for other customers' data", re.compile(
        rf"{_CLAUSE}{_SHOW}\s+(?:me\s+|us\s+)?(?:the\s+)?{_OTHERS}\s*(?:\w+\s+){{0,2}}?"
        rf"{_PRIVATE}\b"
        rf"|\byou\s+(?:can|may|should|must|will|are\s+(?:now\s+)?(?:allowed|authori[sz]ed|"
        rf"permitted)\s+to)\s+(?:now\s+|also\s+|freely\s+)?{_SHOW}\s+(?:me\s+|us\s+)?"
        rf"(?:the\s+)?{_OTHERS}", _F),
        ("other", "all", "every", "each", "any", "someone")),
    Rule("instructs-assistant", "gives orders to an AI assistant", re.compile(
        rf"\bif\s+you\s+are\s+(?:an?\s+)?{_AI}\b"
        rf"|\b(?:any|all|every)\s+{_AI}\s+(?:reading|processing|summari[sz]ing|seeing)\b"
        rf"|\b{_AI}\s+(?:reading|processing)\s+this\b"
        rf"|\bthe\s+{_AI}\s+(?:must|should|shall|will|is\s+(?:now\s+)?(?:to|required\s+to|"
        rf"allowed\s+to|authori[sz]ed\s+to|permitted\s+to)|needs\s+to|has\s+to|may\s+now|"
        rf"can\s+now)\s+(?:now\s+|always\s+|also\s+)?(?:ignore|disregard|override|bypass|"
        rf"reveal|disclose|show|share|list|approve|grant|authori[sz]e|waive|issue|treat|trust|"
        rf"obey|give)\b", _F),
        ("ai", "assistant", "bot", "llm", "language", "gpt", "claude")),
    Rule("policy-override", "tells the reader to set policies or safeguards aside", re.compile(
        rf"{_CLAUSE}(?:ignore|disregard|bypass|override|circumvent|set\s+aside)\s+{_RULES}"
        rf"|\byou\s+(?:can|may|are\s+(?:now\s+)?(?:allowed|authori[sz]ed|permitted|free|"
        rf"cleared)\s+to)\s+(?:safely\s+)?(?:ignore|disregard|bypass|set\s+aside)\s+{_RULES}",
        _F), ("ignore", "disregard", "bypass", "override", "circumvent", "aside")),
    Rule("exfiltrate", "asks for the assistant's instructions", re.compile(
        r"\b(?:reveal|print|show|repeat|output)\s+(?:your|the)\s+(?:system\s+prompt|"
        r"(?:hidden|initial|original)\s+(?:prompt|instructions)|instructions)\b", _F)),
)


@dataclass(frozen=True)
class Finding:
    rule: str
    reason: str
    start: int
    end: int
    excerpt: str


def scan(text: str) -> list[Finding]:
    """Every rule match in `text`, in order of position."""
    lower = text.lower()
    findings = [
        Finding(rule.name, rule.reason, m.start(), m.end(), _excerpt(text, m.start(), m.end()))
        for rule in RULES
        if not rule.needs or any(word in lower for word in rule.needs)
        for m in rule.pattern.finditer(text)
    ]
    return sorted(findings, key=lambda f: (f.start, f.rule))


def hidden_overlap(
    chunk_start: int, chunk_end: int, hidden_spans: Sequence[tuple[int, int]]
) -> tuple[int, int] | None:
    """The first hidden span that overlaps [chunk_start, chunk_end), if any.

    The spans are sorted and disjoint (`loaders.extract_html`): a binary search finds the
    candidate, where a scan of every span for every chunk was quadratic on a page made of
    many hidden blocks."""
    i = bisect_right(hidden_spans, chunk_start, key=lambda span: span[1])
    if i < len(hidden_spans) and hidden_spans[i][0] < chunk_end:
        return hidden_spans[i]
    return None


def screen_chunk(chunk: Chunk, hidden_spans: Sequence[tuple[int, int]] = (),
                 document_flags: Sequence[str] = ()) -> Chunk:
    """The chunk, flagged when it carries planted instructions or hidden HTML text, or when
    its whole document is suspicious (`document_flags`, e.g. a page that tries to set its own
    authority: nothing on such a page can be trusted to be what it claims)."""
    reasons: list[str] = list(document_flags)
    span = hidden_overlap(chunk.start, chunk.end, hidden_spans)
    if span is not None:
        lo, hi = max(span[0], chunk.start) - chunk.start, min(span[1], chunk.end) - chunk.start
        reasons.append(f"hidden HTML text: {_excerpt(chunk.content, lo, hi)!r}")
    seen: set[str] = set()
    for f in scan(chunk.content):
        if f.rule not in seen:
            seen.add(f.rule)
            reasons.append(f"{f.reason}: {f.excerpt!r}")
    if not reasons:
        return chunk
    return chunk.model_copy(update={"suspicious": True, "suspicious_reason": "; ".join(reasons)})


def _excerpt(text: str, start: int, end: int, limit: int = 80) -> str:
    piece = re.sub(r"\s+", " ", text[start:end]).strip()
    return piece if len(piece) <= limit else piece[: limit - 1] + "…"
