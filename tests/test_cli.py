"""The command line: the result contract, bad input, and kill-then-resume."""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from forked_cli import CLI, run_cli

from coca_eval.results import load_run


def ppl_args(model, dataset, output, *extra):
    return ["ppl", "--model", model, "--dataset", dataset, "--output", output, *extra]


def test_contract_is_written(tiny_llama_dir, corpus_file, tmp_path):
    out = tmp_path / "out.json"
    result = run_cli(
        *ppl_args(
            tiny_llama_dir,
            corpus_file,
            out,
            "--lengths",
            "64,128",
            "--stride",
            "32",
            "--doc-tokens",
            "512",
            "--num-docs",
            "3",
            "--rope",
            "none",
            "--rope",
            "dynamic:2",
        )
    )
    assert result.returncode == 0, result.stderr
    raw = json.loads(out.read_text())
    assert raw["schema"] == "coca-eval/3" and raw["config"]["params"]["stride"] == 32
    run = load_run(out)
    assert [(c.method, c.length) for c in run.cells] == [
        ("tiny-llama0", 64),
        ("tiny-llama0", 128),
        ("tiny-llama0 + dynamic NTK x2", 64),
        ("tiny-llama0 + dynamic NTK x2", 128),
    ]
    for cell in run.cells:
        assert cell.status == "ok" and cell.value > 1
        assert cell.n == 3 * 511 == sum(d["tokens"] for d in cell.detail["docs"])
    assert "tiny-llama0" in result.stdout and "128" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--lengths", "32k..512"],
        ["--lengths", "abc"],
        ["--lengths", "1.5k"],
        ["--stride", "0"],
        ["--stride", "-3"],
        ["--stride", "2.5"],
        ["--num-docs", "-1"],
        ["--doc-tokens", "0"],
        ["--preset", "no-such-preset"],
        ["--model", "/no/such/model/dir"],
        ["--dataset", "/no/such/file.jsonl"],
        ["--rope", "linear:x"],
        ["--batch-size", "0"],
        ["--lengths", "8k", "--doc-tokens", "4096"],
    ],
)
def test_bad_input_is_one_line_exit_2(args, tmp_path, tiny_llama_dir, corpus_file):
    out = tmp_path / "out.json"
    base = ["--model", tiny_llama_dir, "--dataset", corpus_file]
    given = {a for a in args if a.startswith("--")}
    base = [x for pair in zip(base[::2], base[1::2], strict=False) if pair[0] not in given for x in pair]
    result = run_cli("ppl", *base, *args, "--output", out)
    assert result.returncode == 2
    assert result.stderr.startswith("coca-eval: error:") and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert not out.exists() and not out.with_suffix(".journal.jsonl").exists()


def test_corrupt_journal_lines_are_skipped_with_a_warning(tiny_llama_dir, corpus_file, tmp_path):
    out = tmp_path / "out.json"
    journal = out.with_suffix(".journal.jsonl")
    journal.write_text('{"v": 1, "kind": "part"}\nnot json at all\n{"v": 1}\n')
    result = run_cli(*ppl_args(tiny_llama_dir, corpus_file, out, "--lengths", "64", "--doc-tokens", "128"))
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert all(f"skipped unreadable line {n}" in result.stderr for n in (1, 2, 3))
    assert journal.read_text().startswith('{"v": 1, "kind": "part"}')  # nothing of the user's is touched


def test_unreadable_journal_is_one_line_exit_2(tiny_llama_dir, corpus_file, tmp_path):
    out = tmp_path / "out.json"
    out.with_suffix(".journal.jsonl").mkdir()  # a directory where the journal file should be
    result = run_cli(*ppl_args(tiny_llama_dir, corpus_file, out, "--lengths", "64", "--doc-tokens", "128"))
    assert result.returncode == 2 and "cannot read journal" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


def _journal_entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow  # a long check (over 20 s on 2 cores): runs in CI's slow suite
def test_kill_midway_then_resume_gives_identical_cells(tiny_llama_dir, corpus_file, tmp_path):
    args = ["--lengths", "32,64,128", "--stride", "4", "--doc-tokens", "1024", "--num-docs", "4"]
    reference = tmp_path / "ref.json"
    assert run_cli(*ppl_args(tiny_llama_dir, corpus_file, reference, *args)).returncode == 0

    out = tmp_path / "out.json"
    journal = out.with_suffix(".journal.jsonl")
    cmd = [*CLI, *map(str, ppl_args(tiny_llama_dir, corpus_file, out, *args))]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not (journal.exists() and len(_journal_entries(journal)) >= 3):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _journal_entries(journal)
    assert not out.exists(), "the run was meant to be killed before finishing"
    assert 3 <= len(before) < 15  # some parts done, not all 12 parts + 3 cells

    result = run_cli(*ppl_args(tiny_llama_dir, corpus_file, out, *args))
    assert result.returncode == 0, result.stderr
    after = _journal_entries(journal)
    assert after[: len(before)] == before
    parts = [(e["key"], e["part"]) for e in after if e["kind"] == "part"]
    assert len(parts) == len(set(parts)) == 12  # nothing finished was recomputed
    ours, ref = load_run(out), load_run(reference)
    assert [c.model_dump() for c in ours.cells] == [c.model_dump() for c in ref.cells]


def test_rerun_after_finish_loads_no_model(tiny_llama_dir, corpus_file, tmp_path):
    out = tmp_path / "out.json"
    args = ppl_args(
        tiny_llama_dir, corpus_file, out, "--lengths", "64", "--doc-tokens", "256", "--num-docs", "2"
    )
    assert run_cli(*args).returncode == 0
    first = load_run(out)
    again = run_cli(*args)
    assert again.returncode == 0 and "loading" not in again.stderr
    assert [c.value for c in load_run(out).cells] == [c.value for c in first.cells]


def test_tasks_and_models_listings():
    tasks = run_cli("tasks")
    assert tasks.returncode == 0 and "pg19" in tasks.stdout and "embedded" in tasks.stdout
    models = run_cli("models")
    assert models.returncode == 0 and "smollm2-135m" in models.stdout and "gemma3-270m" in models.stdout


def test_run_without_output_writes_a_timestamped_file_under_runs(tiny_llama_dir, corpus_file, tmp_path):
    """The README's first command has no ``--output``: its results still land in a file for report/gate."""
    before = time.strftime("%Y%m%d-%H%M%S")
    result = run_cli(
        "ppl", "--model", tiny_llama_dir, "--dataset", corpus_file, "--lengths", "64", "--stride", "32",
        "--doc-tokens", "256", "--num-docs", "2", cwd=tmp_path,
    )  # fmt: skip
    after = time.strftime("%Y%m%d-%H%M%S")
    assert result.returncode == 0, result.stderr
    (written,) = (tmp_path / "runs").iterdir()
    task, stamp = written.stem.split("-", 1)
    assert task == "ppl" and written.suffix == ".json" and before <= stamp <= after
    assert f"results written to {Path('runs') / written.name}" in result.stderr
    run = load_run(written)
    assert [(c.task, c.length, c.status) for c in run.cells] == [("ppl", 64, "ok")]


def test_a_mistyped_command_is_offered_the_nearest_names(capsys):
    from coca_eval.cli import main

    with pytest.raises(SystemExit) as raised:
        main(["rular"])
    assert raised.value.code == 2
    assert "Did you mean 'ruler'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["xyzzy"])
    assert "Did you mean" not in capsys.readouterr().err  # nothing near: click's own line
