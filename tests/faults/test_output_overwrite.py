"""Item 4: an --output holding another task's or protocol's run is never replaced silently."""

from __future__ import annotations

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell, Run, check_overwrite, load_run, save_run


@pytest.fixture
def ppl_output(tmp_path, tiny_llama_dir, corpus_file):
    """A finished ppl run's results file, and the arguments that made it."""
    args = ["--model", tiny_llama_dir, "--dataset", corpus_file, "--lengths", "32", "--stride", "16"]
    args += ["--doc-tokens", "128", "--num-docs", "2", "--seed", "0", "--mode", "sliding", "--bos", "auto"]
    out = tmp_path / "x.json"
    cell = Cell(task="ppl", method="m", metric="ppl", length=32, value=5.0)
    save_run(Run(config={"task": "ppl", "params": {"dataset": "somewhere"}}, cells=[cell]), out)
    return out, args


def test_passkey_onto_a_ppl_output_exits_2_and_keeps_it(ppl_output, capsys, tiny_llama_dir):
    out, _ = ppl_output
    before = out.read_bytes()
    result = invoke(capsys, "passkey", "--model", tiny_llama_dir, "--output", out, "--lengths", "64")
    assert_one_line_error(result, 2, "holds a ppl run, not passkey", "--force")
    assert out.read_bytes() == before


def test_ppl_with_other_parameters_onto_a_ppl_output_exits_2(ppl_output, capsys):
    out, args = ppl_output
    before = out.read_bytes()
    result = invoke(capsys, "ppl", *args, "--output", out)
    assert_one_line_error(result, 2, "holds a ppl run with other", "dataset")
    assert out.read_bytes() == before


def test_a_file_that_is_not_a_results_file_is_refused_unless_forced(tmp_path, capsys, tiny_llama_dir):
    notes = tmp_path / "notes.json"
    notes.write_text("my notes, not a run")
    with pytest.raises(CocaEvalError, match="not a coca-eval results file"):
        check_overwrite(notes, "ppl", {}, force=False)
    assert check_overwrite(notes, "ppl", {}, force=True) is None  # --force: the user means it
    result = invoke(capsys, "passkey", "--model", tiny_llama_dir, "--output", notes, "--lengths", "64")
    assert_one_line_error(result, 2, "not a coca-eval results file", "--force")
    assert notes.read_text() == "my notes, not a run"


def test_same_task_and_parameters_resume_in_place(tmp_path, capsys, tiny_llama_dir, corpus_file):
    """Rerunning the command that wrote ``--output`` is not refused: it exits 0 and the file still
    holds that run, with the same configuration and the same cells."""
    args = ["--model", tiny_llama_dir, "--dataset", corpus_file, "--lengths", "32", "--stride", "16"]
    args += ["--doc-tokens", "128", "--num-docs", "2", "--seed", "0", "--output", tmp_path / "x.json"]
    first = invoke(capsys, "ppl", *args)
    assert first.returncode == 0, first.stderr
    before = load_run(tmp_path / "x.json")
    assert before.cells and all(cell.task == "ppl" for cell in before.cells)
    again = invoke(capsys, "ppl", *args)
    assert again.returncode == 0, again.stderr
    after = load_run(tmp_path / "x.json")
    assert after.config == before.config
    assert [(c.method, c.length, c.value) for c in after.cells] == [
        (c.method, c.length, c.value) for c in before.cells
    ]


PASSKEY = ["passkey", "--lengths", "256", "--samples", "2", "--max-new-tokens", "6"]


def test_another_method_onto_a_baseline_exits_2_and_keeps_it(tmp_path, capsys):
    """zoo-coca-slack's run given zoo-rope's results file (same task, same settings) used to replace it
    and exit 0; it is refused, the baseline untouched, and ``--force`` still replaces it."""
    base = tmp_path / "base.json"
    first = invoke(capsys, *PASSKEY, "--model", "zoo-rope", "--output", base)
    assert first.returncode == 0, first.stderr
    before = base.read_bytes()
    other = invoke(capsys, *PASSKEY, "--model", "zoo-coca-slack", "--output", base)
    assert_one_line_error(
        other, 2, "holds a passkey run of other methods", "(zoo-rope), not", "(zoo-coca-slack)", "--force"
    )
    assert base.read_bytes() == before
    forced = invoke(capsys, *PASSKEY, "--model", "zoo-coca-slack", "--output", base, "--force")
    assert forced.returncode == 0, forced.stderr
    assert {cell.method for cell in load_run(base).cells} == {"RoFormer + CoCA"}


def test_a_subset_of_the_methods_is_refused_and_the_same_rows_in_another_order_resume(tmp_path, capsys):
    """Dropping a row would drop its cells from the file; listing the same rows in another order is the
    same run, which resumes from its journal to the same cells."""
    out = tmp_path / "two.json"
    rows = ["--model", "zoo-rope", "--model", "zoo-nope"]
    first = invoke(capsys, *PASSKEY, *rows, "--output", out)
    assert first.returncode == 0, first.stderr
    before = load_run(out)
    fewer = invoke(capsys, *PASSKEY, "--model", "zoo-rope", "--output", out)
    assert_one_line_error(fewer, 2, "holds a passkey run of other methods", "--force")
    again = invoke(capsys, *PASSKEY, "--model", "zoo-nope", "--model", "zoo-rope", "--output", out)
    assert again.returncode == 0, again.stderr
    after = load_run(out)
    key = lambda cell: (cell.method, cell.length)  # noqa: E731
    assert [(key(c), c.value, c.n) for c in sorted(after.cells, key=key)] == [
        (key(c), c.value, c.n) for c in sorted(before.cells, key=key)
    ]
