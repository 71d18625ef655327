"""A backend double that answers GraphWalks prompts right, worked out from the prompt's own text: it
reads the last edge list and the operation sentence and walks the graph with networkx (none of the
family's code), so a run on it scores 100 exactly when every gold set equals that walk. ``WRONG``
holds the tasks it answers with a wrong node instead."""

from __future__ import annotations

import re

import networkx as nx

from tests.generation.digest_backend import AnsweringBackend

WRONG: set[str] = set()
HEADER = "The graph has the following edges:"


def walk(prompt: str) -> tuple[str, list[str]]:
    """The operation's kind and its node set, read from the prompt text."""
    section = prompt[prompt.rindex(HEADER) + len(HEADER) :]
    edges_text, _, operation = section.partition("Operation:")
    graph = nx.DiGraph()
    for line in edges_text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            source, arrow, target = line.split(" ")
            assert arrow == "->", line
            graph.add_edge(source, target)
    bfs = re.search(r"BFS from node (\S+) and return the nodes at exactly depth (\d+)", operation)
    if bfs:
        node, depth = bfs[1], int(bfs[2])
        distances = nx.single_source_shortest_path_length(graph, node)
        return "bfs", sorted(n for n, d in distances.items() if d == depth)
    node = re.search(r"parents of node (\S+)\.", operation)[1]
    return "parents", sorted(p for p in graph.predecessors(node) if p != node)


class OracleBackend(AnsweringBackend):
    fingerprint = "oracle"

    def answer(self, prompt) -> list[int]:
        kind, nodes = walk(self.tokenizer.decode(list(prompt), skip_special_tokens=True))
        if kind in WRONG:
            nodes = ["0000000000"]
        text = f"Walking the graph.\nFinal Answer: [{', '.join(nodes)}]"
        return self.tokenizer(text, add_special_tokens=False).input_ids


load = OracleBackend.load


def register() -> None:
    from coca_eval.backends.registry import BACKENDS, BackendEntry

    if "oracle" not in BACKENDS:
        BACKENDS.add("oracle", BackendEntry("tests.graphwalks.oracle_backend:load", "answers right"))
