"""RULER on the hf backend with a tiny random model: the shared-prefix route gives the naive route's
outputs, a length past the model's positions is an error cell, and nothing is truncated."""

from coca_eval.api import Runtime, evaluate
from coca_eval.methods import make_method
from coca_eval.ruler.params import make_ruler_params

TASKS = "niah_single_1,niah_multikey_1,vt"


def _run(model_dir, path, lengths, prefix_reuse=True):
    params = make_ruler_params({"tasks": TASKS, "lengths": lengths, "samples": 3, "chat_template": "none"})
    method = make_method(str(model_dir), "none", "tiny", "float32", "hf")
    return evaluate("ruler", [method], params, path, Runtime(), prefix_reuse=prefix_reuse)


def test_prefix_reuse_gives_the_naive_outputs(tiny_llama_bos_dir, tmp_path):
    fast = _run(tiny_llama_bos_dir, tmp_path / "fast.json", "1200")
    naive = _run(tiny_llama_bos_dir, tmp_path / "naive.json", "1200", prefix_reuse=False)
    assert [c.status for c in fast.cells] == ["ok"] * 3
    assert any(c.detail["prefix_reuse"] for c in fast.cells)
    outputs = lambda run: [[s["output"] for s in c.detail["samples"]] for c in run.cells]  # noqa: E731
    assert outputs(fast) == outputs(naive)
    assert [c.value for c in fast.cells] == [c.value for c in naive.cells]


def test_a_length_past_the_positions_is_an_error_cell(tmp_path):
    """Learned absolute positions (GPT-2: 1300 here) hold 1200 + vt's 30 answer tokens, not 1200 +
    the NIAH tasks' 128."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.tiny_models import make_tokenizer

    tokenizer = make_tokenizer(add_bos=False)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=1300, n_embd=32, n_layer=1, n_head=2)
    GPT2LMHeadModel(config).save_pretrained(tmp_path / "gpt2")
    tokenizer.save_pretrained(tmp_path / "gpt2")
    run = _run(tmp_path / "gpt2", tmp_path / "r.json", "1200")
    assert [(c.dataset, c.status) for c in run.cells] == [
        ("niah_single_1", "error"),
        ("niah_multikey_1", "error"),
        ("vt", "ok"),
    ]
    assert run.cells[0].detail["error"] == "1200 + 128 answer tokens exceed the model's 1300 positions"
