"""One request's trace while it runs: stage latencies and the fields a `Trace` records.

Mutable while the request runs and owned by it alone; `freeze` makes the `Trace` its answer
carries. Every stage (retrieval, the decision stages, the gate) writes here, so the trace is
how one request was answered, step by step.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from citadel.records import Trace


@dataclass
class RequestTrace:
    request_id: str
    fields: dict[str, Any] = field(default_factory=dict)
    latencies_ms: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            # A stage entered twice (the gate of a conflict answer, then of a draft) adds up.
            spent = (time.perf_counter() - t0) * 1000
            self.latencies_ms[name] = round(self.latencies_ms.get(name, 0.0) + spent, 3)

    def degrade(self, reason: str) -> None:
        self.fields["degraded"] = True
        self.fields["degraded_reasons"] = (*self.fields.get("degraded_reasons", ()), reason)

    @property
    def degraded(self) -> bool:
        return bool(self.fields.get("degraded", False))

    def freeze(self) -> Trace:
        total = sum(self.latencies_ms.values())
        return Trace(request_id=self.request_id,
                     latencies_ms={**self.latencies_ms, "total": round(total, 3)}, **self.fields)
