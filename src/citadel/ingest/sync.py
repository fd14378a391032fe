"""Keeping a knowledge base in step with its sources: ingest them again every `interval`
seconds (`citadel sync`).

A round is a whole ingest (`pipeline.ingest`: under the change lock, so it waits for a
document change, and it keeps the uploaded documents), but it costs little when little
changed: a website's pages are fetched with conditional requests (a 304 reuses the stored
body: `web.fetch_cache`), unchanged chunks are neither embedded nor analysed again
(`embedding_cache`), and unchanged content makes the same snapshot id, so the served snapshot
is reused and nothing is built. When something changed, the new snapshot is built beside the
served one and the alias moves only once it validates. A round that fails (a site down, a
broken edit of citadel-sources.toml) is reported, the served snapshot stays, and the next
round tries again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citadel.config import ConfigError, Settings
from citadel.ingest.pipeline import IngestError, IngestReport, ingest
from citadel.knowledge.snapshots import SnapshotError

# What a round may fail with and the next round may not: the sources or the settings, which
# the operator can fix while sync keeps the served snapshot.
RECOVERABLE = (IngestError, ConfigError, SnapshotError, OSError)


@dataclass(frozen=True)
class Round:
    report: IngestReport | None  # None: the round failed (`error`)
    error: str | None = None


def sync(sources: Sequence[Path | str], settings: Settings, *, interval: float,
         on_round: Callable[[Round], None], once: bool = False,
         sleep: Callable[[float], None] = time.sleep, **ingest_options: Any) -> None:
    """Ingest `sources` now and then every `interval` seconds, telling `on_round` each time;
    with `once`, one round whose failure is raised. Runs until interrupted."""
    while True:
        try:
            report = ingest(sources, settings, **ingest_options)
        except RECOVERABLE as exc:
            if once:
                raise
            on_round(Round(None, str(exc)))
        else:
            on_round(Round(report))
        if once:
            return
        sleep(interval)
