"""Re-checking saved citation receipts against the knowledge base (`citadel verify`).

A receipt is an answer as `citadel ask --json` (or `POST /v1/answer`) printed it. Without a
signing key a receipt cannot prove who wrote it; what it can prove is that it agrees with the
knowledge base and with the engine's own records:

* each citation: its snapshot still exists and is complete, the cited chunk in it still has
  the receipt's content hash (and its content still hashes to that), its metadata (document,
  source, title, section) is the chunk's, and the quote sits at the receipt's offsets in the
  snapshot's stored document text, inside the chunk, on the pages the receipt names;
* staleness: a receipt into a snapshot that is no longer active, whose cited document has
  changed (or gone) in the active snapshot, fails as "snapshot not active; source changed
  since" — the quote was real, the source has moved on;
* the answer: every `[Sn]` marker in its text has a citation labelled Sn and every citation
  is referred to by a marker, and — when the engine's request log holds the request — its
  text and citations are exactly what the engine answered (`compare_with_record`; the CLI
  reads the request log; a door reads only its caller's tenant's requests);
* a door's link on a citation (`url`): an http(s) address whose fragment opens that
  citation's quote and, when the verifier knows the server, on the server's origin
  (`link_problems`).

Receipts are read as untrusted input, never as `Citation`s: only the citation gate builds
those.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citadel.config import Settings
from citadel.knowledge.receipts import ReceiptCheck, check_receipt
from citadel.knowledge.signing import PublicKeys
from citadel.knowledge.snapshots import Catalog, SnapshotError
from citadel.retrieval.backends import Backend, SearchIndex, get_backend
from citadel.retrieval.tenancy import visible

STALE = "snapshot not active; source changed since"
# What `GateResult.render` writes after a sentence; any other bracket was not the gate's.
_MARKER = re.compile(r"\[(S\d+)\]")
_METADATA = ("document_id", "source", "title", "section")
# Added to a citation by the door that handed it out (its link), not by the engine: the request
# log's record has no link to compare it with (`link_problems` checks it).
DOOR_FIELDS = frozenset({"url"})
LINK_SCHEMES = ("http", "https")


class VerifyError(ValueError):
    """The input is not an answer with citations (the message says why)."""


class Receipt(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    label: str = ""
    chunk_id: str
    document_id: str
    source: str
    title: str
    section: str
    quote: str
    start: int
    end: int
    snapshot_id: str
    content_sha256: str
    page_start: int | None = None
    page_end: int | None = None


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    receipt: Receipt
    ok: bool
    reason: str
    checked: bool = Field(default=True, description="False when the snapshot is gone (or "
                          "incomplete): the citation could not be checked against it.")


class SavedAnswer(BaseModel):
    """The parts of a saved answer that verify looks at. `answer` is None for citations
    without an answer text (then only the citations themselves can be checked)."""

    model_config = ConfigDict(frozen=True)

    answer: str | None = None
    request_id: str | None = None
    receipts: tuple[Receipt, ...] = ()
    citations: tuple[dict[str, Any], ...] = ()  # as given, for comparing with the record
    raw: dict[str, Any] | None = None  # the whole answer as given (its signed receipt)


def parse_answer(text: str | Any) -> SavedAnswer:
    """An Answer as JSON text, or already parsed (or a bare list of citations). The answer of
    any door reads: `/v1/answer`'s (request id in `trace`) or an MCP / chat-completions
    answer (`request_id` beside the citations)."""
    if isinstance(text, str):
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            raise VerifyError(f"not JSON: {exc}") from None
    else:
        data = text
    citations = data.get("citations") if isinstance(data, dict) else data
    if not isinstance(citations, list):
        raise VerifyError("expected the JSON of `citadel ask --json` (an object with "
                          "\"citations\")")
    receipts: list[Receipt] = []
    for i, item in enumerate(citations, start=1):
        try:
            receipts.append(Receipt.model_validate(item))
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
            raise VerifyError(f"citation {i} is malformed ({fields})") from None
    if not isinstance(data, dict):
        return SavedAnswer(receipts=tuple(receipts), citations=tuple(citations))
    answer = data.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise VerifyError("\"answer\" must be the answer's text")
    trace = data.get("trace")
    request_id = trace.get("request_id") if isinstance(trace, dict) else data.get("request_id")
    return SavedAnswer(answer=answer, request_id=request_id if isinstance(request_id, str)
                       else None, receipts=tuple(receipts), citations=tuple(citations),
                       raw=data)


def source_fragment(citation: Receipt | Any) -> str:
    """The part of a citation's link that names its quote (the page reads it): document,
    chunk and offsets, from the citation's own (signed) fields."""
    return urlencode({"doc": citation.document_id, "chunk": citation.chunk_id,
                      "start": citation.start, "end": citation.end})


