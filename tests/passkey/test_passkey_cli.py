"""`coca-eval passkey`: the contract, sample dumps, bad input, resume, and the real-model check."""

import json
import re
from pathlib import Path

import pytest
from test_cli import run_cli

from coca_eval.results import load_run

ROOT = Path(__file__).resolve().parents[2]


def test_passkey_contract_and_dump(tiny_llama_bos_dir, tmp_path):
    out, dump = tmp_path / "pk.json", tmp_path / "samples.jsonl"
    args = [
        "passkey",
        "--model",
        tiny_llama_bos_dir,
        "--rope",
        "none",
        "--rope",
        "dynamic:2",
        "--lengths",
        "230,300",
        "--samples",
        "4",
        "--max-new-tokens",
        "6",
        "--output",
        out,
        "--dump-samples",
        dump,
    ]
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    run = load_run(out)
    assert [(c.method.endswith("x2"), c.length) for c in run.cells] == [
        (False, 230),
        (False, 300),
        (True, 230),
        (True, 300),
    ]
    for cell in run.cells:
        assert cell.task == "passkey" and cell.metric == "accuracy" and cell.n == 4
        assert 0 <= cell.detail["wilson95"][0] <= cell.value <= cell.detail["wilson95"][1] <= 100
        correct = [s["correct"] for s in cell.detail["samples"]]
        assert cell.unit == "points" and cell.value == 100 * sum(correct) / len(correct)
        assert {s["index"] for s in cell.detail["samples"]} == {0, 1, 2, 3}
    # same keys for every method at a length
    keys = {(c.length, tuple(s["key"] for s in c.detail["samples"])) for c in run.cells}
    assert len(keys) == 2
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(lines) == 16 and all(len(r["prompt_ids"]) == r["length"] for r in lines)
    assert all(r["prompt_ids"][0] == 0 for r in lines)  # BOS, as this tokenizer adds one
    again = run_cli(*args)
    assert again.returncode == 0 and "loading" not in again.stderr  # resumed from the journal


