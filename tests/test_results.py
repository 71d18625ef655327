"""The result contract: coca-eval/3 is written, every committed coca-eval/1 and /2 file still loads."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.results import SCHEMA, Cell, Run, check_overwrite, load_run, read_results_text, save_run

ROOT = Path(__file__).resolve().parent.parent


def _is_results_file(path: Path) -> bool:
    """A committed results file, as against the benchmarks' JSON (a list, or a dict with no schema)."""
    data = json.loads(read_results_text(path))
    return isinstance(data, dict) and str(data.get("schema", "")).startswith("coca-eval/")


COMMITTED = sorted(
    p
    for pattern in ("*.json", "*.json.gz")
    for p in [*ROOT.glob(f"reports/**/{pattern}"), *ROOT.glob(f"tests/**/{pattern}")]
    if _is_results_file(p)
)


def test_new_runs_are_schema_3_with_device_dtype_dirty_flag_and_unit(tmp_path):
    cell = Cell(task="ppl", method="m", metric="ppl", length=8, value=2.0, device="cpu", dtype="float32")
    save_run(
        Run(git_dirty=True, config={"task": "ppl", "task_version": 1}, cells=[cell]), tmp_path / "r.json"
    )
    raw = json.loads((tmp_path / "r.json").read_text())
    assert SCHEMA == raw["schema"] == "coca-eval/3" and raw["git_dirty"] is True
    assert (raw["cells"][0]["device"], raw["cells"][0]["dtype"]) == ("cpu", "float32")
    assert raw["cells"][0]["unit"] is None  # perplexity is not accuracy-like
    assert load_run(tmp_path / "r.json").settings.task_version == 1


@pytest.mark.committed_data
@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_results_files_load(path):
    run = load_run(path)
    assert run.cells and run.settings.task is not None


def _small_run() -> Run:
    cells = [Cell(task="passkey", method="m", metric="accuracy", length=n, value=50.0, n=2) for n in (8, 16)]
    return Run(config={"task": "passkey", "task_version": 1}, cells=cells)


def test_a_gz_results_file_is_compressed_reproducible_and_reads_as_the_plain_one(tmp_path):
    run = _small_run()
    save_run(run, tmp_path / "r.json")
    save_run(run, tmp_path / "r.json.gz")
    compressed = (tmp_path / "r.json.gz").read_bytes()
    assert compressed[:2] == b"\x1f\x8b"  # really gzip, not JSON under another name
    assert gzip.decompress(compressed) == (tmp_path / "r.json").read_bytes()
    assert load_run(tmp_path / "r.json.gz") == load_run(tmp_path / "r.json")
    save_run(run, tmp_path / "again.json.gz")
    assert (tmp_path / "again.json.gz").read_bytes() == compressed  # no timestamp in the gzip header


def test_a_renamed_gz_file_still_reads_and_a_damaged_one_is_one_line(tmp_path):
    save_run(_small_run(), tmp_path / "r.json.gz")
    (tmp_path / "renamed.json").write_bytes((tmp_path / "r.json.gz").read_bytes())
    assert len(load_run(tmp_path / "renamed.json").cells) == 2
    (tmp_path / "cut.json.gz").write_bytes((tmp_path / "r.json.gz").read_bytes()[:-9])
    with pytest.raises(CocaEvalError, match=r"cut.json.gz is not readable JSON: damaged gzip"):
        load_run(tmp_path / "cut.json.gz")


def test_overwrite_guard_reads_a_gz_output(tmp_path):
    save_run(_small_run(), tmp_path / "r.json.gz")
    check_overwrite(tmp_path / "r.json.gz", "passkey", None, force=False)  # same task: resumes
    with pytest.raises(CocaEvalError, match="holds a passkey run, not ppl"):
        check_overwrite(tmp_path / "r.json.gz", "ppl", None, force=False)


@pytest.mark.parametrize("name", ["keys.json", "keys.json.gz"])
def test_a_run_resumes_from_its_journal_plain_or_gz(name, tiny_llama_dir, tmp_path, capsys):
    from coca_eval.cli import main

    out = tmp_path / name
    args = ["passkey", "--model", str(tiny_llama_dir), "--lengths", "400", "--samples", "2",
            "--max-new-tokens", "4", "--output", str(out)]  # fmt: skip
    main(args)
    assert (tmp_path / "keys.journal.jsonl").exists()
    assert (out.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    first = load_run(out)
    assert [c.status for c in first.cells] == ["ok"]
    capsys.readouterr()
    main(args)
    assert "loading" not in capsys.readouterr().err  # every cell came from the journal
    assert load_run(out).cells == first.cells
