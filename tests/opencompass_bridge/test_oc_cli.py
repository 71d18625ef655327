"""``coca-eval opencompass``: the import subcommand and one-line errors (exit 2, no traceback)."""

import importlib.util

import forked_cli
from oc_fixtures import write_summary

from coca_eval.results import load_run

HAS_OPENCOMPASS = importlib.util.find_spec("opencompass") is not None


def run_cli(*args):
    return forked_cli.run_cli(*args, env={"COLUMNS": "200"})


def test_import_prints_table5_and_writes_the_run(tmp_path):
    out = tmp_path / "t5.json"
    result = run_cli("opencompass", "import", write_summary(tmp_path), "--output", out)
    assert result.returncode == 0, result.stderr
    assert "Reasoning" in result.stdout and "Total" in result.stdout and "286.3" in result.stdout
    assert len(load_run(out).cells) == 10


def assert_one_line_error(result, needle):
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coca-eval: error:") and needle in lines[0], result.stderr


def test_missing_summary_is_one_line(tmp_path):
    assert_one_line_error(run_cli("opencompass", "import", tmp_path / "none.csv"), "summary file not found")


def test_run_errors_are_one_line(tmp_path):
    args = ["opencompass", "--model", tmp_path, "--datasets", "COPA", "--data-root", tmp_path / "none"]
    result = run_cli(*args)
    if HAS_OPENCOMPASS:
        assert_one_line_error(result, "data root not found")
        assert_one_line_error(run_cli(*args[:-1], tmp_path), "COPA: data file missing")
    else:
        assert_one_line_error(result, "OpenCompass is not installed")


def test_missing_opencompass_is_named_with_the_install_command(monkeypatch):
    import pytest

    from coca_eval.errors import CocaEvalError
    from coca_eval.opencompass import runner

    monkeypatch.setattr(runner.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(CocaEvalError, match="OpenCompass is not installed .*install_opencompass.sh"):
        runner.require_opencompass()
