"""GraphWalks' prompt, in this project's words: what the operations mean, worked examples on a small
graph, the graph to operate on (the context the builder fills to the token), then the operation and
the answer's form. The tasks ``bfs`` and ``parents`` differ in the operation sentence alone.

The published prompt's parts are kept in its order (instructions, examples, the edge list, the
operation, the answer's form) and its answer line ``Final Answer: [...]``; the wording is ours, and
it states the BFS convention the published set follows since its fix of 2026-02-27: the nodes at
exactly the depth asked for (their shortest distance), the start node never among them.
"""

from __future__ import annotations

from dataclasses import dataclass

from coca_eval.generation.draws import Context, Draw
from coca_eval.graphwalks.graphs import fill_graph, node_name

ANSWER_BUDGET = 256  # room for a short working and a full answer line of up to 16 names
MAX_DEPTH = 3
EDGES_HEADER = "The graph has the following edges:"

INSTRUCTIONS = (
    """Below is a directed graph, written as a list of edges, one per line, each as "source -> target". \
After the graph comes one operation to carry out on it. Carry it out and give the set of nodes it yields.
- A breadth-first search (BFS) from a node to a depth yields the nodes whose shortest distance from \
that node is exactly that depth: neither the nodes found at smaller depths nor the node it starts from.
- The parents of a node are the nodes that have an edge leading to it; the node itself is not one.

Worked examples on a small graph:
Example graph edges:
k2 -> m7
m7 -> p4
k2 -> r9
r9 -> m7
p4 -> k2

Operation: Perform a BFS from node k2 and return the nodes at exactly depth 1.
Final Answer: [m7, r9]

Operation: Perform a BFS from node k2 and return the nodes at exactly depth 2.
Final Answer: [p4]

Operation: Find the parents of node m7.
Final Answer: [k2, r9]

The graph to operate on follows.
"""
    + EDGES_HEADER
    + "{context}"
)

QUESTION = """


Operation:
{operation}

You may work through the operation step by step. End your response with the set of nodes as its \
last line, in this form:
Final Answer: [node1, node2, node3]
"""

OPERATIONS = {
    "bfs": "Perform a BFS from node {node} and return the nodes at exactly depth {depth}.",
    "parents": "Find the parents of node {node}.",
}


@dataclass(frozen=True)
class GraphTask:
    """A GraphWalks task as the exact-length builder takes it (see ``PromptTask``)."""

    name: str
    answer_budget: int = ANSWER_BUDGET
    haystack: str = "graph"
    template: str = INSTRUCTIONS + QUESTION
    answer_prefix: str = ""
    draw: str = "coca_eval.graphwalks.prompts:draw_graph"

    def wording(self, text: str) -> str:
        return text


TASKS = {name: GraphTask(name) for name in OPERATIONS}


def task_of(name: str) -> GraphTask:
    return TASKS[name]


def draw_graph(task: GraphTask, rng, kit, key) -> Draw:
    """One sample: the node the operation starts from and (BFS) its depth, drawn first since they are
    in the question; the graph is drawn around them once the builder knows the tokens left, and the
    references are its gold set, sorted."""
    node = node_name(rng)
    depth = rng.randint(1, MAX_DEPTH) if task.name == "bfs" else 0
    operation = OPERATIONS[task.name].format(node=node, depth=depth)

    def fill(budget: int) -> Context:
        graph = fill_graph(task.name, node, depth, rng, budget, kit.pieces)
        detail = {
            "node": node,
            **({"depth": depth} if task.name == "bfs" else {}),
            "edges": len(graph.edges),
            "nodes": graph.nodes,
            "answer_size": len(graph.answer),
            "pad_tokens": graph.pad_tokens,
            "graph_draws": graph.attempts + 1,
        }
        return Context(graph.ids, 0, detail, tuple(sorted(graph.answer)))

    return Draw({"operation": operation}, (), fill)
