"""Item 10: ``--shard K/N`` with K past a cell's units is refused instead of exiting 0 having computed
nothing, and ``merge`` of shards claiming an enormous N names what is missing at once."""

from __future__ import annotations

import json

import pytest
from fault_cli import assert_error_after_progress, assert_one_line_error, run_cli
from test_gate_cli import invoke

QUICK = ["--lengths", "32", "--stride", "32", "--doc-tokens", "128", "--num-docs", "3"]


def _ppl_shard(capsys, model, corpus, output, shard: str):
    return invoke(
        capsys, "ppl", "--model", model, "--dataset", corpus, *QUICK, "--output", output, "--shard", shard
    )


@pytest.mark.parametrize("shard", ["4/4", "7/9"])
def test_a_shard_past_the_last_document_is_refused(tmp_path, capsys, tiny_llama_dir, corpus_file, shard):
    result = _ppl_shard(capsys, tiny_llama_dir, corpus_file, tmp_path / "s.json", shard)
    assert_error_after_progress(result, 2, f"--shard {shard}", "only 3 units", "at most 3 shards")
    assert not (tmp_path / "s.json").exists()


def test_a_shard_within_the_documents_still_runs(tmp_path, capsys, tiny_llama_dir, corpus_file):
    result = _ppl_shard(capsys, tiny_llama_dir, corpus_file, tmp_path / "s.json", "3/4")
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads((tmp_path / "s.json").read_text())["cells"]


def test_merge_of_shards_claiming_a_huge_count_names_the_missing_units_at_once(
    tmp_path, capsys, tiny_llama_dir, corpus_file
):
    paths = []
    for k in (1, 2):
        path = tmp_path / f"s{k}.json"
        result = _ppl_shard(capsys, tiny_llama_dir, corpus_file, path, f"{k}/3")
        assert result.returncode == 0, result.stderr[-2000:]
        raw = json.loads(path.read_text())
        raw["config"]["shard"]["count"] = 10**12
        path.write_text(json.dumps(raw))
        paths.append(path)
    result = run_cli("merge", *paths, "--output", tmp_path / "merged.json", timeout=120)
    assert_one_line_error(result, 2, "shard 3/1000000000000 missing", "units 2")
    assert not (tmp_path / "merged.json").exists()