def origin_of(url: str) -> str | None:
    """`scheme://host:port` of an http(s) URL (lower case, the default port written out), or
    None for any other URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in LINK_SCHEMES or not parts.hostname:
        return None
    port = port or (443 if scheme == "https" else 80)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{scheme}://{host}:{port}"


def server_origins(page_url: str) -> frozenset[str]:
    """The origins a server's links may have, given its page's address: that origin, and on
    a loopback address every loopback name for it (`localhost`, `127.0.0.1`, `[::1]`), which
    all reach the same server."""
    origin = origin_of(page_url)
    if origin is None:
        return frozenset()
    parts = urlsplit(origin)
    if not _loopback(parts.hostname or ""):
        return frozenset({origin})
    return frozenset(f"{parts.scheme}://{host}:{parts.port}"
                     for host in ("localhost", "127.0.0.1", "[::1]"))


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def link_problems(citations: Iterable[Any], origins: Collection[str] | None = None
                  ) -> list[str]:
    """A door's link on a citation must open that citation's quote: an http(s) address (no
    `javascript:` or `data:`) whose fragment names the citation's document, chunk and
    offsets; with `origins` (the server is known), on one of them. Citations without a link
    pass; a malformed citation is left to the citation checks."""
    problems = []
    for c in citations:
        if not isinstance(c, Mapping) or c.get("url") is None:
            continue
        label = c.get("label") or "?"
        url = c["url"]
        try:
            expected = source_fragment(Receipt.model_validate(c))
        except ValidationError:
            continue
        origin = origin_of(url) if isinstance(url, str) else None
        if origin is None:
            problems.append(f"the link of citation {label} is not an http(s) address")
        elif urlsplit(url).fragment != expected:
            problems.append(f"the link of citation {label} does not open its quote")
        elif origins is not None and origin not in origins:
            problems.append(f"the link of citation {label} leads to {origin}, not to the "
                            f"server ({', '.join(sorted(origins)) or 'unknown'})")
    return problems


def parse_receipts(text: str) -> list[Receipt]:
    """Receipts from an Answer as JSON (or a bare list of citations)."""
    return list(parse_answer(text).receipts)


def marker_problems(saved: SavedAnswer) -> list[str]:
    """Markers without a citation, citations without a marker. Empty without an answer text.
    (Other brackets are left to the request-log comparison: a conflict answer may quote a
    question or a title that holds one.)"""
    if saved.answer is None:
        return []
    problems: list[str] = []
    markers = _MARKER.findall(saved.answer)
    labels = {r.label for r in saved.receipts}
    for label in dict.fromkeys(markers):
        if label not in labels:
            problems.append(f"the answer text cites [{label}] but no citation is labelled "
                            f"{label}")
    for label in dict.fromkeys(r.label for r in saved.receipts):
        if label not in markers:
            problems.append(f"citation {label or '(unlabelled)'} is not referred to by any "
                            "marker in the answer text")
    return problems


def compare_with_record(saved: SavedAnswer, recorded: dict[str, Any] | None,
                        withheld: str = "") -> list[str]:
    """Differences between the saved answer and what the engine recorded for the request.

    `recorded` is the response stored in the request log (None: no record). An answer text
    withheld from the log (question logging off) is not compared."""
    if saved.answer is None:
        return []
    if recorded is None:
        if not saved.receipts and not _MARKER.search(saved.answer):
            return []  # claims no support: there is no receipt to hold it to
        return [f"the answer text cannot be checked: no record of request "
                f"{saved.request_id or '(none)'} in the request log"]
    problems: list[str] = []
    if recorded.get("answer") not in (saved.answer, withheld or None):
        problems.append(f"the answer text differs from what the engine answered for request "
                        f"{saved.request_id}")
    issued = recorded.get("citations") or []
    if len(issued) != len(saved.citations):
        problems.append(f"the engine issued {len(issued)} citation(s) for request "
                        f"{saved.request_id}, the answer holds {len(saved.citations)}")
    else:
        for mine, theirs in zip(saved.citations, issued, strict=True):
            changed = sorted(k for k in (set(mine) | set(theirs)) - DOOR_FIELDS
                             if mine.get(k) != theirs.get(k))
            if changed:
                problems.append(f"citation {mine.get('label') or '?'} differs from the one the "
                                f"engine issued ({', '.join(changed)})")
    return problems


class VerifyReport(BaseModel):
    """Everything `citadel verify` (or a door's `verify`) found about one saved answer, part
    by part: the signature, the answer against what was signed, each citation against its
    snapshot (source unchanged), and whether that snapshot is still there."""

    ok: bool = Field(description="Nothing failed: a valid signature over exactly this answer "
                     "(when it carries a receipt), every checkable citation holds, and the "
                     "answer text has no problem. A snapshot that is gone does not fail a "
                     "validly signed answer: the signature alone proves it.")
    citations: int
    failed: int
    answer_problems: list[str] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    signature: ReceiptCheck | None = Field(default=None, description="The signed receipt's "
                                           "check (None: no keys to check it with).")
    snapshots: dict[str, str] = Field(default_factory=dict, description="Each cited "
                                      "snapshot: `active`, `present, not active` or `gone`.")


# A request id -> the responses the engine's request log holds for it (a door: only those of
# its caller's tenant, so that another tenant's request is as unknown as a made-up id).
Records = Callable[[str], list[dict[str, Any]]]
# Only a request's own tenant may learn whether a private chunk says something.
ANY_TENANT = object()


def verify_answer(settings: Settings, saved: SavedAnswer, *, records: Records | None = None,
                  withheld: str = "", tenant: Any = ANY_TENANT,
                  open_indexes: Mapping[str, SearchIndex] | None = None,
                  keys: PublicKeys | None = None,
                  origins: Collection[str] | None = None) -> VerifyReport:
    """Check a saved answer: its signed receipt (given the signer's public `keys`), its
    citations against their snapshots and their links (on the server's `origins`, when the
    verifier knows them), its markers and (given `records`) that it is what the engine
    answered. `tenant`: check as a request of that tenant would see the knowledge base (a
    private chunk of another tenant is "not in the snapshot"; `records` must then hold only
    that tenant's requests); the operator's CLI sees everything."""
    signature = (check_receipt(saved.raw, keys) if keys is not None and saved.raw is not None
                 else None)
    signed = signature is not None and signature.ok  # valid, over exactly this answer
    verdicts = verify_receipts(settings, saved.receipts, tenant=tenant,
                               open_indexes=open_indexes)
    problems = marker_problems(saved)
    if signature is not None:
        problems += signature.problems()
    problems += link_problems(saved.citations, origins)
    if records is not None and saved.answer is not None:
        recorded = records(saved.request_id) if saved.request_id else []
        if not recorded:
            if not signed:  # a valid signature is the engine's own account of the answer
                problems += compare_with_record(saved, None)
        else:  # a caller-given request id may have been reused: the closest record counts
            problems += min((compare_with_record(saved, r, withheld=withheld)
                             for r in recorded), key=len)
    failed = sum(not v.ok for v in verdicts)
    # A signed answer whose snapshot is gone stands on its signature.
    failing = sum(not v.ok and (v.checked or not signed) for v in verdicts)
    return VerifyReport(ok=failing == 0 and not problems, citations=len(verdicts),
                        failed=failed, answer_problems=problems, verdicts=verdicts,
                        signature=signature, snapshots=_snapshot_states(settings, saved))


def _snapshot_states(settings: Settings, saved: SavedAnswer) -> dict[str, str]:
    catalog = Catalog(settings.home)
    active = catalog.alias() if catalog.path.is_file() else None
    states = {}
    for sid in dict.fromkeys(r.snapshot_id for r in saved.receipts):
        info = catalog.get(sid) if catalog.path.is_file() else None
        states[sid] = ("gone" if info is None or info.state != "complete"
                       else "active" if sid == active else "present, not active")
    return states


def verify_receipts(
    settings: Settings, receipts: Sequence[Receipt], backend: Backend | None = None, *,
    tenant: Any = ANY_TENANT, open_indexes: Mapping[str, SearchIndex] | None = None,
) -> list[Verdict]:
    """One verdict per receipt. `open_indexes` (snapshot id -> index) are used as they are
    and left open (a server's served snapshot); others are opened and closed here."""
    catalog = Catalog(settings.home)
    backend = backend or get_backend(settings)
    given = dict(open_indexes or {})
    indexes: dict[str, SearchIndex | _Gone] = {}  # snapshot id -> index opened here, or why not
    active = catalog.alias()
    active_docs = _document_hashes(catalog, active)
    try:
        verdicts = []
        for receipt in receipts:
            sid = receipt.snapshot_id
            if sid not in indexes and sid not in given:
                indexes[sid] = _open(catalog, backend, settings, sid)
            index = given.get(sid) or indexes[sid]
            if isinstance(index, _Gone):
                verdicts.append(Verdict(receipt=receipt, ok=False, reason=index.reason,
                                        checked=False))
                continue
            reason = _check(index, receipt, tenant)
            if reason is None and sid != active:
                reason = _stale(index, receipt, active, active_docs)  # type: ignore[arg-type]
            verdicts.append(Verdict(receipt=receipt, ok=reason is None, reason=reason or "ok"))
        return verdicts
    finally:
        for index in indexes.values():
            if not isinstance(index, _Gone):
                index.close()


def _document_hashes(catalog: Catalog, snapshot_id: str | None) -> dict[str, str] | None:
    """document id -> content hash in a snapshot's manifest (None: no manifest to read)."""
    if snapshot_id is None:
        return None
    try:
        manifest = catalog.read_manifest(snapshot_id)
    except SnapshotError:
        return None
    if manifest is None:
        return None
    return {d.document_id: d.content_sha256 for d in manifest.documents}


def _stale(index: SearchIndex, r: Receipt, active: str | None,
           active_docs: dict[str, str] | None) -> str | None:
    """Why a receipt that holds in its own (inactive) snapshot is out of date, or None when
    its document is unchanged in the active snapshot."""
    if active is None:
        return f"{STALE}: there is no active snapshot any more"
    if active_docs is None:
        return None  # nothing to compare with: the receipt holds in its own snapshot
    doc = index.get_document(r.document_id)
    now = active_docs.get(r.document_id)
    if now is None:
        return f"{STALE}: document {r.document_id} is not in the active snapshot {active}"
    if doc is not None and doc.content_sha256 != now:
        return (f"{STALE}: document {r.document_id} has content hash {now[:12]}… in the active "
                f"snapshot {active}, {doc.content_sha256[:12]}… in {r.snapshot_id}")
    return None


@dataclass(frozen=True)
class _Gone:
    """Why a snapshot cannot be opened to check citations against."""

    reason: str


def _open(catalog: Catalog, backend: Backend, settings: Settings, sid: str
          ) -> SearchIndex | _Gone:
    info = catalog.get(sid)
    if info is None:
        return _Gone(f"snapshot {sid} no longer exists")
    if info.state != "complete":
        return _Gone(f"snapshot {sid} is {info.state}, not complete")
    if not backend.has_snapshot(sid):
        return _Gone(f"the data of snapshot {sid} is missing")
    return backend.open(sid, settings.dense_weight, settings.candidates)


def _check(index: SearchIndex, r: Receipt, tenant: Any = ANY_TENANT) -> str | None:
    """None when the receipt holds, else the first reason it does not."""
    chunk = index.get_chunk(r.chunk_id)
    if chunk is None or (tenant is not ANY_TENANT and not visible(chunk.tenant, tenant)):
        return f"chunk {r.chunk_id} is not in snapshot {r.snapshot_id}"
    for field in _METADATA:
        have, claimed = getattr(chunk, field), getattr(r, field)
        if have != claimed:
            return (f"{field} of chunk {r.chunk_id} is {have!r}, the citation says "
                    f"{claimed!r}")
    if chunk.content_sha256 != r.content_sha256:
        return (f"chunk {r.chunk_id} has content hash {chunk.content_sha256[:12]}…, "
                f"the citation says {r.content_sha256[:12]}…")
    if hashlib.sha256(chunk.content.encode()).hexdigest() != chunk.content_sha256:
        return f"stored chunk {r.chunk_id} no longer matches its own content hash"
    if not (chunk.start <= r.start < r.end <= chunk.end):
        return (f"offsets {r.start}..{r.end} lie outside chunk {r.chunk_id} "
                f"({chunk.start}..{chunk.end})")
    doc = index.get_document(r.document_id)
    if doc is None:
        return f"document {r.document_id} is not in snapshot {r.snapshot_id}"
    found = doc.text[r.start : r.end]
    if found != r.quote:
        return f"the text at {r.start}..{r.end} is {found[:60]!r}, not the quote"
    pages = (doc.page_at(r.start), doc.page_at(r.end - 1))
    if (r.page_start, r.page_end) != pages:
        return (f"the quote is on pages {_pages(*pages)} of {r.document_id}, "
                f"the citation says {_pages(r.page_start, r.page_end)}")
    return None


def _pages(first: int | None, last: int | None) -> str:
    return "none" if first is None else f"{first}–{last}" if last != first else str(first)
