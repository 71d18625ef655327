"""Batched greedy decoding against batch 1: the same tokens for every row, on every model kind the zoo
ships, CoCA's GPT-NeoX form and a sliding-window model, through both prefill routes, with rows that stop
at different steps; a row with non-finite logits fails alone."""

import pytest
import torch

from coca_eval.backends import hf_generation
from coca_eval.backends.hf import load_hf_backend
from coca_eval.backends.hf_generation import GreedyDecoder, decode_prompts
from coca_eval.backends.stopping import StopRule
from coca_eval.errors import NonFiniteOutput
from coca_eval.methods import make_method
from coca_eval.models.presets import resolve_model
from tests.backends.shared_prefix_prompts import LENGTH, prompts_sharing_prefix
from tests.bare_runs import run_cli, sample_answers
from tests.tiny_models import make_tiny_coca, make_tiny_gemma3

ZOO = ["zoo-rope", "zoo-coca-slack", "zoo-coca-strict", "zoo-alibi", "zoo-prope-0.75", "zoo-nope"]


def _model_dir(name: str, tmp_path_factory):
    if name == "coca-gpt-neox":
        return make_tiny_coca(tmp_path_factory.mktemp("neox"), "gpt_neox")
    if name == "gemma3-sliding":
        return make_tiny_gemma3(tmp_path_factory.mktemp("gemma"), sliding_window=64)
    return resolve_model(name)[0]


def _ragged_stop(budget: int = 14) -> StopRule:
    """Rows stop at different steps (on their text's length), and some run to the budget."""
    return StopRule(budget, decided=lambda text: len(text) % 9 == 4)


def _one_by_one(backend, prompts, stop) -> list[list[int]]:
    decoder = GreedyDecoder(backend, stop, batch_size=1)
    return [decoder.naive(p) for p in prompts]


def _batched(backend, prompts, prefixes, stop, batch: int, reuse: bool) -> list[list[int]]:
    answers: dict[int, list[int]] = {}
    decoder = GreedyDecoder(backend, stop, batch_size=batch)
    decode_prompts(decoder, prompts, prefixes, answers.__setitem__, prefix_reuse=reuse)
    return [answers[i] for i in range(len(prompts))]


@pytest.mark.parametrize("name", [*ZOO, "coca-gpt-neox", "gemma3-sliding"])
@pytest.mark.usefixtures("prefix_route_always")
def test_batched_rows_give_batch_one_tokens(name, tmp_path_factory):
    backend = load_hf_backend(
        make_method(str(_model_dir(name, tmp_path_factory)), "none", None, "float32", "hf")
    )
    prompts, prefixes = prompts_sharing_prefix(backend.model.config.get_text_config().vocab_size)
    stop = _ragged_stop()
    alone = _one_by_one(backend, prompts, stop)
    assert len({len(a) for a in alone}) > 1, "the rows must stop at different steps"
    for batch in (3, 7):
        for reuse in (True, False):
            assert _batched(backend, prompts, prefixes, stop, batch, reuse) == alone, (batch, reuse)


def test_holding_the_scaling_changes_the_answers_here(sharp_llama_dir):
    """The premise of the next test: on this model a held scaling and a rescaled one answer apart."""
    backend = load_hf_backend(make_method(str(sharp_llama_dir), "dynamic:2", None, "float32", "hf"))
    prompts, _ = prompts_sharing_prefix(len(backend.tokenizer))
    held = [GreedyDecoder(backend, 14, hold_dynamic_rope=True).naive(p) for p in prompts]
    rescaled = [GreedyDecoder(backend, 14).naive(p) for p in prompts]
    assert held != rescaled


