"""Three shards merged give the very cells one unsplit run gives (values and details), per task."""

import json

import pytest
from split_runs import cells_without_place, run_task

from coca_eval.distributed.merge import merge_shard_files
from coca_eval.results import load_run


@pytest.mark.parametrize("task", ["ppl", "passkey", "frequencies"])
def test_three_shards_merge_to_the_unsplit_run(task, task_runs):
    whole, paths = task_runs(task)
    shards = [load_run(path) for path in paths]
    assert all(cell.status == "partial" and cell.value is None for run in shards for cell in run.cells)
    assert [run.config["shard"] for run in shards] == [{"index": k, "count": 3} for k in (1, 2, 3)]
    owned = [sorted(int(i) for i in run.cells[0].detail["parts"]) for run in shards]
    assert owned == [[0, 3], [1, 4], [2]]

    merged = merge_shard_files(paths)
    assert cells_without_place(merged) == cells_without_place(whole)
    assert all(cell.status == "ok" for cell in merged.cells)
    assert "shard" not in merged.config and merged.config["params"] == whole.config["params"]
    assert [entry["shard"] for entry in merged.config["merged_from"]] == ["1/3", "2/3", "3/3"]
    assert settings(merged) == settings(whole)  # every setting the run records survives the merge


def settings(run) -> dict:
    """A run's config less what names its files and processes (journal, software, the shard files)."""
    return {k: v for k, v in run.config.items() if k not in ("journal", "environment", "merged_from")}


def test_ppl_merge_keeps_the_bos_policy_and_every_document(task_runs, tmp_path):
    whole, paths = task_runs("ppl")
    first = load_run(paths[0]).cells[0]
    context = dict(first.detail["context"])
    assert sorted(context.pop("document_hashes")) == sorted(whole.config["documents"])  # every document's
    assert context == {"stride": 16, "mode": "sliding", "bos": "never", "doc_tokens": 128}
    merged = merge_shard_files(list(reversed(paths)))  # the order of the files does not matter
    assert cells_without_place(merged) == cells_without_place(whole)
    assert merged.config["documents"] == whole.config["documents"]
    for ours, theirs in zip(merged.cells, whole.cells, strict=True):  # loss by position, exactly
        buckets = [d["positions"] for d in ours.detail["docs"]]
        assert buckets == [d["positions"] for d in theirs.detail["docs"]]
        assert sum(sum(b["tokens"]) for b in buckets) == ours.n


def test_a_cell_out_of_memory_in_one_shard_stays_oom(
    task_runs, tmp_path, tiny_llama_dir, corpus_file, monkeypatch
):
    import torch

    from coca_eval.ppl import task as ppl_task

    _, paths = task_runs("ppl")
    real = ppl_task.score_tokens

    def out_of_memory_past_32(backend, ids, plan, *args):
        if max(window.length for window in plan) > 32:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 GiB")
        return real(backend, ids, plan, *args)

    monkeypatch.setattr(ppl_task, "score_tokens", out_of_memory_past_32)
    paths[1].unlink()
    paths[1].with_suffix(".shard-2-of-3.journal.jsonl").unlink()
    run_task("ppl", paths[1], tiny_llama_dir, corpus_file, shard=(1, 3))
    merged = merge_shard_files(paths)
    assert [(c.length, c.status) for c in merged.cells] == [(32, "ok"), (64, "oom")]
    assert merged.cells[1].value is None and "out of memory" in merged.cells[1].detail["error"]


def test_merged_file_is_a_normal_results_file(task_runs, tmp_path):
    from coca_eval.results import save_run

    whole, paths = task_runs("passkey")
    out = tmp_path / "merged.json"
    save_run(merge_shard_files(paths), out)
    raw = json.loads(out.read_text())
    assert {c["status"] for c in raw["cells"]} == {"ok"} and "shard" not in raw["config"]
    assert load_run(out).cells[0].detail["samples"] == whole.cells[0].detail["samples"]
