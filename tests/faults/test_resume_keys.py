"""Item 5: a local checkpoint's identity covers its tokenizer, so a resumed run never mixes cells
scored with another tokenizer (the weights and config alone used to decide); a hub id's covers its
commit."""

from __future__ import annotations

import json
import os

import pytest
from fault_cli import cells_of, journal_entries, run_cli, tiny_ppl_args
from hub_cache import COMMIT_A, COMMIT_B, cache_snapshot, point_main_at
from tiny_models import make_tiny_llama

from coca_eval.models.presets import local_fingerprint


def _checkpoint(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 64)
    (tmp_path / "tokenizer.json").write_text('{"model": {"vocab": {"a": 0, "b": 1}}}')
    return tmp_path


def _rewrite_keeping_size_and_mtime(path, text):
    stat = path.stat()
    path.write_text(text)
    assert path.stat().st_size == stat.st_size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_changed_tokenizer_changes_the_fingerprint_even_at_the_same_size_and_mtime(tmp_path):
    ckpt = _checkpoint(tmp_path)
    before = local_fingerprint(ckpt)
    _rewrite_keeping_size_and_mtime(ckpt / "tokenizer.json", '{"model": {"vocab": {"a": 1, "b": 0}}}')
    assert local_fingerprint(ckpt) != before


def test_every_tokenizer_file_kind_counts_and_unrelated_files_do_not(tmp_path):
    ckpt = _checkpoint(tmp_path)
    before = local_fingerprint(ckpt)
    (ckpt / "README.md").write_text("notes")
    (ckpt / "train_log.jsonl").write_text("{}")
    assert local_fingerprint(ckpt) == before
    for name in (
        "tokenizer_config.json",
        "special_tokens_map.json",
        "merges.txt",
        "vocab.json",
        "tokenizer.model",
    ):
        (ckpt / name).write_text("x")
        after = local_fingerprint(ckpt)
        assert after != before, name
        before = after


@pytest.mark.slow  # a long check (over 20 s on 2 cores): runs in CI's slow suite
def test_a_hub_id_whose_main_moved_is_not_resumed_from_the_old_commit(tiny_llama_dir, corpus_file, tmp_path):
    """Item 5, hub half: the same ``org/name`` at another commit recomputes every part (the id alone
    used to key it, so the old commit's parts and cells were reused)."""
    cache, repo, out = tmp_path / "hub", "org/tiny", tmp_path / "out.json"
    cache_snapshot(cache, repo, COMMIT_A, tiny_llama_dir)
    cache_snapshot(cache, repo, COMMIT_B, make_tiny_llama(tmp_path / "retrained", add_bos=False, seed=1))
    point_main_at(cache, repo, COMMIT_A)
    env = {"HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    args = tiny_ppl_args(repo, corpus_file, out)
    assert run_cli(*args, env=env).returncode == 0
    at_a = cells_of(out)
    journal = out.with_suffix(".journal.jsonl")
    keys_a = {e["key"] for e in journal_entries(journal)}

    point_main_at(cache, repo, COMMIT_B)
    result = run_cli(*args, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(out.read_text())["config"]["weights"] == {repo: f"hub:{repo}@{COMMIT_B}"}
    new_parts = [e for e in journal_entries(journal) if e["kind"] == "part" and e["key"] not in keys_a]
    assert len(new_parts) == 2 * 2  # every document of both lengths scored again
    assert [c["value"] for c in cells_of(out)] != [c["value"] for c in at_a]
