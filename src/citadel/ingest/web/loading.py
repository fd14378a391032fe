"""Websites into documents for the ingest pipeline: crawl each site, read its pages, and
keep one document per id (`citadel.ingest.sources` joins them with the files)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from citadel.config import Settings
from citadel.ingest.loaders import Skipped
from citadel.ingest.operator_metadata import SourceMetadata
from citadel.ingest.web.crawl import CrawlBounds, crawl
from citadel.ingest.web.fetch import Fetcher, FetchLimits
from citadel.ingest.web.fetch_cache import FetchCache
from citadel.ingest.web.pages import page_documents
from citadel.ingest.web.site import Website
from citadel.records import Document


@dataclass
class WebCorpus:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    attempted: list[str] = field(default_factory=list)  # every URL fetched or tried
    ignored_front_matter: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def fetch_limits(settings: Settings) -> FetchLimits:
    return FetchLimits(timeout=settings.fetch_timeout, max_bytes=settings.fetch_max_page_bytes,
                       delay=settings.fetch_delay, allow_private=settings.fetch_allow_private)


def load_websites(sites: Sequence[Website], settings: Settings,
                  rules: Mapping[str, SourceMetadata], progress: bool = False,
                  fetcher: Fetcher | None = None) -> WebCorpus:
    """Every site's documents; `rules` are the operator's `[sources]` entries keyed by URL.
    A page already read for an earlier site (sites may overlap) is kept once."""
    out = WebCorpus()
    own = fetcher is None
    fetcher = fetcher or Fetcher(fetch_limits(settings), FetchCache.for_home(settings.home))
    by_id: dict[str, str] = {}
    try:
        for site in sites:
            bounds = CrawlBounds(site.max_pages or settings.crawl_max_pages,
                                 settings.crawl_max_depth if site.max_depth is None
                                 else site.max_depth, settings.crawl_max_seconds)
            found = crawl(site, fetcher, bounds, progress)
            read = page_documents(found.pages, rules)
            out.attempted += found.attempted
            out.skipped += found.skipped + read.skipped
            out.ignored_front_matter += read.ignored_front_matter
            for doc in read.documents:
                known = by_id.get(doc.document_id)
                if known is None:
                    by_id[doc.document_id] = doc.source
                    out.documents.append(doc)
                elif known != doc.source:  # `/a.html` and `/a.htm`, `http:` and `https:`
                    out.skipped.append(Skipped(doc.source, f"its document id "
                                               f"{doc.document_id!r} is {known}'s already"))
                # else the same page, from another site's crawl: kept once
    finally:
        if own:
            fetcher.close()
    return out
