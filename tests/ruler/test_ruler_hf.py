"""RULER on the hf backend with a tiny random model: the shared-prefix route gives the naive route's
outputs, a length past the model's positions is an error cell, and nothing is truncated."""

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.methods import make_method
from coca_eval.ruler.params import make_ruler_params

TASKS = "niah_single_1,niah_multikey_1,vt"


def _run(model_dir, path, lengths, prefix_reuse=True, **extra):
    values = {"tasks": TASKS, "lengths": lengths, "samples": 3, "chat_template": "none", **extra}
    params = make_ruler_params(values)
    method = make_method(str(model_dir), "none", "tiny", "float32", "hf")
    return evaluate("ruler", [method], params, path, Runtime(), prefix_reuse=prefix_reuse)


def test_prefix_reuse_gives_the_naive_outputs(tiny_llama_bos_dir, tmp_path, prefix_route_always):
    fast = _run(tiny_llama_bos_dir, tmp_path / "fast.json", "1200")
    naive = _run(tiny_llama_bos_dir, tmp_path / "naive.json", "1200", prefix_reuse=False)
    assert [c.status for c in fast.cells] == ["ok"] * 3
    assert any(c.detail["prefix_reuse"] for c in fast.cells)
    outputs = lambda run: [[s["output"] for s in c.detail["samples"]] for c in run.cells]  # noqa: E731
    assert outputs(fast) == outputs(naive)
    assert [c.value for c in fast.cells] == [c.value for c in naive.cells]


def _gpt2(directory, positions: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.tiny_models import make_tokenizer

    tokenizer = make_tokenizer(add_bos=False)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=positions, n_embd=32, n_layer=1, n_head=2)
    GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def test_the_prompt_and_its_answer_fit_inside_n_as_in_ruler(tmp_path):
    """RULER's N: learned absolute positions (GPT-2: 1300 here) run every task at N = 1300, the prompt
    being N minus each task's budget; at 1400 nothing fits."""
    model = _gpt2(tmp_path / "gpt2", 1300)
    run = _run(model, tmp_path / "r.json", "1300,1400")
    assert [(c.dataset, c.length, c.status) for c in run.cells] == [
        (task, n, status) for task in TASKS.split(",") for n, status in ((1300, "ok"), (1400, "error"))
    ]
    assert run.cells[1].detail["error"] == "1400 tokens (prompt and answer) exceed the model's 1300 positions"
    ok = [c for c in run.cells if c.status == "ok"]
    assert all(c.detail["length_counts"] == "prompt+answer" for c in ok)
    assert [c.detail["answer_budget"] for c in ok] == [128, 128, 30]
    assert run.config["params"]["length_counts"] == "prompt+answer"


def test_a_length_past_the_positions_is_an_error_cell_when_n_counts_the_prompt_alone(tmp_path):
    """``--length-counts prompt``: learned positions (1300) hold 1200 + vt's 30 answer tokens, not 1200
    + the NIAH tasks' 128; the run records no length_counts, as runs made before the option."""
    model = _gpt2(tmp_path / "gpt2", 1300)
    run = _run(model, tmp_path / "r.json", "1200", length_counts="prompt")
    assert [(c.dataset, c.status) for c in run.cells] == [
        ("niah_single_1", "error"),
        ("niah_multikey_1", "error"),
        ("vt", "ok"),
    ]
    assert run.cells[0].detail["error"] == "1200 + 128 answer tokens exceed the model's 1300 positions"
    assert run.cells[2].detail["length_counts"] == "prompt"
    assert "length_counts" not in run.config["params"]


def _batched_run(model_dir, path, batch_size, samples=3, tasks=TASKS, lengths="900"):
    params = make_ruler_params(
        {"tasks": tasks, "lengths": lengths, "samples": samples, "chat_template": "none"}
    )
    method = make_method(str(model_dir), "none", "tiny", "float32", "hf")
    return evaluate("ruler", [method], params, path, Runtime(), batch_size=batch_size)


def _cells(run) -> list[dict]:
    return [c.model_dump(include={"dataset", "length", "status", "value", "n", "detail"}) for c in run.cells]


