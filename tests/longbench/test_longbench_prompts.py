"""Prompts of ``coca-eval longbench`` through the CLI on the smoke set (LongBench's published layout),
read back from ``--dump-prompts``:

* ``--protocol longbench``: every prompt's token ids equal the ids LongBench's own ``pred.py`` gave the
  model for the same row, task and ``max_length`` with the same tokenizer (``scripts/
  longbench_prompt_ids.py``, run on THUDM/LongBench at 2e00731, committed as tests/longbench/data), chat
  template off and on; on the zoo's tokenizer, and on SmolLM2's where it is cached.
* ``--protocol exact``: every prompt is exactly N minus the task's answer budget, chat template off and
  on, and a row shorter than that is left out of N, never padded.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli
from coca_eval.longbench.tasks import NAMES, task_of
from tests.longbench import longbench_oracle_backend

DATA = Path(__file__).parent / "data"


def _run(tmp_path: Path, model: str, *args: str) -> list[dict]:
    longbench_oracle_backend.register()
    dump = tmp_path / "prompts"
    command = ["longbench", "--model", model, "--backend", "longbench-oracle", "--data", "smoke",
               "--output", str(tmp_path / "run.json"), "--dump-prompts", str(dump), *args]  # fmt: skip
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in (dump / "longbench.jsonl").read_text().splitlines()]


def _digest(ids: list[int]) -> str:
    return hashlib.sha256(json.dumps(ids).encode()).hexdigest()


@pytest.mark.parametrize(
    ("model", "expected", "template"),
    [
        ("zoo-rope", "prompt_ids_zoo.json", str(DATA / "chat.jinja")),
        ("smollm2-135m", "prompt_ids_smollm2.json", "auto"),
    ],
)
@pytest.mark.parametrize("chat", [False, True])
def test_published_prompts_are_the_ids_pred_py_builds(tmp_path, model, expected, template, chat):
    from coca_eval.models.presets import resolve_model

    if not Path(resolve_model(model)[0]).is_dir():
        pytest.skip(f"{model} is not cached")
    theirs = json.loads((DATA / expected).read_text())["prompts"]
    theirs = {(p["task"], p["index"], p["max_length"]): p for p in theirs if p["chat"] == chat}
    args = ("--protocol", "longbench", "--tasks", ",".join(NAMES), "--lengths", "1000,4000", "--samples", "2")
    rows = _run(tmp_path, model, *args, "--chat-template", template if chat else "none")
    assert len(rows) == len(theirs) == len(NAMES) * 2 * 2
    for row in rows:
        reference = theirs[(row["task"], row["index"], row["length"])]
        assert (len(row["prompt_ids"]), _digest(row["prompt_ids"])) == (
            reference["tokens"],
            reference["sha256"],
        ), (row["task"], row["index"], row["length"])


@pytest.mark.parametrize("template", ["none", str(DATA / "chat.jinja")])
def test_exact_prompts_are_n_minus_the_budget_and_short_rows_are_left_out(tmp_path, template):
    from coca_eval.longbench.data import task_rows
    from coca_eval.longbench.params import SMOKE_DIR

    tasks = ("hotpotqa", "gov_report", "trec", "samsum", "passage_retrieval_zh")
    args = (
        "--tasks",
        ",".join(tasks),
        "--lengths",
        "1k,2k,4k",
        "--samples",
        "2",
        "--chat-template",
        template,
    )
    rows = _run(tmp_path, "zoo-rope", *args)
    for row in rows:
        assert (
            row["prompt_tokens"]
            == len(row["prompt_ids"])
            == row["length"] - task_of(row["task"]).answer_budget
        )
    counts = {(r["task"], r["length"]): 0 for r in rows}
    for row in rows:
        counts[row["task"], row["length"]] += 1
    # the smoke set's first rows are about 900 words: cut at 1k, left out (not padded) at 4k
    assert all(counts[t, 1024] == 2 and counts[t, 4096] == 1 for t in tasks)
    assert all(r["answers"] != [] and r["index"] == 0 for r in rows if r["length"] == 4096)
    cells = json.loads((tmp_path / "run.json").read_text())["cells"]
    for cell in cells:
        rows_of_task = len(task_rows(str(SMOKE_DIR), cell["dataset"]))
        assert cell["detail"]["rows"] == rows_of_task >= cell.get("n", 0)
