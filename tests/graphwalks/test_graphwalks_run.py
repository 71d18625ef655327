"""Whole ``graphwalks`` runs through the CLI on the zoo's tokenizer and a backend double that walks
each prompt's printed graph with networkx: every generated prompt is exactly N minus the answer budget
(read back from ``--dump-prompts``), every gold set equals a traversal of the edges the prompt prints,
chat template on and off; a rerun resumes with nothing to decode."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli, main
from tests.graphwalks import oracle_backend
from tests.graphwalks.oracle_backend import HEADER

BUDGET = 256
TEMPLATE = (
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n{% endif %}"
)


def _invoke(*args: str):
    oracle_backend.register()
    return CliRunner().invoke(cli, ["graphwalks", "--model", "zoo-rope", "--backend", "oracle", *args])


def _main(capsys, *args: str) -> tuple[int, str]:
    """Exit code and stderr of the command as a shell runs it (a refusal is one line, exit 2)."""
    oracle_backend.register()
    with pytest.raises(SystemExit) as exit_info:
        main(["graphwalks", "--backend", "oracle", *args])
        raise SystemExit(0)
    return exit_info.value.code, capsys.readouterr().err


def _edges(prompt: str) -> list[tuple[str, str]]:
    """The printed edges of the graph to operate on, parsed here from the prompt's text."""
    section = prompt[prompt.rindex(HEADER) + len(HEADER) : prompt.rindex("\nOperation:")]
    lines = [line.strip() for line in section.split("\n")]
    edges = [tuple(line.split(" -> ")) for line in lines if line and not line.startswith("#")]
    assert all(len(edge) == 2 and " " not in edge[0] + edge[1] for edge in edges), edges
    return edges


def _traverse(prompt: str) -> list[str]:
    """The operation's set by plain breadth-first search / predecessor scan over the printed edges."""
    edges, operation = _edges(prompt), prompt[prompt.rindex("\nOperation:") :].split("\n")[2]
    words = operation.rstrip(".").split()
    node = words[words.index("node") + 1]
    if operation.startswith("Find the parents"):
        return sorted({a for a, b in edges if b == node and a != node})
    depth, seen, frontier = int(words[-1]), {node: 0}, deque([node])
    while frontier:
        current = frontier.popleft()
        for a, b in edges:
            if a == current and b not in seen:
                seen[b] = seen[current] + 1
                frontier.append(b)
    return sorted(n for n, d in seen.items() if d == depth)


@pytest.mark.parametrize("chat", ["none", "template"])
def test_generated_prompts_are_exact_and_their_gold_sets_are_the_printed_graphs(tmp_path, chat):
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE)
    chat_option = "none" if chat == "none" else str(template)
    lengths, dump = (2048, 3072), tmp_path / "prompts"
    args = ("--lengths", "2k,3k", "--samples", "4", "--seed", "7", "--chat-template", chat_option)
    result = _invoke(*args, "--output", str(tmp_path / "run.json"), "--dump-prompts", str(dump))
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (dump / "graphwalks.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * 2 * 4
    for row in rows:
        assert row["length"] in lengths
        assert row["prompt_tokens"] == len(row["prompt_ids"]) == row["length"] - BUDGET
        assert ("### assistant:" in row["prompt"]) is (chat == "template")
        assert row["answers"] and row["answers"] == _traverse(row["prompt"]), row["index"]
    run = json.loads((tmp_path / "run.json").read_text())
    assert [c["value"] for c in run["cells"]] == [100.0] * 4
    sample = run["cells"][0]["detail"]["samples"][0]
    assert sample["answer_size"] == len(sample["answers"]) and sample["edges"] > 3


def test_a_rerun_resumes_and_a_wrong_answer_scores_0(tmp_path, monkeypatch):
    output = tmp_path / "run.json"
    args = ("--lengths", "2k", "--samples", "3", "--chat-template", "none", "--output", str(output))
    assert _invoke(*args).exit_code == 0
    first = json.loads(output.read_text())
    calls = []
    monkeypatch.setattr(oracle_backend.OracleBackend, "generate_greedy", lambda *a, **k: calls.append(a))
    result = _invoke(*args)
    assert result.exit_code == 0, result.output
    assert not calls and json.loads(output.read_text())["cells"] == first["cells"]
    monkeypatch.undo()
    oracle_backend.WRONG.add("parents")
    try:
        result = _invoke(*args[:-1], str(tmp_path / "wrong.json"))
    finally:
        oracle_backend.WRONG.clear()
    cells = {c["dataset"]: c["value"] for c in json.loads((tmp_path / "wrong.json").read_text())["cells"]}
    assert cells == {"bfs": 100.0, "parents": 0.0}


def test_a_length_below_the_fixed_parts_is_one_line_before_any_model_loads(tmp_path, capsys):
    code, err = _main(capsys, "--lengths", "300", "--model", str(tmp_path / "absent"))
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "length 300 is below the shortest graphwalks" in err


def test_the_quick_preset_is_offline_and_names_its_model():
    from coca_eval.presets import get_preset

    preset = get_preset("graphwalks-quick", task="graphwalks")
    assert preset.params["source"] == "generate" and preset.methods == ({"model": "smollm2-135m"},)
    assert Path(preset.path).name == "graphwalks_quick.yaml"
