"""The zoo's modules import one way: no circle among them, lazy imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

ZOO = Path(__file__).resolve().parents[2] / "coca_eval" / "zoo"


def zoo_imports(path: Path) -> set[str]:
    """The zoo modules ``path`` imports anywhere in its body (``coca_eval.zoo.X`` -> ``X``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("coca_eval.zoo."):
                found.add(node.module.split(".")[2])
            elif node.module == "coca_eval.zoo":
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("coca_eval.zoo."))
    return found - {path.stem}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every module from which an import path leads back to itself, with that path."""
    found = []
    for start in sorted(graph):
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    found.append([*path, start])
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return found


def test_the_cycle_finder_finds_a_planted_circle():
    assert cycles({"artifact": {"train"}, "train": {"artifact"}, "cli": {"train"}})[0] == [
        "artifact",
        "train",
        "artifact",
    ]


def test_no_zoo_module_imports_one_that_imports_it_back():
    graph = {path.stem: zoo_imports(path) for path in ZOO.glob("*.py")}
    assert "train" in graph["finetune"] and "artifact" in graph["train"]  # the scan sees imports
    assert cycles(graph) == []
