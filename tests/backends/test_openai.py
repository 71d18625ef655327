"""The openai backend against a small loopback server: same passkey outputs and perplexities as hf,
and one-line errors for a missing or unreachable server."""

from __future__ import annotations

import json

import pytest
import torch
from fake_completions import FakeServer
from test_cli import run_cli
from transformers import AutoModelForCausalLM

from coca_eval.backends.openai import CompletionsClient, OpenAIBackend
from coca_eval.backends.options import EngineOptions, load_backend
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from coca_eval.results import load_run


@pytest.fixture(scope="module")
def tiny_model(tiny_llama_bos_dir):
    return AutoModelForCausalLM.from_pretrained(tiny_llama_bos_dir, dtype=torch.float32).eval()


def _passkey(model_dir, out, *extra):
    args = ["passkey", "--model", model_dir, "--lengths", "200", "--samples", "3", "--max-new-tokens", "6"]
    return run_cli(*args, "--output", out, *extra)


def test_passkey_through_server_matches_hf(tiny_model, tiny_llama_bos_dir, tmp_path):
    hf = _passkey(tiny_llama_bos_dir, tmp_path / "hf.json")
    assert hf.returncode == 0, hf.stderr
    with FakeServer(tiny_model, "tiny", eos=1) as url:
        served = _passkey(tiny_llama_bos_dir, tmp_path / "oa.json", "--backend", "openai", "--base-url", url)
    assert served.returncode == 0, served.stderr
    outputs = [
        [s["output"] for s in load_run(tmp_path / f).cells[0].detail["samples"]]
        for f in ("hf.json", "oa.json")
    ]
    assert outputs[0] == outputs[1] and len(outputs[0]) == 3
    run = json.loads((tmp_path / "oa.json").read_text())
    assert run["config"]["backends"][run["cells"][0]["method"]]["base_urls"] == [url]


def test_scores_equal_reference(tiny_model, tiny_llama_bos_dir):
    method = make_method(str(tiny_llama_bos_dir), "none", None, "float32", "openai")
    hf = load_backend(
        make_method(str(tiny_llama_bos_dir), "none", None, "float32", "hf"), "cpu", None, EngineOptions(), 64
    )
    ids = torch.randint(2, 300, (2, 24), generator=torch.Generator().manual_seed(0))  # [2, 24]
    targets = ids[:, 9:]  # [2, 15]: positions 8..22 predict tokens 9..23
    with FakeServer(tiny_model, "tiny") as url:
        backend = load_backend(method, "cpu", None, EngineOptions(base_urls=(url,)), 64)
        assert isinstance(backend, OpenAIBackend) and backend.adds_bos
        served = backend.score(ids, 8, targets)
    reference = hf.score(ids, 8, targets)
    assert served.shape == (2, 15) and torch.allclose(served, reference, rtol=1e-5, atol=1e-6)


def test_server_without_prompt_logprobs_is_one_line(tiny_model, tiny_llama_bos_dir):
    method = make_method(str(tiny_llama_bos_dir), "none", None, "float32", "openai")
    with FakeServer(tiny_model, "tiny", echo_supported=False) as url:
        backend = load_backend(method, "cpu", None, EngineOptions(base_urls=(url,)), 64)
        with pytest.raises(CocaEvalError, match="no prompt log-probs"):
            backend.score(torch.tensor([[5, 6, 7]]), 0, torch.tensor([[6, 7]]))


def test_unreachable_or_missing_url_is_one_line(tiny_llama_bos_dir, tmp_path):
    no_url = _passkey(tiny_llama_bos_dir, tmp_path / "a.json", "--backend", "openai")
    assert no_url.returncode == 2 and "--base-url" in no_url.stderr
    assert len(no_url.stderr.strip().splitlines()) == 1
    down = _passkey(
        tiny_llama_bos_dir, tmp_path / "b.json", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"
    )
    assert down.returncode == 2 and "cannot reach" in down.stderr
    assert len(down.stderr.strip().splitlines()) == 1


def test_client_reports_http_errors():
    with pytest.raises(CocaEvalError, match="cannot reach"):
        CompletionsClient("http://127.0.0.1:9/v1").served_models()


SAME_EITHER_WAY = (  # takes enable_thinking (the word is in it) and renders the same with it on or off
    "{# enable_thinking #}{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}Answer:{% endif %}"
)


def test_thoughts_decoded_apart_through_a_server_equal_hf(tiny_model, tiny_llama_bos_dir, tmp_path):
    """Passkey with ``--thinking on`` over completions of token ids: the server's two calls (the thought
    cut at its budget and closed by the marker, then the answer) give every sample the thought and the
    answer hf gives it."""
    template = tmp_path / "thinking.jinja"
    template.write_text(SAME_EITHER_WAY)
    thinking = ["--chat-template", str(template), "--thinking", "on", "--think-budget", "5"]
    thinking += ["--think-markers", "<think>,</think>"]
    hf = _passkey(tiny_llama_bos_dir, tmp_path / "hf.json", *thinking)
    assert hf.returncode == 0, hf.stderr
    with FakeServer(tiny_model, "tiny", eos=1) as url:
        served = _passkey(
            tiny_llama_bos_dir, tmp_path / "oa.json", *thinking, "--backend", "openai", "--base-url", url
        )
    assert served.returncode == 0, served.stderr
    fields = ("output", "thought", "thought_tokens", "thought_closed_by_budget", "correct")
    samples = [
        [{k: s[k] for k in fields} for s in load_run(tmp_path / f).cells[0].detail["samples"]]
        for f in ("hf.json", "oa.json")
    ]
    assert samples[0] == samples[1] and len(samples[0]) == 3
    assert all(s["thought_tokens"] <= 5 and s["thought"] for s in samples[0])
