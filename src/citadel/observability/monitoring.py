"""Monitoring: aggregate request-log records per day and per ISO week, and raise alerts.

Pure functions over `RequestRecord`s (the CLI in `citadel.cli.monitor` reads the log):

* citation rate      share of requests whose answer kept >= 1 valid citation
* abstention rate    share of requests that abstained
* conflict rate      share of requests whose answer reported a conflict
* degraded rate      share of requests answered in degraded mode
* drop rate, by reason  share of requests in which the gate dropped >= 1 citation for it
* dominant documents which documents supply the citations, with their authority

Alerts: the citation rate of a week falls more than `max_citation_drop` (absolute) below the
week before (both weeks with >= `min_requests`), or one document whose authority is below
`low_authority` supplies more than `max_document_share` of a week's citations (>=
`min_citations` of them).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from citadel.observability.request_log import RequestRecord


class Thresholds(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_citation_drop: float = Field(default=0.10, ge=0.0, le=1.0)
    low_authority: float = Field(default=0.5, ge=0.0, le=1.0)
    max_document_share: float = Field(default=0.30, ge=0.0, le=1.0)
    min_requests: int = Field(default=20, ge=1)
    min_citations: int = Field(default=10, ge=1)


class DocumentShare(BaseModel):
    document_id: str
    title: str
    citations: int
    share: float
    authority: float | None


class PeriodStats(BaseModel):
    period: str
    requests: int
    citation_rate: float
    abstention_rate: float
    conflict_rate: float
    degraded_rate: float
    drop_rate: dict[str, float] = Field(default_factory=dict)
    drops: dict[str, int] = Field(default_factory=dict)
    citations: int = 0
    top_documents: list[DocumentShare] = Field(default_factory=list)


class Alert(BaseModel):
    kind: str  # citation_rate_drop | low_authority_dominance
    period: str
    message: str


class Report(BaseModel):
    since: dt.datetime | None
    requests: int
    days: list[PeriodStats]
    weeks: list[PeriodStats]
    documents: list[DocumentShare]
    alerts: list[Alert]
    thresholds: Thresholds


def day_of(record: RequestRecord) -> str:
    return record.time.astimezone(dt.UTC).date().isoformat()


def week_of(record: RequestRecord) -> str:
    year, week, _ = record.time.astimezone(dt.UTC).isocalendar()
    return f"{year}-W{week:02d}"


def week_start(when: dt.datetime) -> dt.datetime:
    """Monday 00:00 UTC of `when`'s ISO week."""
    day = when.astimezone(dt.UTC).date()
    monday = day - dt.timedelta(days=day.weekday())
    return dt.datetime.combine(monday, dt.time(), tzinfo=dt.UTC)


def document_shares(records: Iterable[RequestRecord], top: int | None = None
                    ) -> list[DocumentShare]:
    counts: Counter[str] = Counter()
    titles: dict[str, str] = {}
    authority: dict[str, float | None] = {}
    for r in records:
        for c in r.cited:
            counts[c.document_id] += 1
            titles[c.document_id] = c.title
            if c.authority is not None:
                known = authority.get(c.document_id)
                # The lowest authority seen: an alert should not be hidden by one good chunk.
                authority[c.document_id] = c.authority if known is None else min(known,
                                                                                  c.authority)
            else:
                authority.setdefault(c.document_id, None)
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [DocumentShare(document_id=d, title=titles[d], citations=n, share=n / total,
                          authority=authority.get(d)) for d, n in ranked]


def period_stats(period: str, records: Sequence[RequestRecord], top: int = 3) -> PeriodStats:
    n = len(records)
    drops: Counter[str] = Counter()
    requests_with: Counter[str] = Counter()
    for r in records:
        reasons = Counter(d.reason for d in r.citations_dropped)
        drops.update(reasons)
        requests_with.update(set(reasons))

    def rate(pred: Callable[[RequestRecord], bool]) -> float:
        return sum(1 for r in records if pred(r)) / n if n else 0.0

    return PeriodStats(
        period=period,
        requests=n,
        citation_rate=rate(lambda r: r.citations_emitted >= 1),
        abstention_rate=rate(lambda r: r.abstained),
        conflict_rate=rate(lambda r: r.conflict),
        degraded_rate=rate(lambda r: r.degraded),
        drop_rate={k: v / n for k, v in sorted(requests_with.items())},
        drops=dict(sorted(drops.items())),
        citations=sum(len(r.cited) for r in records),
        top_documents=document_shares(records, top),
    )


