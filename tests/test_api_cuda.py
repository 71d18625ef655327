"""ppl and passkey through the library entry points on CUDA give the CPU numbers.

Models: a tiny LLaMA, a tiny LLaMA-CoCA (slack) and a tiny NeoX-CoCA (strict, partial rotary), each
with its LM head drawn at std 0.5 so that greedy decoding has clear winners (see ``make_tiny_coca``).

Tolerances:
* fp32: perplexity and every document's NLL sum within 1e-5 relative of the CPU run; passkey outputs
  identical. Both devices compute in fp32 and differ only in summation order (~1e-6 relative in logits),
  and a greedy step flips only if its top two logits are closer than that, which the sharp head makes
  vanishingly rare.
* bf16 (weights and activations), CUDA against the CPU's bf16 run: perplexity within 1e-2 relative. Every
  bf16 rounding (2^-8 relative) of an activation can land differently on the two devices' kernels; the
  per-token NLL differences average out over the ~500 scored tokens. On CPU, bf16 and fp32 runs of
  these models differ by 0.10-0.14 % in perplexity, so two bf16 runs should differ by no more than
  that; 1 % leaves room for the kernels' different rounding and still fails a device path that
  computes something else. Passkey: at
  least 60 % of samples decode to the same output; one near-tied step in bf16 changes the rest of a
  sample, so equality of every output is not a property of correct code.
"""

from __future__ import annotations

import pytest
import torch

from coca_eval.api import Runtime, evaluate_passkey, evaluate_ppl
from coca_eval.methods import make_method
from coca_eval.passkey.params import make_passkey_params
from coca_eval.ppl.params import make_params
from tests.tiny_models import make_tiny_coca, make_tiny_llama

pytestmark = pytest.mark.gpu


def _sharpen_head(directory, std: float = 0.5):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(directory)
    with torch.no_grad():
        model.get_output_embeddings().weight.normal_(0.0, std, generator=torch.Generator().manual_seed(9))
    model.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module", params=["llama", "coca-llama", "coca-neox-strict"])
def model_dir(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(request.param)
    if request.param == "llama":
        return _sharpen_head(make_tiny_llama(directory, add_bos=False))
    if request.param == "coca-llama":
        return make_tiny_coca(directory, "llama")
    return make_tiny_coca(directory, "neox", coca_variant="strict")


def _fresh_output(model_dir, task: str, device: str, dtype: str):
    """Each run its own output, hence its own journal: the journal key leaves the device out (it changes
    no number), so a shared journal would hand the second device the first one's cells."""
    output = model_dir.parent / f"{model_dir.name}-{task}-{device}-{dtype}.json"
    output.with_suffix(".journal.jsonl").unlink(missing_ok=True)
    return output


def _ppl(model_dir, corpus_file, device: str, dtype: str):
    params = make_params(
        dict(dataset=str(corpus_file), num_docs=2, doc_tokens=300, lengths="64,128", stride=32)
    )
    method = make_method(str(model_dir), "none", None, dtype, "hf")
    output = _fresh_output(model_dir, "ppl", device, dtype)
    run = evaluate_ppl([method], params, output, runtime=Runtime(device=device))
    assert run.config["environment"]["device"] == device
    return run.cells


def _passkey(model_dir, device: str, dtype: str):
    params = make_passkey_params({"lengths": [230], "samples": 5, "max_new_tokens": 8})
    method = make_method(str(model_dir), "none", None, dtype, "hf")
    output = _fresh_output(model_dir, "passkey", device, dtype)
    cells = evaluate_passkey([method], params, output, runtime=Runtime(device=device)).cells
    return [sample["output"] for cell in cells for sample in cell.detail["samples"]]


def _doc_sums(cell) -> list[float]:
    return [doc["nll_sum"] for doc in cell.detail["docs"]]


def test_ppl_fp32_equals_cpu(model_dir, corpus_file, gpu_device):
    cpu, gpu = (
        _ppl(model_dir, corpus_file, "cpu", "float32"),
        _ppl(model_dir, corpus_file, gpu_device, "float32"),
    )
    assert [c.status for c in gpu] == ["ok", "ok"]
    for a, b in zip(cpu, gpu, strict=True):
        print(f"fp32 ppl @ {a.length}: cpu {a.value:.8f}, {gpu_device} {b.value:.8f}")
        assert b.value == pytest.approx(a.value, rel=1e-5)
        assert _doc_sums(b) == pytest.approx(_doc_sums(a), rel=1e-5)


def test_ppl_bf16_equals_cpu(model_dir, corpus_file, gpu_device):
    cpu, gpu = (
        _ppl(model_dir, corpus_file, "cpu", "bfloat16"),
        _ppl(model_dir, corpus_file, gpu_device, "bfloat16"),
    )
    for a, b in zip(cpu, gpu, strict=True):
        print(f"bf16 ppl @ {a.length}: cpu {a.value:.6f}, {gpu_device} {b.value:.6f}")
        assert b.value == pytest.approx(a.value, rel=1e-2)


def test_passkey_fp32_equals_cpu(model_dir, gpu_device):
    cpu, gpu = _passkey(model_dir, "cpu", "float32"), _passkey(model_dir, gpu_device, "float32")
    assert len(gpu) == 5 and gpu == cpu


def test_passkey_bf16_mostly_equals_cpu(model_dir, gpu_device):
    cpu, gpu = _passkey(model_dir, "cpu", "bfloat16"), _passkey(model_dir, gpu_device, "bfloat16")
    same = sum(a == b for a, b in zip(cpu, gpu, strict=True))
    print(f"bf16 passkey outputs equal to CPU: {same}/{len(cpu)}")
    assert same >= 0.6 * len(cpu)