@pytest.mark.parametrize("hold", [False, True])
@pytest.mark.usefixtures("prefix_route_always")
def test_batched_rows_under_dynamic_rope_give_batch_one_tokens(sharp_llama_dir, hold):
    """Prompts past the trained 256 positions: the scaling is the prompt's in every route, and held
    through the answer in every route when asked."""
    backend = load_hf_backend(make_method(str(sharp_llama_dir), "dynamic:2", None, "float32", "hf"))
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer))
    stop = _ragged_stop()
    alone = [GreedyDecoder(backend, stop, hold_dynamic_rope=hold).naive(p) for p in prompts]
    for reuse in (True, False):
        answers: dict[int, list[int]] = {}
        decoder = GreedyDecoder(backend, stop, hold_dynamic_rope=hold, batch_size=4)
        decode_prompts(decoder, prompts, prefixes, answers.__setitem__, prefix_reuse=reuse)
        assert [answers[i] for i in range(len(prompts))] == alone, reuse


def test_rows_prefilled_in_parts_are_stacked_into_one_batch(tiny_llama_dir, monkeypatch):
    """A long prompt's rows are prefilled a few at a time and decoded as one batch."""
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer))
    stop = _ragged_stop()
    alone = _one_by_one(backend, prompts, stop)
    monkeypatch.setattr(hf_generation, "PREFILL_TOKENS", 2 * LENGTH)  # two rows per forward
    assert _batched(backend, prompts, prefixes, stop, 7, reuse=False) == alone


@pytest.mark.usefixtures("prefix_route_always")
def test_a_non_finite_row_fails_alone_and_names_its_sample(tiny_llama_dir, tmp_path):
    """One prompt holds a token whose embedding is NaN: the others are answered as at batch 1, then the
    error names that prompt's sample."""
    from transformers import AutoModelForCausalLM

    poisoned_token = 2
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight[poisoned_token] = float("nan")
    model.save_pretrained(tmp_path)
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    backend.model = model.eval()
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer), n=5)
    prompts[3][-1] = poisoned_token
    healthy = [i for i in range(5) if i != 3]
    alone = _one_by_one(backend, [prompts[i] for i in healthy], _ragged_stop())
    for reuse in (True, False):
        answers: dict[int, list[int]] = {}
        decoder = GreedyDecoder(backend, _ragged_stop(), batch_size=5)
        with pytest.raises(NonFiniteOutput, match="sample 3: non-finite logits at answer token 1"):
            decode_prompts(decoder, prompts, prefixes, answers.__setitem__, prefix_reuse=reuse)
        assert sorted(answers) == healthy
        assert [answers[i] for i in healthy] == alone


def test_batch_size_below_one_is_refused(tiny_llama_dir):
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    with pytest.raises(ValueError, match="at least 1"):
        GreedyDecoder(backend, 4, batch_size=0)


@pytest.mark.parametrize("rope", ["none", "dynamic:2"])
@pytest.mark.usefixtures("prefix_route_always")
def test_prompts_of_several_prefix_groups_decode_in_one_batch(tiny_llama_bos_dir, rope):
    """Two cells' prompts of one length, each cell with its own shared prefix, interleaved in the call:
    every group's prefix is reused and the answers are batch 1's."""
    backend = load_hf_backend(make_method(str(tiny_llama_bos_dir), rope, None, "float32", "hf"))
    first, first_prefixes = prompts_sharing_prefix(len(backend.tokenizer), n=4, seed=1)
    second, second_prefixes = prompts_sharing_prefix(len(backend.tokenizer), n=5, seed=2)
    prompts = [p for pair in zip(first, second[:4], strict=True) for p in pair] + second[4:]
    prefixes = [p for pair in zip(first_prefixes, second_prefixes[:4], strict=True) for p in pair]
    prefixes += second_prefixes[4:]
    groups = [0, 1] * 4 + [1]
    stop = _ragged_stop()
    alone = _one_by_one(backend, prompts, stop)
    answers: dict[int, list[int]] = {}
    decoder = GreedyDecoder(backend, stop, batch_size=6)
    assert decode_prompts(decoder, prompts, prefixes, answers.__setitem__, prefix_groups=groups)
    assert [answers[i] for i in range(len(prompts))] == alone


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "subset", "answers"),
    [
        ("ruler", ["--tasks", "niah_single_1,niah_multikey_2,niah_multivalue,vt", "--lengths", "1k"], 8),
        ("passkey", ["--lengths", "512,1k"], 200),
    ],
    ids=["ruler", "passkey"],
)
def test_a_preset_answers_at_its_default_batch_as_at_batch_one(bare_run, tmp_path, task, subset, answers):
    """The bare runs the README quotes, made at the default ``--batch-size auto``: ruler-quick
    (SmolLM2-135M-Instruct through its chat template; at 1k its eight NIAH tasks decode together) and
    zoo-passkey (four zoo methods, 25 samples). Every answer of a part of each, run again at batch 1,
    is the same. A part, to fit CI's time; the whole presets gave the same answers too
    (reports/benchmarks/ruler_quick_bench.md; 200 passkey answers)."""
    one = run_cli([task, *subset, "--batch-size", "1"], tmp_path, f"{task}-1.json").run
    lengths = {c["length"] for c in one["cells"]}
    tasks = {c["dataset"] for c in one["cells"]}
    default = sample_answers(bare_run(task).run, tasks, lengths)
    assert sample_answers(one) == default
    assert len(default) == answers


