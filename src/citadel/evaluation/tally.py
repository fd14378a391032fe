"""Collecting one run's measurements: a `Tally` per metric and the failures behind it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Tally:
    """A mean over measured items: `total` summed values over `n` items (0/1 for a ratio)."""

    total: float = 0.0
    n: int = 0

    def add(self, value: float | bool) -> Tally:
        return Tally(self.total + float(value), self.n + 1)

    @property
    def value(self) -> float | None:
        """The fraction, or None when nothing was measured (never a made-up 0 or 1)."""
        return None if self.n == 0 else self.total / self.n


@dataclass
class RunTally:
    """Mutable while one suite runs; owned by that run only."""

    tallies: dict[str, Tally] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)

    def add(self, metric: str, value: float | bool, failure: str | None = None) -> None:
        self.tallies[metric] = self.tallies.get(metric, Tally()).add(value)
        if failure is not None:
            self.failures.setdefault(metric, []).append(failure)

    def add_value(self, metric: str, mean: float, n: int) -> None:
        """Record a mean measured elsewhere (e.g. a held-out accuracy over n pairs)."""
        self.tallies[metric] = Tally(mean * n, n)

    def metrics(self) -> dict[str, float]:
        return {k: round(v.value, 6) for k, v in sorted(self.tallies.items())
                if v.value is not None}

    def counts(self) -> dict[str, dict[str, float]]:
        return {k: {"sum": round(v.total, 6), "n": v.n} for k, v in sorted(self.tallies.items())}
