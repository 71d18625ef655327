"""What ``coca-eval merge`` refuses, each in one line with exit code 2, and what report and gate refuse."""

import json

import pytest
from split_runs import run_task

from coca_eval.cli import main


def merge_error(capsys, *args) -> str:
    capsys.readouterr()  # what the runs before printed
    with pytest.raises(SystemExit) as exit_info:
        main(["merge", *map(str, args)])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("coca-eval: error: ")
    return err


def test_a_missing_shard_is_named_with_its_units(task_runs, tmp_path, capsys):
    _, paths = task_runs("ppl")
    out = tmp_path / "merged.json"
    err = merge_error(capsys, paths[0], paths[2], "--output", out)
    assert "shard 2/3 missing: ppl 'tiny' @ 32 units 1, 4 (and 1 more cells)" in err
    assert not out.exists()


def test_two_missing_shards_are_both_named(task_runs, tmp_path, capsys):
    _, paths = task_runs("passkey")
    err = merge_error(capsys, paths[1], "--output", tmp_path / "m.json")
    assert "shard 1/3 missing: passkey 'tiny' @ 200 units 0, 3" in err
    assert "shard 3/3 missing: passkey 'tiny' @ 200 units 2" in err


def test_shards_of_other_parameters_are_refused(task_runs, tmp_path, tiny_llama_dir, corpus_file, capsys):
    _, paths = task_runs("ppl")
    other = tmp_path / "other.json"
    run_task("ppl", other, tiny_llama_dir, corpus_file, shard=(1, 3), stride=8)
    err = merge_error(capsys, paths[0], other, paths[2], "--output", tmp_path / "m.json")
    assert err.endswith("are not shards of one run: params (stride) differ")


def test_shards_of_another_split_are_refused(task_runs, tmp_path, tiny_llama_dir, corpus_file, capsys):
    _, paths = task_runs("passkey")
    half = tmp_path / "half.json"
    run_task("passkey", half, tiny_llama_dir, corpus_file, shard=(1, 2))
    err = merge_error(capsys, paths[0], half, "--output", tmp_path / "m.json")
    assert "shard count (3 vs 2) differ" in err


def test_a_shard_given_twice_must_agree(task_runs, tmp_path, capsys):
    _, paths = task_runs("ppl")
    copy = tmp_path / "copy.json"
    copy.write_text(paths[1].read_text())
    main(["merge", *map(str, paths), str(copy), "--output", str(tmp_path / "same.json")])  # agreeing: fine

    raw = json.loads(paths[1].read_text())
    raw["cells"][0]["detail"]["parts"]["4"]["nll_sum"] += 1.0
    copy.write_text(json.dumps(raw))
    err = merge_error(capsys, *paths, copy, "--output", tmp_path / "m.json")
    assert "ppl 'tiny' @ 32 unit 4 differs between" in err and str(copy) in err


def test_a_whole_run_is_not_a_shard(task_runs, tmp_path, capsys):
    _, paths = task_runs("passkey")
    err = merge_error(capsys, tmp_path / "passkey-whole.json", *paths, "--output", tmp_path / "m.json")
    assert "passkey-whole.json is not a shard's results file" in err


@pytest.mark.parametrize("command", ["report", "gate"])
def test_report_and_gate_refuse_partial_cells_until_merged(command, task_runs, tmp_path, capsys):
    _, paths = task_runs("passkey")

    def args(path):
        if command == "report":
            return ["report", str(path), "--out", str(tmp_path / "report"), "--no-plots"]
        return ["gate", "--baseline", str(tmp_path / "passkey-whole.json"), "--candidate", str(path)]

    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(args(paths[1]))
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1, err
    assert "holds partial cells (shard 2/3 of a run); run `coca-eval merge`" in err

    merged = tmp_path / "merged.json"
    main(["merge", *map(str, paths), "--output", str(merged)])
    try:
        main(args(merged))
    except SystemExit as exc:
        assert exc.code == 0  # the gate exits 0 when the candidate does not regress
    assert "error" not in capsys.readouterr().err


def test_a_task_without_combine_cannot_be_split(tiny_llama_dir, tmp_path):
    from coca_eval.api import Runtime, evaluate
    from coca_eval.distributed.partition import Partition
    from coca_eval.distributed.share import ShardShare
    from coca_eval.errors import CocaEvalError
    from coca_eval.methods import make_method
    from coca_eval.taskspec import TASKS, TaskSpec, register_task

    register_task(TaskSpec("unsplittable", 1, "x", True, make_runner=lambda *a, **k: None))
    try:
        method = make_method(str(tiny_llama_dir), "none", "tiny", "float32", "hf")
        params = TASKS.get("ppl").make_params({"lengths": "32"})
        with pytest.raises(CocaEvalError, match="'unsplittable' cannot be split over processes"):
            evaluate(
                "unsplittable",
                [method],
                params,
                tmp_path / "o.json",
                Runtime(share=ShardShare(Partition(0, 2))),
            )
    finally:
        TASKS.remove("unsplittable")
    assert not (tmp_path / "o.json").exists()
