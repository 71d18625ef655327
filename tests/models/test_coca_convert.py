"""Checkpoint conversion: the reference code's LLaMA-CoCA and NeoX-CoCA layouts, plain LLaMA -> CoCA, and
one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from tiny_models import make_tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer

import coca_eval.models  # noqa: F401  (registers the CoCA model types)
from coca_eval.errors import CocaEvalError
from coca_eval.models.coca import CocaLlamaConfig, CocaLlamaForCausalLM, CocaNeoXConfig, CocaNeoXForCausalLM
from coca_eval.models.convert import convert_from_llama, convert_reference

SHAPE = dict(vocab_size=96, hidden_size=128, intermediate_size=192, num_hidden_layers=2)
SHAPE["num_attention_heads"] = 4
TOKENS = torch.randint(0, 96, (2, 20), generator=torch.Generator().manual_seed(0))


def random_model(model_class, config) -> torch.nn.Module:
    """A random model at attention std 0.15 whose weights are exactly representable in float16."""
    torch.manual_seed(0)
    model = model_class(config).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "proj" in name or "query_key_value" in name:
                param.normal_(0.0, 0.15)
            param.copy_(param.half().float())
    return model


def write_reference(directory: Path, config: dict, state: dict[str, torch.Tensor]) -> Path:
    """A checkpoint as the reference code saved it: stock model_type, float16 pytorch_model.bin, tokenizer."""
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({**config, "torch_dtype": "float16"}))
    torch.save({k: v.half() for k, v in state.items()}, directory / "pytorch_model.bin")
    make_tokenizer(add_bos=False).save_pretrained(directory)
    return directory


def logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model.float()(TOKENS).logits


def test_reference_llama_coca_loads_with_the_same_logits(tmp_path):
    ours = random_model(CocaLlamaForCausalLM, CocaLlamaConfig(**SHAPE, num_key_value_heads=2))
    legacy = {**SHAPE, "num_key_value_heads": 2, "model_type": "llama", "architectures": ["LLaMAForCausalLM"]}
    legacy["transformers_version"] = "4.27.0.dev0"
    source = write_reference(tmp_path / "ref", legacy, ours.state_dict())
    out = convert_reference(source, tmp_path / "out")
    loaded = AutoModelForCausalLM.from_pretrained(out)
    assert isinstance(loaded, CocaLlamaForCausalLM) and loaded.dtype == torch.float16
    assert json.loads((out / "config.json").read_text())["model_type"] == "coca_llama"
    assert torch.equal(logits(loaded), logits(ours))
    encode = [AutoTokenizer.from_pretrained(d).encode("the sky") for d in (out, source)]
    assert encode[0] == encode[1]


def test_reference_neox_coca_loads_with_the_same_logits(tmp_path):
    ours = random_model(CocaNeoXForCausalLM, CocaNeoXConfig(**SHAPE, rotary_pct=0.5, rope_theta=10000.0))
    state = dict(ours.state_dict())
    for layer in range(2):  # buffers the reference NeoX code (transformers 4.26) also saved
        prefix = f"gpt_neox.layers.{layer}.attention."
        state[prefix + "rotary_emb.inv_freq"] = torch.ones(8)
        state[prefix + "bias"] = torch.ones(1, 1, 4, 4).tril()
        state[prefix + "masked_bias"] = torch.tensor(-1e9)
    legacy = {**SHAPE, "model_type": "gpt_neox", "rotary_pct": 0.5, "rotary_emb_base": 10000}
    source = write_reference(tmp_path / "ref", {**legacy, "rope_scaling": None}, state)
    out = convert_reference(source, tmp_path / "out", variant="slack")
    loaded = AutoModelForCausalLM.from_pretrained(out)
    assert isinstance(loaded, CocaNeoXForCausalLM)
    assert loaded.config.rope_parameters["partial_rotary_factor"] == 0.5
    assert torch.equal(logits(loaded), logits(ours))


def test_from_llama_starts_t_proj_at_k_proj(tiny_llama_dir, tmp_path):
    out = convert_from_llama(tiny_llama_dir, tmp_path / "coca", variant="strict")
    source = AutoModelForCausalLM.from_pretrained(tiny_llama_dir).state_dict()
    with safe_open(str(out / "model.safetensors"), framework="pt") as handle:
        saved = {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118
    assert not any("k_proj" in k for k in saved)
    for key, value in source.items():
        assert torch.equal(saved[key.replace("k_proj", "t_proj")], value), key
    model = AutoModelForCausalLM.from_pretrained(out)
    assert isinstance(model, CocaLlamaForCausalLM) and model.config.coca_variant == "strict"
    prompt = AutoTokenizer.from_pretrained(out)("the sky", return_tensors="pt").input_ids
    assert model.generate(prompt, max_new_tokens=4, do_sample=False).shape[1] == prompt.shape[1] + 4


def _broken(tmp_path: Path, tiny_llama_dir: Path, case: str):
    """Build the bad input of one case and return the call that must fail."""
    bad = tmp_path / "bad"
    if case == "missing":
        return lambda: convert_reference(tmp_path / "nope", tmp_path / "out")
    bad.mkdir()
    if case == "no-config":
        return lambda: convert_reference(bad, tmp_path / "out")
    if case == "bad-json":
        (bad / "config.json").write_text("{not json")
        return lambda: convert_reference(bad, tmp_path / "out")
    if case == "gpt2":
        (bad / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
        return lambda: convert_reference(bad, tmp_path / "out")
    if case == "no-weights":
        (bad / "config.json").write_text(json.dumps({"model_type": "llama"}))
        return lambda: convert_reference(bad, tmp_path / "out")
    if case == "plain-to-reference":
        return lambda: convert_reference(tiny_llama_dir, tmp_path / "out")
    if case == "coca-to-from-llama":
        converted = convert_from_llama(tiny_llama_dir, tmp_path / "coca")
        (converted / "config.json").write_text(json.dumps({**SHAPE, "model_type": "llama"}))
        return lambda: convert_from_llama(converted, tmp_path / "out")
    if case == "neox-to-from-llama":
        (bad / "config.json").write_text(json.dumps({"model_type": "gpt_neox"}))
        return lambda: convert_from_llama(bad, tmp_path / "out")
    if case == "variant":
        return lambda: convert_from_llama(tiny_llama_dir, tmp_path / "out", variant="loose")
    if case == "out-is-src":
        return lambda: convert_from_llama(tiny_llama_dir, tiny_llama_dir)
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "no-config",
        "bad-json",
        "gpt2",
        "no-weights",
        "plain-to-reference",
        "coca-to-from-llama",
        "neox-to-from-llama",
        "variant",
        "out-is-src",
    ],
)
def test_bad_input_is_a_one_line_error(case, tmp_path, tiny_llama_dir):
    call = _broken(tmp_path, tiny_llama_dir, case)
    with pytest.raises(CocaEvalError) as error:
        call()
    assert "\n" not in str(error.value) and str(error.value)
    assert not (tmp_path / "out").exists()


def test_plain_llama_given_as_a_reference_checkpoint_names_the_option(tiny_llama_dir, tmp_path):
    """The message names what the user types (``--from-llama``), not a Python function."""
    with pytest.raises(CocaEvalError, match="coca-eval convert --from-llama") as error:
        convert_reference(tiny_llama_dir, tmp_path / "out")
    assert "convert_from_llama" not in str(error.value)
