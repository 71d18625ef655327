"""p-RoPE and ALiBi checkpoints load with the Auto classes and go through the command line like LLaMA."""

from __future__ import annotations

import pytest
import torch
from test_cli import run_cli
from tiny_models import make_tiny_llama, tiny_corpus_text
from transformers import AutoConfig, AutoModelForCausalLM

from coca_eval.models.alibi import AlibiLlamaConfig, AlibiLlamaForCausalLM
from coca_eval.models.alibi import register as register_alibi
from coca_eval.models.prope import PRopeLlamaConfig, PRopeLlamaForCausalLM
from coca_eval.models.prope import register as register_prope
from coca_eval.results import load_run

TYPES = {
    "prope": (PRopeLlamaConfig, PRopeLlamaForCausalLM, {"rope_fraction": 0.75}),
    "alibi": (AlibiLlamaConfig, AlibiLlamaForCausalLM, {}),
}


def save_tiny(kind: str, directory) -> str:
    config_class, model_class, fields = TYPES[kind]
    make_tiny_llama(directory, add_bos=True, config_class=config_class, model_class=model_class, **fields)
    return str(directory)


@pytest.fixture(scope="module")
def book_txt(tmp_path_factory):
    path = tmp_path_factory.mktemp("book") / "book.txt"
    path.write_text(tiny_corpus_text(n_docs=1, words_per_doc=1200, seed=3)[0], encoding="utf-8")
    return path


def ppl(model_dir, book, output, *ropes: str, lengths: str = "64,512"):
    rope_args = [arg for rope in ropes for arg in ("--rope", rope)]
    return run_cli(
        "ppl", "--model", model_dir, *rope_args, "--dataset", book, "--lengths", lengths, "--stride", "32",
        "--doc-tokens", "512", "--num-docs", "1", "--output", output,
    )  # fmt: skip


@pytest.mark.parametrize("kind", list(TYPES))
def test_save_and_load_with_the_auto_classes(kind, tmp_path):
    register_prope(), register_alibi()  # a second registration is harmless
    config_class, model_class, fields = TYPES[kind]
    config = config_class(vocab_size=64, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, **fields)  # fmt: skip
    torch.manual_seed(0)
    model = model_class(config).eval()
    model.save_pretrained(tmp_path)
    loaded_config = AutoConfig.from_pretrained(tmp_path)
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    assert type(loaded_config) is config_class and type(loaded) is model_class
    assert all(getattr(loaded_config, name) == value for name, value in fields.items())
    tokens = torch.randint(0, 64, (1, 30), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.equal(loaded(tokens).logits, model(tokens).logits)


def test_prope_ppl_end_to_end_with_a_rope_patch(book_txt, tmp_path):
    out = tmp_path / "ppl.json"
    result = ppl(save_tiny("prope", tmp_path / "prope"), book_txt, out, "none", "dynamic:2")
    assert result.returncode == 0, result.stderr
    cells = load_run(out).cells
    assert [c.status for c in cells] == ["ok"] * 4
    assert cells[0].value == cells[2].value and cells[1].value != cells[3].value  # NTK acts past 256


def test_alibi_ppl_and_passkey_end_to_end(book_txt, tmp_path):
    model_dir = save_tiny("alibi", tmp_path / "alibi")
    out = tmp_path / "ppl.json"
    result = ppl(model_dir, book_txt, out, "none")
    assert result.returncode == 0, result.stderr
    cells = load_run(out).cells
    assert [c.status for c in cells] == ["ok"] * 2 and all(c.value > 1 for c in cells)

    passkey = run_cli(
        "passkey", "--model", model_dir, "--lengths", "300", "--samples", "3", "--max-new-tokens", "5",
        "--output", tmp_path / "pk.json",
    )  # fmt: skip
    assert passkey.returncode == 0, passkey.stderr
    cell = load_run(tmp_path / "pk.json").cells[0]
    assert cell.status == "ok" and cell.n == 3 and cell.detail["prefix_reuse"] is True


def test_alibi_refuses_a_rope_patch_before_evaluating_anything(book_txt, tmp_path):
    out = tmp_path / "ppl.json"
    result = ppl(save_tiny("alibi", tmp_path / "alibi"), book_txt, out, "none", "dynamic:2")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "ALiBi has no rotary embedding" in result.stderr
    assert not out.exists() and not out.with_suffix(".journal.jsonl").exists()  # refused up front
