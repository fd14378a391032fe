"""What ingesting a help-centre website costs, and what keeping it in step costs: a first
ingest, the same site again (every page answers 304, the snapshot is reused) and the site
with one page changed (only that page's chunks are embedded).

    .venv/bin/python benchmarks/web_sync.py [--pages 200] [--embedder minilm|hashing]

The site is generated and served from 127.0.0.1 in this process (tests/ingest/web/
help_centre.py): a home page linking ten section pages, each linking its share of the
articles; every article has the site's header, navigation, sidebar and footer around three
paragraphs of its own. The crawl runs with `fetch_delay = 0` (the default pause of 1 s per
request would add one second per page: politeness, not work). Writes
benchmarks/results/web_sync.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.ingest.web.help_centre import article, serve  # noqa: E402

from citadel.config import Settings  # noqa: E402
from citadel.ingest.pipeline import ingest  # noqa: E402

SECTIONS = 10
TOPICS = ("returns", "delivery", "gift cards", "warranty", "payments", "accounts", "orders",
          "kettles", "toasters", "subscriptions")


def paragraphs(n: int, version: int = 1) -> str:
    topic = TOPICS[n % len(TOPICS)]
    return (f"<p>Article {n} explains {topic} in detail for customers in region {n % 7}.</p>"
            f"<p>The {topic} limit for case {n} is {n * 3 + version} days from the order "
            "date, counted in business days.</p>"
            f"<p>Contact the {topic} desk with reference {n:05d} if the limit has passed; "
            "the desk answers within two working days.</p>")


def build_site(site, pages: int) -> None:
    per = -(-pages // SECTIONS)
    site.page("/", article("Help Centre", "<p>Answers for every question.</p>", links="".join(
        f'<a href="/section/{s}">Section {s}</a>' for s in range(SECTIONS))))
    for s in range(SECTIONS):
        links = "".join(f'<a href="/help/{n}">Article {n}</a>'
                        for n in range(s * per, min(pages, (s + 1) * per)))
        site.page(f"/section/{s}", article(f"Section {s}", f"<p>Section {s}.</p>", links))
    for n in range(pages):
        site.page(f"/help/{n}", article(f"Article {n}", paragraphs(n)))


def run(settings: Settings, url: str, site, label: str) -> dict:
    requests, not_modified = len(site.requests), site.not_modified
    started = time.perf_counter()
    report = ingest([url], settings, progress=False)
    row = {"run": label, "seconds": round(time.perf_counter() - started, 2),
           "load_seconds": report.stage_seconds.get("load"), "documents": report.documents,
           "chunks": report.chunks, "embedded": report.embedded, "reused": report.reused,
           "requests": len(site.requests) - requests,
           "not_modified": site.not_modified - not_modified}
    print(json.dumps(row))
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, serve() as site:
        build_site(site, args.pages)
        settings = Settings(home=Path(home), embedder=args.embedder, fetch_allow_private=True,
                            fetch_delay=0.0, crawl_max_pages=args.pages + SECTIONS + 10)
        rows = [run(settings, site.url("/"), site, "first ingest")]
        rows.append(run(settings, site.url("/"), site, "unchanged"))
        site.page("/help/7", article("Article 7", paragraphs(7, version=2)))
        rows.append(run(settings, site.url("/"), site, "one page changed"))
    out = ROOT / "benchmarks" / "results" / "web_sync.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"pages": args.pages, "embedder": args.embedder, "runs": rows},
                              indent=2))


if __name__ == "__main__":
    main()