def test_cells_of_one_length_and_budget_decode_in_one_call(
    tiny_llama_bos_dir, tmp_path, monkeypatch, prefix_route_always
):
    """The two NIAH tasks (budget 128) go in one call, vt (budget 30) in another; every batch size
    gives the same cells, prefix reuse included."""
    from coca_eval.backends.hf import HFBackend

    calls = []
    original = HFBackend.generate_greedy

    def counted(self, prompts, *args, **kwargs):
        calls.append((len(prompts), kwargs.get("batch_size"), len(set(kwargs.get("prefix_groups") or [0]))))
        return original(self, prompts, *args, **kwargs)

    monkeypatch.setattr(HFBackend, "generate_greedy", counted)
    one = _batched_run(tiny_llama_bos_dir, tmp_path / "one.json", 1)
    assert calls == [(6, 1, 2), (3, 1, 1)]
    for batch in (4, None):
        assert _cells(_batched_run(tiny_llama_bos_dir, tmp_path / f"{batch}.json", batch)) == _cells(one)
    assert all(c.detail["prefix_reuse"] for c in one.cells)


def test_a_run_killed_at_one_batch_size_resumes_at_another_to_the_same_cells(
    tiny_llama_bos_dir, tmp_path, monkeypatch
):
    from coca_eval.journal import Journal

    whole = _batched_run(tiny_llama_bos_dir, tmp_path / "whole.json", 1)
    original, recorded = Journal.record_part, []

    def dies_after_four(self, key, unit, entry):
        if len(recorded) == 4:
            raise KeyboardInterrupt
        recorded.append(unit)
        return original(self, key, unit, entry)

    monkeypatch.setattr(Journal, "record_part", dies_after_four)
    with pytest.raises(KeyboardInterrupt):
        _batched_run(tiny_llama_bos_dir, tmp_path / "resumed.json", 2)
    monkeypatch.setattr(Journal, "record_part", original)
    assert len(recorded) == 4 and not (tmp_path / "resumed.json").exists()
    resumed = _batched_run(tiny_llama_bos_dir, tmp_path / "resumed.json", 5)
    assert [[s["output"] for s in c["detail"]["samples"]] for c in _cells(resumed)] == [
        [s["output"] for s in c["detail"]["samples"]] for c in _cells(whole)
    ]
    assert [c["value"] for c in _cells(resumed)] == [c["value"] for c in _cells(whole)]


def _cli(capsys, *args) -> tuple[int, str, str]:
    from coca_eval.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_a_model_of_1024_learned_positions_runs_niah_single_1_at_1024(tmp_path, capsys):
    """RULER's own setting: 896 prompt tokens + 128 answer tokens = N = 1,024 positions."""
    from coca_eval.results import load_run

    model = _gpt2(tmp_path / "gpt2", 1024)
    args = ("ruler", "--model", model, "--tasks", "niah_single_1", "--lengths", "1024", "--samples", "2")
    code, out, err = _cli(capsys, *args, "--chat-template", "none", "--output", tmp_path / "r.json")
    assert code == 0, err
    (cell,) = load_run(tmp_path / "r.json").cells
    assert cell.status == "ok" and cell.n == 2
    assert "N = prompt + answer budget (RULER's)" in out


def test_the_gate_never_pairs_the_two_meanings_of_n(tiny_llama_bos_dir, tmp_path, capsys):
    args = ("ruler", "--model", tiny_llama_bos_dir, "--tasks", "vt", "--lengths", "900", "--samples", "2")
    args += ("--chat-template", "none")
    assert _cli(capsys, *args, "--output", tmp_path / "ruler.json")[0] == 0
    assert _cli(capsys, *args, "--length-counts", "prompt", "--output", tmp_path / "prompt.json")[0] == 0
    gate = ("gate", "--baseline", tmp_path / "ruler.json", "--candidate", tmp_path / "prompt.json")
    code, out, err = _cli(capsys, *gate)
    assert code == 2
    assert "protocols differ" in err and "length_counts 'prompt+answer' vs None" in err
    assert len(err.strip().splitlines()) == 1
