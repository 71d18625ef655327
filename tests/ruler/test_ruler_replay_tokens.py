"""``coca-eval ruler --replay``'s prompt ids and its position check, on tokenizers with and without BOS:
each logged prompt is the ids lm-eval's hf model gives it (``tokenizer(text)``, its special tokens
included), and a prompt is refused exactly where it and its answer budget (lm-eval's ``max_gen_toks``)
overrun the model's positions."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from coca_eval.backends.hf import HFBackend
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from coca_eval.ruler.replay import ReplayRunner, make_replay_params
from tests.imported.lm_eval_folders import LM_EVAL_RULER

TASKS = {"niah_single_1": "niah_single_1", "ruler_vt": "vt"}  # lm-eval's names -> ours


def _logged() -> dict[tuple[str, int], list[dict]]:
    """lm-eval's logged samples by (our task, length), in index order."""
    found: dict[tuple[str, int], list[dict]] = {}
    for theirs, ours in TASKS.items():
        for line in next(LM_EVAL_RULER.glob(f"samples_{theirs}_*.jsonl")).read_text().splitlines():
            sample = json.loads(line)
            found.setdefault((ours, sample["doc"]["max_length"]), []).append(sample)
    return {key: sorted(rows, key=lambda s: s["doc"]["index"]) for key, rows in found.items()}


def _backend(folder, limit: int | None):
    """The HF backend's tokenizer side over ``folder``'s tokenizer, with ``limit`` positions."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    backend = SimpleNamespace(tokenizer=tokenizer, position_limit=limit)
    for name in ("bos_token_id", "adds_bos", "encode"):  # HFBackend's own, on this tokenizer
        attribute = getattr(HFBackend, name)
        value = attribute.fget(backend) if isinstance(attribute, property) else attribute.__get__(backend)
        setattr(backend, name, value)
    return backend


def _built(backend) -> dict[tuple[str, int], list]:
    runner = ReplayRunner(make_replay_params(str(LM_EVAL_RULER)), None, None)
    state = runner.prepare(make_method("tiny", "none", None, "float32", "hf"), backend)
    return {key: runner.build_samples(state, *key) for key in _logged()}


@pytest.mark.parametrize("with_bos", [True, False], ids=["bos", "no-bos"])
def test_a_replayed_prompt_is_the_ids_lm_evals_hf_model_gives_it(
    with_bos, tiny_llama_bos_dir, tiny_llama_dir
):
    folder = tiny_llama_bos_dir if with_bos else tiny_llama_dir
    backend = _backend(folder, None)
    built = _built(backend)
    for key, samples in _logged().items():
        for sample, ours in zip(samples, built[key], strict=True):
            theirs = backend.tokenizer(sample["arguments"]["gen_args_0"]["arg_0"]).input_ids
            assert (theirs[0] == 0) is with_bos  # "<s>", the fixture tokenizer's id 0, where it adds BOS
            assert ours.ids == theirs and ours.detail["prompt_tokens"] == len(theirs)


def test_a_prompt_is_refused_exactly_where_it_and_its_answer_budget_overrun_the_model(tiny_llama_bos_dir):
    tokenizer = _backend(tiny_llama_bos_dir, None).tokenizer
    need = max(
        len(tokenizer(s["arguments"]["gen_args_0"]["arg_0"]).input_ids)
        + s["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"]
        for samples in _logged().values()
        for s in samples
    )
    assert _built(_backend(tiny_llama_bos_dir, need))  # every prompt fits with its budget
    with pytest.raises(CocaEvalError, match=r"answer tokens exceed the model's \d+ positions"):
        _built(_backend(tiny_llama_bos_dir, need - 1))