@pytest.mark.parametrize(
    "args",
    [
        ["--samples", "0"],
        ["--max-new-tokens", "-1"],
        ["--depths", "1.5"],
        ["--template", "nope"],
        ["--lengths", "64..32"],
        ["--preset", "pg19"],
        ["--samples", "auto", "--threshold", "0.5"],
        ["--samples", "auto", "--max-samples", "50"],
        ["--samples", "auto", "--max-samples", "50", "--target-width", "1.5"],
        ["--samples", "auto", "--max-samples", "50", "--target-width", "0"],
        ["--samples", "auto", "--max-samples", "50", "--target-width", "0.2", "--threshold", "0.5"],
        ["--samples", "some"],
        ["--threshold", "0.5"],
    ],
)
def test_passkey_bad_input(tiny_llama_dir, tmp_path, args):
    out = tmp_path / "pk.json"
    result = run_cli("passkey", "--model", tiny_llama_dir, "--samples", "2", *args, "--output", out)
    assert result.returncode == 2 and result.stderr.startswith("coca-eval: error:"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


def test_absolute_positions_past_their_limit_are_an_error_cell(tmp_path):
    from tiny_models import make_tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = make_tokenizer(add_bos=False)
    model = GPT2LMHeadModel(
        GPT2Config(vocab_size=len(tokenizer), n_positions=256, n_embd=32, n_layer=1, n_head=2)
    )
    model.save_pretrained(tmp_path / "gpt2")
    tokenizer.save_pretrained(tmp_path / "gpt2")
    out = tmp_path / "pk.json"
    result = run_cli(
        "passkey",
        "--model",
        tmp_path / "gpt2",
        "--lengths",
        "60,200,250",  # 60 passes the floor refused up front (48), not this tokenizer's fixed parts
        "--samples",
        "2",
        "--max-new-tokens",
        "8",
        "--output",
        out,
    )
    # the run goes on past each error cell, writes all three, then fails as every generation family does
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("coca-eval: error: passkey @ 60: ") and "(and 1 more error cells)" in last
    cells = load_run(out).cells
    assert [c.status for c in cells] == ["error", "ok", "error"]
    assert "too short for the passkey prompt" in cells[0].detail["error"]
    assert "exceed the model's 256 positions" in cells[2].detail["error"]


@pytest.mark.realmodel
@pytest.mark.slow  # SmolLM2 on 2 cores: over a minute per reading
@pytest.mark.parametrize(
    ("chat_template", "floor"),
    # A plain prompt (the reading before --chat-template) retrieves 10 of 10 keys at both lengths; the
    # preset's default reads the Instruct model through its chat template, measured at 10 and 7 of 10.
    [("none", 0.9), ("preset", 0.5)],
)
def test_smollm2_retrieves_passkeys(tmp_path, chat_template, floor):
    """With the preset's chat template this is docs/passkey.md's SmolLM2 example, read off the page."""
    out = tmp_path / "pk.json"
    example = re.search(
        r"\ncoca-eval (passkey --model smollm2-135m [^\n]*)", (ROOT / "docs/passkey.md").read_text()
    )
    args = example.group(1).split()
    assert args == ["passkey", "--model", "smollm2-135m", "--lengths", "512,1k", "--samples", "10"], args
    result = run_cli(*args, "--chat-template", chat_template, "--output", out)
    assert result.returncode == 0, result.stderr
    cells = load_run(out).cells
    assert [c.length for c in cells] == [512, 1024]
    assert all(c.value >= floor for c in cells), [c.value for c in cells]
    assert ("chat_template" in cells[0].detail) == (chat_template == "preset")


@pytest.mark.parametrize(
    ("fixture", "policy", "starts_with_bos"),
    [
        ("tiny_llama_dir", "always", True),
        ("tiny_llama_dir", "auto", False),
        ("tiny_llama_bos_dir", "never", False),
    ],
)
def test_bos_policy_reaches_every_prompt(request, tmp_path, fixture, policy, starts_with_bos):
    """--bos always puts the tokenizer's BOS in front even where it adds none; never leaves it out."""
    out, dump = tmp_path / "pk.json", tmp_path / "samples.jsonl"
    result = run_cli(
        "passkey",
        "--model",
        request.getfixturevalue(fixture),
        "--lengths",
        "230",
        "--samples",
        "2",
        "--max-new-tokens",
        "4",
        "--bos",
        policy,
        "--output",
        out,
        "--dump-samples",
        dump,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(lines) == 2 and all(len(r["prompt_ids"]) == 230 for r in lines)
    assert all((r["prompt_ids"][0] == 0) == starts_with_bos for r in lines)  # "<s>" is id 0
    assert load_run(out).config["params"].get("bos", "auto") == policy  # auto: recorded by absence


def _answers(tmp_path, model_dir, name: str, *extra) -> list[str]:
    out = tmp_path / f"{name}.json"
    args = ["--lengths", "400", "--samples", "4", "--max-new-tokens", "8", "--output", out]
    result = run_cli("passkey", "--model", model_dir, *args, *extra)
    assert result.returncode == 0, result.stderr
    (cell,) = load_run(out).cells
    return [s["output"] for s in cell.detail["samples"]]


@pytest.mark.slow  # a long check (over 20 s on 2 cores): runs in CI's slow suite
def test_held_dynamic_rope_answers_as_the_prompts_fixed_ntk_base(sharp_llama_dir, tmp_path):
    """--dynamic-rope hold reads a 400-token prompt (trained length 256) as the model with the NTK
    base dynamic NTK x2 picks at 400 tokens, kept for the answer: the vLLM engine's reading. The
    base is computed independently (the vLLM backend's float32 formula) and passed as a base patch.
    The default rescales with every answer token, so its answers differ."""
    from transformers import AutoConfig

    from coca_eval.backends.vllm_rope import dynamic_ntk_theta

    config = AutoConfig.from_pretrained(sharp_llama_dir)
    theta = dynamic_ntk_theta(config, config.rope_parameters, 2.0, 400)
    held = _answers(tmp_path, sharp_llama_dir, "held", "--rope", "dynamic:2", "--dynamic-rope", "hold")
    fixed = _answers(tmp_path, sharp_llama_dir, "fixed", "--rope", f"base:{theta!r}")
    rescaled = _answers(tmp_path, sharp_llama_dir, "rescaled", "--rope", "dynamic:2")
    assert held == fixed
    assert rescaled != held
    assert load_run(tmp_path / "held.json").config["params"]["dynamic_rope"] == "hold"
    assert "dynamic_rope" not in load_run(tmp_path / "rescaled.json").config["params"]


def test_vllm_with_dynamic_rope_must_hold_the_answer(tiny_llama_dir, tmp_path):
    """vLLM cannot rescale per generated token: refused in one line before anything loads."""
    out = tmp_path / "pk.json"
    args = ["--rope", "dynamic:2", "--backend", "vllm", "--lengths", "300", "--samples", "2", "--output", out]
    result = run_cli("passkey", "--model", tiny_llama_dir, *args)
    assert result.returncode == 2
    assert "pass --dynamic-rope hold" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


def test_passkey_samples_auto_stops_reports_and_gates(tiny_llama_dir, tmp_path):
    """A model that never retrieves: every cell stops after one round, below the threshold; the report
    shows the confidence sequence and the gate compares two such runs."""
    out = tmp_path / "auto.json"
    auto = ["--samples", "auto", "--max-samples", "40", "--threshold", "0.5"]
    args = ["--lengths", "230,300", "--max-new-tokens", "6", "--output", out]
    result = run_cli("passkey", "--model", tiny_llama_dir, *auto, *args)
    assert result.returncode == 0, result.stderr
    heading = "per length up to 40 samples, stopping once the 95 % interval lies above or below 0.5"
    assert heading in " ".join(result.stdout.split())
    for cell in load_run(out).cells:
        assert cell.status == "ok" and cell.value == 0.0 and cell.n == 10
        assert cell.detail["sequential"]["decision"] == "below 0.5"
        assert cell.detail["sequential"]["interval"][1] < 0.5
    report = run_cli("report", out, "--intervals", "--out", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report" / "report.md").read_text()
    assert "brackets: its confidence sequence" in " ".join(text.split())
    gate = run_cli("gate", "--baseline", out, "--candidate", out)
    assert gate.returncode == 0, gate.stderr + gate.stdout
