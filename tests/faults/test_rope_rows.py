"""Issue 38 item 11: every row's ``--rope`` is checked before any model loads, presets included.

``--model zoo-rope --model zoo-alibi --rope dynamic:4`` computed RoFormer's cells first and only then
refused the ALiBi row (a preset name is no directory, so its config was not read up front). The
shipped zoo checkpoints' configs are on disk: the ALiBi row is now refused before anything runs.
"""

from __future__ import annotations

from fault_cli import assert_one_line_error
from test_gate_cli import invoke


def test_an_alibi_preset_row_is_refused_before_the_rope_row_runs(tmp_path, capsys, corpus_file):
    out = tmp_path / "run.json"
    args = ["ppl", "--model", "zoo-rope", "--model", "zoo-alibi", "--rope", "dynamic:4", "--lengths", "64"]
    result = invoke(capsys, *args, "--num-docs", "1", "--doc-tokens", "128", "--dataset", corpus_file,
                    "--output", out)  # fmt: skip
    assert_one_line_error(result, 2, "ALiBi + dynamic NTK x4 (zoo-alibi): ALiBi has no rotary embedding")
    assert "loading" not in result.stderr
    assert not out.exists() and not out.with_suffix(".journal.jsonl").exists()
