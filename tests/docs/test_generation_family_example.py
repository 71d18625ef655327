"""docs/plugins.md's generation family, as a reader would build it: its files written out, the
distribution installed with pip (into a target directory, without network), then the page's commands
run on a tiny model: a run with its prompts dumped, the same command resuming, two shards merged,
the report and the gate. The family names nothing of coca_eval but the generation base, the task
registry and the base's command."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from doc_blocks import ROOT, examples, install_page_distribution
from forked_cli import run_cli
from tiny_models import make_tiny_llama

PAGE = "docs/plugins.md"
TEST = "tests/docs/test_generation_family_example.py"
ALLOWED = ("coca_eval.generation", "coca_eval.taskspec", "coca_eval.cli.generation")


def coca_names(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("coca_eval"):
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("coca_eval"))
    return names


def cells_of(path: Path) -> list[tuple]:
    run = json.loads(path.read_text())
    return sorted(
        (
            c["dataset"],
            c["length"],
            c["status"],
            c["value"],
            json.dumps(c["detail"]["samples"], sort_keys=True),
        )
        for c in run["cells"]
    )


def test_the_generation_family_example_builds_runs_resumes_splits_reports_and_gates(tmp_path: Path):
    files, site = install_page_distribution(PAGE, "coca-eval-lookup", tmp_path)
    assert set(files) == {
        "coca-eval-lookup/pyproject.toml",
        "coca-eval-lookup/coca_lookup/plugin.py",
        "coca-eval-lookup/coca_lookup/family.py",
    }
    for relative in ("coca_lookup/plugin.py", "coca_lookup/family.py"):
        used = coca_names((tmp_path / "coca-eval-lookup" / relative).read_text())
        assert used and all(name.startswith(ALLOWED) for name in used), used
    model = make_tiny_llama(tmp_path / "tiny", add_bos=False, max_position_embeddings=512)
    (usage,) = [b for b in examples() if b.page == PAGE and b.mark and b.mark[1].startswith(TEST)]
    env = {"PYTHONPATH": f"{site}:{ROOT}", "HF_HUB_OFFLINE": "1"}
    results, journal, journaled = [], tmp_path / "runs" / "lookup.journal.jsonl", []
    for line in usage.body.strip().splitlines():
        command = line.split("#")[0].split()
        assert command[0] == "coca-eval"
        result = run_cli(*[str(model) if a == "DIR" else a for a in command[1:]], cwd=tmp_path, env=env)
        assert result.returncode == 0, f"{line}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        results.append(result)
        journaled.append(journal.read_text() if journal.exists() else "")

    whole = cells_of(tmp_path / "runs" / "lookup.json")
    assert [(t, n, status) for t, n, status, *_ in whole] == [
        ("lookup_number", 256, "ok"),
        ("lookup_number", 512, "ok"),
    ]
    assert cells_of(tmp_path / "runs" / "merged.json") == whole  # two shards merged are the whole run
    rows = [json.loads(line) for line in (tmp_path / "prompts" / "lookup.jsonl").open()]
    assert sorted((r["length"], r["index"]) for r in rows) == [(n, i) for n in (256, 512) for i in range(4)]
    assert all(r["prompt_tokens"] == len(r["prompt_ids"]) == r["length"] - 16 for r in rows)  # N - budget
    samples = {
        (c["length"], s["index"]): s
        for c in json.loads((tmp_path / "runs" / "lookup.json").read_text())["cells"]
        for s in c["detail"]["samples"]
    }
    for row in rows:  # the value asked for is in the prompt, at the depth the sample records
        value = samples[row["length"], row["index"]]["answers"][0]
        assert row["answers"] == [value] and f"is {value}." in row["prompt"]
    assert journaled[1] == journaled[0]  # the same command again found every cell in the journal
    assert list((tmp_path / "report").glob("*.md"))
    assert "REGRESSION" not in results[-1].stdout.splitlines()[0]  # 4 samples: inconclusive, exit 0