def _decoded_batches(monkeypatch) -> list[list[int]]:
    """The rows of every batch decoded from here on, as :meth:`GreedyDecoder._continue` is given them."""
    decoded: list[list[int]] = []
    decode = GreedyDecoder._continue

    def spy(self, logits, cache, rows, on_done):
        decoded.append(sorted(rows))
        return decode(self, logits, cache, rows, on_done)

    monkeypatch.setattr(GreedyDecoder, "_continue", spy)
    return decoded


@pytest.mark.parametrize("reuse", [False, True])
@pytest.mark.usefixtures("prefix_route_always")
def test_no_batch_holds_more_rows_than_the_batch_size(tiny_llama_dir, monkeypatch, reuse):
    """Seven prompts of one length at batch 3: batches of 3, 3 and 1, in either route."""
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer))
    decoded = _decoded_batches(monkeypatch)
    answers: dict[int, list[int]] = {}
    decoder = GreedyDecoder(backend, 2, batch_size=3)
    decode_prompts(decoder, prompts, prefixes, answers.__setitem__, prefix_reuse=reuse)
    assert sorted(answers) == list(range(7))
    assert sorted(len(rows) for rows in decoded) == [1, 3, 3]


def test_batched_prompts_longer_than_one_prefill_forward_answer_as_batch_one(tiny_llama_dir, monkeypatch):
    """Two prompts of 8,200 tokens, past the 8,192 prefilled in one forward: each row is prefilled in a
    forward of its own, then the two decode together."""
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    assert hf_generation.PREFILL_TOKENS < 8200
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer), n=2, length=8200)
    alone = _one_by_one(backend, prompts, 3)
    decoded = _decoded_batches(monkeypatch)
    assert _batched(backend, prompts, prefixes, 3, 2, reuse=False) == alone
    assert decoded == [[0, 1]]


def test_whole_rows_beside_reusing_ones_past_one_prefill_forward_answer_as_batch_one(
    tiny_llama_dir, monkeypatch
):
    """The shared-prefix route's whole rows, each longer than a prefill forward holds (the forward made
    short here), are prefilled one at a time beside the rows reusing the prefix."""
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer), n=5, seed=2)
    alone = _one_by_one(backend, prompts, 4)
    monkeypatch.setattr(hf_generation, "PREFILL_TOKENS", LENGTH - 1)
    monkeypatch.setattr(hf_generation, "rows_reusing", lambda *args: [True, False, True, False, False])
    decoded = _decoded_batches(monkeypatch)
    assert _batched(backend, prompts, prefixes, 4, 5, reuse=True) == alone
    assert decoded == [list(range(5))]
