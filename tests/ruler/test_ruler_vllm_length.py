"""``coca-eval ruler --backend vllm`` refuses, before any model loads, lengths whose prompt and answer
budget the engine's ``--max-model-len`` or the model's learned positions cannot hold. A stand-in
``vllm`` (``tests/backends/fake_vllm.py``) takes the engine's place, and nothing may start it."""

import pytest

from coca_eval.backends.options import EngineOptions, check_lengths
from coca_eval.backends.registry import SequenceNeed
from coca_eval.cli import main
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from tests.backends import fake_vllm


@pytest.fixture
def engine(monkeypatch):
    """The fake engine class; loading a model's tokenizer side fails the test."""
    started = fake_vllm.install(monkeypatch)

    def no_load(model):
        raise AssertionError(f"{model} was loaded")

    monkeypatch.setattr("coca_eval.backends.vllm.load_local_side", no_load)
    return started


def _cli(capsys, *args) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
        raise SystemExit(0)
    return exit_info.value.code, capsys.readouterr().err


def _ruler(model, tmp_path, *extra) -> tuple[str, ...]:
    return ("ruler", "--model", str(model), "--backend", "vllm", "--samples", "1", "--chat-template", "none",
            "--output", str(tmp_path / "r.json"), *extra)  # fmt: skip


def test_a_max_model_len_below_a_length_and_its_answer_is_one_line(
    engine, capsys, tiny_llama_bos_dir, tmp_path
):
    args = _ruler(tiny_llama_bos_dir, tmp_path, "--tasks", "vt,niah_single_1", "--lengths", "512,1k")
    code, err = _cli(capsys, *args, "--length-counts", "prompt", "--max-model-len", "1151")
    assert code == 2 and err.count("\n") == 1, err
    assert "1024 + 128 answer tokens exceed --max-model-len 1151; give --max-model-len 1152" in err
    assert engine.started == [] and not list(tmp_path.iterdir())  # no engine, no journal, no results


def test_the_longest_answer_budget_of_the_tasks_asked_for_counts(tiny_llama_bos_dir):
    """With the prompt alone as N, vt's 30 answer tokens fit 1024 in 1054 positions, the NIAH tasks' 128
    need 1152: exactly. With RULER's N, 1024 positions hold both."""
    from coca_eval.api import sequence_need
    from coca_eval.ruler.params import make_ruler_params

    method = make_method(str(tiny_llama_bos_dir), "none", "tiny", "float32", "vllm")
    assert sequence_need(
        make_ruler_params({"tasks": "vt,niah_single_1", "lengths": "512,1k"})
    ) == SequenceNeed(1024, 1024)
    for tasks, total in (("vt", 1054), ("vt,niah_single_1", 1152)):
        values = {"tasks": tasks, "lengths": "512,1k", "length_counts": "prompt"}
        need = sequence_need(make_ruler_params(values))
        assert need == SequenceNeed(1024, total)
        check_lengths([method], EngineOptions(max_model_len=total), need)
        check_lengths([method], EngineOptions(), need)  # the engine is sized from the need
        with pytest.raises(CocaEvalError, match=f"give --max-model-len {total} or more"):
            check_lengths([method], EngineOptions(max_model_len=total - 1), need)


def test_learned_positions_below_a_length_and_its_answer_are_one_line(engine, capsys, tmp_path):
    """GPT-2's 1300 positions hold 1200 + vt's 30 answer tokens, not 1200 + niah_single_1's 128."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.tiny_models import make_tokenizer

    tokenizer = make_tokenizer(add_bos=False)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=1300, n_embd=32, n_layer=1, n_head=2)
    GPT2LMHeadModel(config).save_pretrained(tmp_path / "gpt2")
    tokenizer.save_pretrained(tmp_path / "gpt2")
    out = tmp_path / "out"
    out.mkdir()
    capsys.readouterr()  # the checkpoint writer's progress bar
    code, err = _cli(
        capsys,
        *_ruler(tmp_path / "gpt2", out, "--tasks", "vt,niah_single_1", "--lengths", "1200"),
        "--length-counts",
        "prompt",
    )
    assert code == 2 and err.count("\n") == 1, err
    assert "1200 + 128 answer tokens exceed the model's 1300 positions, which vLLM cannot extend" in err
    assert engine.started == [] and not list(out.iterdir())
    method = make_method(str(tmp_path / "gpt2"), "none", "gpt2", "float32", "vllm")
    check_lengths([method], EngineOptions(), SequenceNeed(1200, 1230))  # vt alone fits
