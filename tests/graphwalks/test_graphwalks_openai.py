"""``--source openai`` on fixture folders written here in the published layout (parquet and jsonl):
each row lands in the shortest length that holds it and scores as graded; rows longer than every
length are skipped and counted, never cut; a malformed row is one line naming file, row and field,
exit 2, before any model loads."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from coca_eval.cli import main
from tests.graphwalks import oracle_backend

EXAMPLES = "Examples first.\nThe graph has the following edges:\nab -> cd\n\n"
EXAMPLES += "Operation:\nFind the parents of node cd.\n"


def _prompt(edges: list[tuple[str, str]], operation: str) -> str:
    lines = "\n".join(f"{a} -> {b}" for a, b in edges)
    return f"{EXAMPLES}\nThe graph has the following edges:\n{lines}\n\n\nOperation:\n{operation}\n"


def _row(edges, operation, answer, problem) -> dict:
    prompt = _prompt(edges, operation)
    return {"prompt": prompt, "answer_nodes": answer, "problem_type": problem, "prompt_chars": len(prompt)}


def _rows() -> list[dict]:
    small = [("a1", "b2"), ("b2", "c3"), ("d4", "b2")]
    big = [(f"n{i}", f"n{i + 1}") for i in range(400)]  # longer than every length asked for below
    return [
        _row(small, "Find the parents of node b2.", ["a1", "d4"], "parents"),
        _row(small, "Perform a BFS from node a1 and return the nodes at exactly depth 2.", ["c3"], "bfs"),
        _row(big, "Find the parents of node n5.", ["n4"], "parents"),
        _row(
            small * 30, "Perform a BFS from node a1 and return the nodes at exactly depth 1.", ["b2"], "bfs"
        ),
    ]


def _run(capsys, data, tmp_path, *extra):
    oracle_backend.register()
    args = ["graphwalks", "--model", "zoo-rope", "--backend", "oracle", "--source", "openai", "--data",
            str(data), "--chat-template", "none", "--output", str(tmp_path / "run.json"), *extra]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(args)
        raise SystemExit(0)
    return exit_info.value.code, capsys.readouterr().err


def test_rows_are_binned_by_length_scored_and_the_long_ones_counted(tmp_path, capsys):
    data = tmp_path / "rows"
    data.mkdir()
    rows = _rows()
    pq.write_table(pa.Table.from_pylist(rows[:2]), data / "graphwalks_a.parquet")
    (data / "graphwalks_b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[2:]))
    code, err = _run(capsys, data, tmp_path, "--lengths", "600,1200", "--samples", "5")
    # no parents row is 600-1200 tokens: that cell is an error the command names, the others score
    assert code == 2 and "parents @ 1200: no parents row of --data" in err
    cells = {(c["dataset"], c["length"]): c for c in json.loads((tmp_path / "run.json").read_text())["cells"]}
    assert cells["parents", 1200]["status"] == "error"
    assert all(c["value"] == 100.0 for (task, n), c in cells.items() if c["status"] == "ok")
    assert cells["bfs", 600]["n"] == 1 and cells["bfs", 1200]["n"] == 1
    assert cells["bfs", 600]["detail"]["skipped_too_long"] == 0
    assert cells["parents", 600]["detail"]["skipped_too_long"] == 1
    sample = cells["bfs", 1200]["detail"]["samples"][0]
    assert sample["row"].endswith("graphwalks_b.jsonl row 1") and sample["prompt_tokens"] + 256 <= 1200


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("answer_nodes"), "row 1: missing column answer_nodes"),
        (lambda r: r.update(prompt=r["prompt"].replace("a1 -> b2", "a1 => b2")), "row 1: prompt: line"),
        (lambda r: r.update(problem_type="dfs"), "row 1: problem_type: 'dfs' is not bfs or parents"),
        (lambda r: r.update(answer_nodes="a1"), "row 1: answer_nodes: not a list"),
        (lambda r: r.update(answer_nodes=[]), "row 1: answer_nodes: no node name"),
        (lambda r: r.update(answer_nodes=[" "]), "row 1: answer_nodes: no node name"),
    ],
)
def test_a_malformed_row_is_one_line_before_any_model_loads(tmp_path, capsys, change, message):
    rows = _rows()[:2]
    change(rows[1])
    data = tmp_path / "rows"
    data.mkdir()
    (data / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, err = _run(capsys, data, tmp_path, "--lengths", "1k", "--model", str(tmp_path / "absent"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "bad.jsonl " + message in err


def test_a_question_held_twice_is_one_line(tmp_path, capsys):
    """The same prompt in two rows would count one question twice in its cell."""
    rows = _rows()[:2]
    data = tmp_path / "rows"
    data.mkdir()
    (data / "twice.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*rows, rows[0]]))
    code, err = _run(capsys, data, tmp_path, "--lengths", "1k", "--model", str(tmp_path / "absent"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "twice.jsonl row 2: the same prompt as" in err and "twice.jsonl row 0" in err


def test_a_file_not_in_utf8_is_one_line(tmp_path, capsys):
    data = tmp_path / "rows"
    data.mkdir()
    (data / "latin.jsonl").write_bytes(json.dumps(_rows()[0]).encode() + b"\n\xe9\n")
    code, err = _run(capsys, data, tmp_path, "--lengths", "1k", "--model", str(tmp_path / "absent"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "is not UTF-8 text" in err
