"""Structural guarantees that are easiest to pin by reading the source."""

import ast
import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "citadel"

# What each top-level unit may import (besides itself): the pipeline read bottom-up. The hall
# modules (records, config, gate, supersedes, engine) are units of their own; `citadel` is the
# package's __init__ (public re-exports).
ALLOWED = {
    "records": set(),
    "config": set(),
    "text": {"records"},
    "gate": {"records", "text"},
    "supersedes": {"records"},
    "retrieval": {"records", "config", "text"},
    "knowledge": {"records", "config", "text", "retrieval"},
    "ingest": {"records", "config", "text", "retrieval", "knowledge", "supersedes"},
    "observability": {"records", "config"},
    # answering reads its evidence through retrieval (answering.evidence).
    "answering": {"records", "config", "text", "gate", "supersedes", "retrieval"},
    "engine": {"records", "config", "text", "gate", "retrieval", "knowledge", "answering",
               "observability"},
    "citadel": {"records", "config", "engine"},
    "agent": {"records", "config", "engine", "knowledge"},
    "evaluation": {"records", "config", "text", "engine", "ingest", "retrieval", "knowledge",
                   "answering", "citadel"},
    # server builds snapshots for document changes (ingest.managed).
    "server": {"records", "config", "text", "engine", "agent", "ingest", "retrieval",
               "knowledge", "answering", "observability"},
    # The Python client reads the records the server sends: it needs no server extra.
    "client": {"records", "answering", "knowledge", "server"},
    "cli": {"records", "config", "text", "engine", "agent", "ingest", "retrieval", "knowledge",
            "answering", "observability", "evaluation", "server"},
    "__main__": {"cli"},
}


def unit_of(module: str) -> str | None:
    """`citadel.answering.context` -> "answering"; `citadel` -> "citadel"; others -> None."""
    parts = module.split(".")
    if parts[0] != "citadel":
        return None
    if len(parts) == 1:
        return "citadel"
    top = SRC / parts[1]
    return parts[1] if top.is_dir() or top.with_suffix(".py").exists() else "citadel"


def imports_by_unit() -> dict[str, dict[str, set[str]]]:
    """unit -> imported unit -> the files that import it (function-level imports included)."""
    graph: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC.parent).with_suffix("")
        source = unit_of(".".join(p for p in rel.parts if p != "__init__"))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = ([f"citadel.{a.name}" for a in node.names] if node.module == "citadel"
                         else [node.module])
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                target = unit_of(name)
                if target and target != source:
                    graph[source][target].add(str(path.relative_to(SRC)))
    return graph


def find_cycle(graph: dict[str, dict[str, set[str]]]) -> list[str] | None:
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_only_the_gate_constructs_citations():
    pattern = re.compile(r"\bCitation\s*\(|Citation\.model_construct|Citation\.model_validate")
    offenders = [
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if p.relative_to(SRC).as_posix() not in {"gate.py", "records.py"}
        and pattern.search(p.read_text())
    ]
    assert offenders == []


def test_no_import_cycle_between_top_level_packages():
    assert find_cycle(imports_by_unit()) is None


def test_cycle_finder_reports_a_cycle():
    graph = {"ingest": {"knowledge": {"a.py"}}, "knowledge": {"ingest": {"b.py"}}}
    assert find_cycle(graph) == ["ingest", "knowledge", "ingest"]
    assert find_cycle({"ingest": {"knowledge": {"a.py"}}}) is None


def test_each_package_imports_only_the_stages_below_it():
    graph = imports_by_unit()
    assert set(graph) <= set(ALLOWED), f"new top-level unit: add it to ALLOWED ({set(graph)})"
    upward = {
        f"{source} -> {target}": sorted(files)
        for source, targets in graph.items()
        for target, files in targets.items()
        if target not in ALLOWED[source]
    }
    assert upward == {}