def group(records: Iterable[RequestRecord], key: Callable[[RequestRecord], str]
          ) -> dict[str, list[RequestRecord]]:
    out: dict[str, list[RequestRecord]] = defaultdict(list)
    for r in records:
        out[key(r)].append(r)
    return dict(sorted(out.items()))


def _previous_week(period: str) -> str:
    year, week = period.split("-W")
    monday = dt.date.fromisocalendar(int(year), int(week), 1) - dt.timedelta(days=7)
    y, w, _ = monday.isocalendar()
    return f"{y}-W{w:02d}"


def alerts_for(weeks: dict[str, list[RequestRecord]], stats: dict[str, PeriodStats],
               t: Thresholds) -> list[Alert]:
    alerts: list[Alert] = []
    for period, s in stats.items():
        before = stats.get(_previous_week(period))
        if (before is not None and before.requests >= t.min_requests
                and s.requests >= t.min_requests
                and before.citation_rate - s.citation_rate > t.max_citation_drop):
            alerts.append(Alert(
                kind="citation_rate_drop", period=period,
                message=f"citation rate fell from {before.citation_rate:.0%} in {before.period} "
                        f"to {s.citation_rate:.0%} in {period} (more than "
                        f"{t.max_citation_drop:.0%} points)"))
        shares = document_shares(weeks[period])
        if s.citations < t.min_citations:
            continue
        for d in shares:
            if (d.authority is not None and d.authority < t.low_authority
                    and d.share > t.max_document_share):
                alerts.append(Alert(
                    kind="low_authority_dominance", period=period,
                    message=f"{d.document_id} (authority {d.authority:.2f} < "
                            f"{t.low_authority:.2f}) supplied {d.share:.0%} of {period}'s "
                            f"{s.citations} citations (limit {t.max_document_share:.0%})"))
    return alerts


def build_report(records: Sequence[RequestRecord], thresholds: Thresholds | None = None,
                 since: dt.datetime | None = None) -> Report:
    t = thresholds or Thresholds()
    days = group(records, day_of)
    weeks = group(records, week_of)
    week_stats = {p: period_stats(p, rs) for p, rs in weeks.items()}
    return Report(
        since=since,
        requests=len(records),
        days=[period_stats(p, rs) for p, rs in days.items()],
        weeks=list(week_stats.values()),
        documents=document_shares(records, top=10),
        alerts=alerts_for(weeks, week_stats, t),
        thresholds=t,
    )


def render(report: Report) -> str:
    lines: list[str] = []
    window = f" since {report.since:%Y-%m-%d %H:%M} UTC" if report.since else ""
    lines.append(f"{report.requests} requests{window}")
    reasons = sorted({k for s in report.days + report.weeks for k in s.drop_rate})
    header = (f"{'period':<11} {'requests':>8} {'cited':>6} {'abstain':>7} {'conflict':>8} "
              f"{'degraded':>8}" + "".join(f" {'drop:' + r:>{max(12, len(r) + 5)}}"
                                             for r in reasons))
    for title, rows in (("Per day", report.days), ("Per week", report.weeks)):
        lines += ["", title, header]
        for s in rows:
            lines.append(
                f"{s.period:<11} {s.requests:>8} {s.citation_rate:>6.0%} "
                f"{s.abstention_rate:>7.0%} {s.conflict_rate:>8.0%} {s.degraded_rate:>8.0%}"
                + "".join(f" {s.drop_rate.get(r, 0.0):>{max(12, len(r) + 5)}.0%}"
                          for r in reasons))
    lines += ["", "Most cited document per week"]
    for s in report.weeks:
        if s.top_documents:
            d = s.top_documents[0]
            auth = "?" if d.authority is None else f"{d.authority:.2f}"
            lines.append(f"  {s.period:<11} {d.share:>5.0%} of {s.citations:<5} "
                         f"authority {auth:<4}  {d.document_id}")
    lines += ["", "Documents cited most (whole window)"]
    if not report.documents:
        lines.append("  (no citations)")
    for d in report.documents:
        auth = "?" if d.authority is None else f"{d.authority:.2f}"
        lines.append(f"  {d.share:>5.0%}  {d.citations:>5}  authority {auth:<4}  "
                     f"{d.document_id} ({d.title})")
    lines.append("")
    if report.alerts:
        lines.append(f"ALERTS ({len(report.alerts)})")
        lines.extend(f"  [{a.kind}] {a.period}: {a.message}" for a in report.alerts)
    else:
        lines.append("No alerts.")
    return "\n".join(lines)
