"""OpenAI's published GraphWalks rows (``--source openai``): ``openai/graphwalks`` from the hub
(``--data hub``) or a folder of its files (``--data DIR``: ``*.parquet`` and ``*.jsonl``, read in name
order), each row ``prompt``, ``answer_nodes``, ``problem_type`` (``bfs`` or ``parents``) and
``prompt_chars``.

Every row is checked when the rows are read, before any model loads: a missing column, a value of the
wrong type, or a line of the prompt's edge list that is not an edge stops the run with one line naming
the file, the row and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from coca_eval.data.published_rows import (
    file_rows,
    files_fingerprint,
    from_the_hub,
    refuse_repeats,
    require_columns,
)
from coca_eval.errors import CocaEvalError
from coca_eval.graphwalks.graphs import BadEdge, parse_edges
from coca_eval.graphwalks.prompts import EDGES_HEADER

HUB, HUB_ID = "hub", "openai/graphwalks"
COLUMNS = ("prompt", "answer_nodes", "problem_type", "prompt_chars")
PROBLEMS = ("bfs", "parents")


@dataclass(frozen=True)
class GraphRow:
    prompt: str
    answer_nodes: tuple[str, ...]
    problem_type: str
    prompt_chars: int
    where: str  # "FILE row I", as messages name it


def edge_section(prompt: str) -> str | None:
    """The edge list of the graph to operate on: after the prompt's last edges header, up to the
    operation (the examples before it have their own, smaller graph)."""
    at = prompt.rfind(EDGES_HEADER)
    if at < 0:
        return None
    rest = prompt[at + len(EDGES_HEADER) :]
    end = rest.find("Operation:")
    return rest if end < 0 else rest[:end]


def check_row(raw: Any, where: str) -> GraphRow:
    """A row as read, or one line naming the row and the field that is wrong."""
    require_columns(raw, COLUMNS, where)
    prompt, nodes, problem, chars = (raw[c] for c in COLUMNS)
    if not isinstance(prompt, str):
        raise CocaEvalError(f"{where}: prompt: not text")
    if hasattr(nodes, "tolist"):  # a numpy array, as some parquet readers give lists
        nodes = nodes.tolist()
    if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
        raise CocaEvalError(f"{where}: answer_nodes: not a list of node names")
    if not any(n.strip() for n in nodes):  # an empty answer would score full marks on nothing
        raise CocaEvalError(
            f"{where}: answer_nodes: no node name (an empty gold set earns full marks for nothing)"
        )
    if not isinstance(problem, str) or problem.lower() not in PROBLEMS:
        raise CocaEvalError(f"{where}: problem_type: {problem!r} is not bfs or parents")
    if isinstance(chars, bool) or not isinstance(chars, int):
        raise CocaEvalError(f"{where}: prompt_chars: not an integer")
    section = edge_section(prompt)
    if section is None:
        raise CocaEvalError(f"{where}: prompt: no {EDGES_HEADER!r} edge list")
    try:
        parse_edges(section)
    except BadEdge as exc:
        raise CocaEvalError(f"{where}: prompt: {exc}") from None
    return GraphRow(prompt, tuple(nodes), problem.lower(), chars, where)


def _hub_rows() -> list[tuple[str, Any]]:
    with from_the_hub(HUB_ID, "download its parquet files and pass --data with their folder"):
        from datasets import load_dataset

        table = load_dataset(HUB_ID, split="train")
    return [(f"{HUB_ID} row {i}", row) for i, row in enumerate(table)]


def _folder_files(root: Path) -> list[Path]:
    return sorted([*root.glob("*.parquet"), *root.glob("*.jsonl")])


@cache
def graph_rows(data: str) -> tuple[GraphRow, ...]:
    """Every row of ``data`` (``hub`` or a folder or file), checked."""
    if data == HUB:
        rows = tuple(check_row(row, where) for where, row in _hub_rows())
        return refuse_repeats(rows, lambda r: r.prompt, "prompt")
    root = Path(data).expanduser()
    files = [root] if root.is_file() else _folder_files(root)
    if not files:
        raise CocaEvalError(f"--data {data}: no *.parquet or *.jsonl files of GraphWalks rows")
    rows = tuple(check_row(row, f"{path} row {i}") for path in files for i, row in enumerate(file_rows(path)))
    return refuse_repeats(rows, lambda r: r.prompt, "prompt")


def folder_fingerprint(data: str) -> str:
    """What identifies local rows in a run's identity (see :func:`files_fingerprint`)."""
    root = Path(data).expanduser()
    return files_fingerprint([root] if root.is_file() else _folder_files(root))
