"""README's "Did my checkpoint regress?" as printed: the baseline and candidate runs, then the gate,
which fails the zoo's PI fine-tune (exit 1) and passes the baseline against itself (exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

from doc_blocks import examples
from forked_cli import run_cli

TEST = "tests/docs/test_regression_recipe.py"


def test_the_regression_recipe_fails_the_fine_tune_and_passes_the_baseline(tmp_path: Path):
    (block,) = [b for b in examples() if b.page == "README.md" and b.mark and b.mark[1].startswith(TEST)]
    codes = []
    for line in block.body.strip().splitlines():
        program, *args = line.split()
        assert program == ".venv/bin/coca-eval"  # what the set-up command installs
        codes.append(run_cli(*args, cwd=tmp_path).returncode)
    assert codes == [0, 0, 1]
    base = json.loads((tmp_path / "base.json").read_text())
    found = {c["length"]: sum(s["correct"] for s in c["detail"]["samples"]) for c in base["cells"]}
    assert found[512] == 25  # "25 of 25 keys", as the README says
    cand = json.loads((tmp_path / "cand.json").read_text())
    assert sum(s["correct"] for c in cand["cells"] if c["length"] == 512 for s in c["detail"]["samples"]) == 0
    same = run_cli("gate", "--baseline", "base.json", "--candidate", "base.json", cwd=tmp_path)
    assert same.returncode == 0 and "INCONCLUSIVE" in same.stdout, same.stdout
    strict = run_cli("gate", "base.json", "base.json", "--require-power", cwd=tmp_path)
    assert strict.returncode == 1
    other = run_cli(
        "passkey", "--model", "zoo-rope", "--lengths", "512", "--output", "short.json", cwd=tmp_path
    )
    assert other.returncode == 0
    refused = run_cli("gate", "--baseline", "base.json", "--candidate", "short.json", cwd=tmp_path)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
