"""Item 5: a local checkpoint's identity covers its tokenizer, so a resumed run never mixes cells
scored with another tokenizer (the weights and config alone used to decide)."""

from __future__ import annotations

import os

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
