"""The server's modules import one another without a cycle, function-level imports included
(a cycle hidden in a function still ties two modules' import order together)."""

import ast
from collections import defaultdict
from pathlib import Path

from tests.test_structure import find_cycle

SERVER = Path(__file__).resolve().parents[2] / "src" / "citadel" / "server"


def server_imports() -> dict[str, dict[str, set[str]]]:
    """module -> imported server module -> {the importing file}."""
    graph: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in SERVER.glob("*.py"):
        source = f"citadel.server.{path.stem}".removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if target.startswith("citadel.server.") and target != source:
                    graph[source][target].add(path.name)
    return graph


def test_no_import_cycle_between_server_modules():
    assert find_cycle(server_imports()) is None


def test_the_finder_sees_function_level_imports():
    # uvicorn's configuration names the worker module's protocol; the protocol is built from
    # the connection limits: both depend on `limits`, which depends on neither.
    graph = server_imports()
    assert "citadel.server.limits" in graph["citadel.server.workers"]
    assert "citadel.server.workers" not in graph.get("citadel.server.limits", {})
