"""Random directed graphs of hash-like node names, drawn to fill an exact token budget with whole
edge lines, and the traversals that give each operation's gold set.

An edge is printed as a line ``source -> target``. The lines are tokenised one by one, as they read
inside the edge list (each after a newline), so the list holds exactly as many tokens as its lines'
counts add up to. Whole lines are taken while the next one fits; the few tokens left, fewer than one
line, are a comment line (``# ...``) cut to the token, which :func:`parse_edges` skips, as a reader of
the list would. The gold set is computed on the printed lines alone, never on the lines drawn and
left out.
"""

from __future__ import annotations

import itertools
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from coca_eval.generation.segments import Pieces, TooShort, take

EDGE = re.compile(r"^(\S+) -> (\S+)$")
PAD = "\n# (this line closes the edge list and is not an edge)"
"""What fills the tokens left after the last whole edge line, cut to the token (repeated if longer)."""
DEGREE = 2.0  # mean out-degree of the random edges: a node's walk widens, but not past the answer cap
MAX_ANSWER = 16  # a gold set larger than this is drawn again: its answer must fit the answer budget
ATTEMPTS = 40  # further graphs drawn when one's gold set is empty or too large


class BadEdge(ValueError):
    """A line of an edge list that is neither an edge, a comment nor blank."""


def node_name(rng) -> str:
    """Ten lowercase hex digits, as the published set's names look (hash prefixes)."""
    return f"{rng.getrandbits(40):010x}"


def parse_edges(text: str) -> list[tuple[str, str]]:
    """The edges of an edge list's text: ``A -> B`` lines; blank lines and ``#`` comments skipped."""
    edges = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = EDGE.match(line)
        if found is None:
            raise BadEdge(f"line {number} of the edge list is not 'A -> B': {line[:60]!r}")
        edges.append((found[1], found[2]))
    return edges


def bfs_at_depth(edges: Iterable[tuple[str, str]], start: str, depth: int) -> set[str]:
    """The nodes whose shortest distance from ``start`` along the edges is exactly ``depth`` (a node
    met again at a greater depth stays at its first one; ``start`` is at 0, so never in the set)."""
    children: dict[str, list[str]] = {}
    for source, target in edges:
        children.setdefault(source, []).append(target)
    seen, frontier = {start}, deque([(start, 0)])
    found = set()
    while frontier:
        node, level = frontier.popleft()
        if level == depth:
            found.add(node)
            continue
        for child in children.get(node, ()):
            if child not in seen:
                seen.add(child)
                frontier.append((child, level + 1))
    return found - {start}


def parents(edges: Iterable[tuple[str, str]], node: str) -> set[str]:
    """The nodes with an edge into ``node``, the node itself left out (a self-loop is no parent)."""
    return {source for source, target in edges if target == node and source != node}


def gold(operation: str, edges: list[tuple[str, str]], node: str, depth: int) -> set[str]:
    return bfs_at_depth(edges, node, depth) if operation == "bfs" else parents(edges, node)


@dataclass
class Filled:
    """An edge list of exactly the tokens asked for, its edges in printed order and its gold set."""

    ids: list[int]
    edges: list[tuple[str, str]]
    answer: set[str]
    pad_tokens: int
    attempts: int
    nodes: int = 0
    lines: list[str] = field(default_factory=list)


def _planted(operation: str, node: str, depth: int, rng) -> list[tuple[str, str]]:
    """Edges that make the gold set non-empty: a chain ``depth`` long from the start node (BFS), or
    one to three parents of the node (parents). Other edges may still shorten a chain, so the gold
    set is checked once every edge is drawn."""
    if operation == "bfs":
        chain = [node] + [node_name(rng) for _ in range(depth)]
        return list(itertools.pairwise(chain))
    return [(node_name(rng), node) for _ in range(rng.randint(1, 3))]


def fill_graph(operation: str, node: str, depth: int, rng, budget: int, pieces: Pieces) -> Filled:
    """A random graph around ``node`` whose edge list is exactly ``budget`` tokens and whose gold set
    for the operation holds 1 to :data:`MAX_ANSWER` nodes."""
    line_of: Callable[[tuple[str, str]], list[int]] = lambda e: pieces.fresh(f"\n{e[0]} -> {e[1]}")  # noqa: E731
    for attempt in range(ATTEMPTS + 1):
        planted = _planted(operation, node, depth, rng)
        lines = [line_of(e) for e in planted]
        used = sum(map(len, lines))
        if used > budget:
            raise TooShort(used - budget, f"the {len(planted)} edges the operation needs")
        per_line = max(1.0, used / len(planted))
        pool = list(dict.fromkeys([n for e in planted for n in e]))
        wanted = max(len(pool) + 1, round((budget / per_line) / DEGREE))
        while len(pool) < wanted:
            pool.append(node_name(rng))
        edges, present, tries = list(planted), set(planted), 0
        while tries < 100 * wanted:  # a small pool may run out of new edges before the budget does
            tries += 1
            edge = (rng.choice(pool), rng.choice(pool))
            if edge[0] == edge[1] or edge in present:
                continue
            ids = line_of(edge)
            if used + len(ids) > budget:
                break
            edges.append(edge)
            present.add(edge)
            lines.append(ids)
            used += len(ids)
        order = list(range(len(edges)))
        rng.shuffle(order)
        answer = gold(operation, edges, node, depth)
        if 1 <= len(answer) <= MAX_ANSWER:
            pad = take(itertools.repeat(pieces.piece(PAD)), budget - used).ids if budget > used else []
            ids = [t for i in order for t in lines[i]] + pad
            printed = [edges[i] for i in order]
            nodes = len({n for e in printed for n in e})
            return Filled(ids, printed, answer, len(pad), attempt, nodes)
    raise TooShort(1, f"a graph whose {operation} set is 1 to {MAX_ANSWER} nodes ({ATTEMPTS} draws)")
