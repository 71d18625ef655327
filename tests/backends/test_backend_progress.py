"""The server and vLLM backends report the tokens each call ran through the model to the current
cell's progress (:func:`coca_eval.progress.work_done`), as the hf decoder does, so a generation cell
shows work inside a call instead of "0/4 done" until its first answer: the prompt's tokens once
(vLLM's later rounds read them cached) and every generated token."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from transformers import AutoTokenizer

from coca_eval import progress
from coca_eval.backends.stopping import StopRule


class _Counting:
    """Stands for the run's progress: keeps what each ``work_done`` added."""

    def __init__(self):
        self.added: list[int] = []

    def add_work(self, tokens: int) -> None:
        self.added.append(tokens)


@pytest.fixture
def counted():
    counting = _Counting()
    token = progress._ACTIVE.set(counting)
    yield counting.added
    progress._ACTIVE.reset(token)


def test_completions_report_each_prompt_and_its_generated_tokens(counted, tiny_llama_bos_dir):
    import torch
    from fake_completions import FakeServer
    from transformers import AutoModelForCausalLM

    from coca_eval.backends.options import EngineOptions, load_backend
    from coca_eval.methods import make_method

    model = AutoModelForCausalLM.from_pretrained(tiny_llama_bos_dir, dtype=torch.float32).eval()
    method = make_method(str(tiny_llama_bos_dir), "none", None, "float32", "openai")
    prompts = [[1, *range(5, 25)], [1, *range(30, 42)]]
    answers = {}
    with FakeServer(model, "tiny") as url:
        backend = load_backend(method, "cpu", None, EngineOptions(base_urls=(url,)), 64)
        backend.generate_greedy(prompts, [0, 0], StopRule(6), answers.__setitem__)
    assert sorted(counted) == sorted([21 + 6, 13 + 6])  # no EOS in 6 tokens: the whole budget each
    assert sorted(answers) == [0, 1]


def test_chat_completions_report_the_framed_prompt_and_the_reply(counted, tiny_chat_dir):
    from fake_chat import FakeChatServer

    from coca_eval.backends.options import EngineOptions, load_backend
    from coca_eval.chat import ChatPrompt
    from coca_eval.methods import make_method

    tokenizer = AutoTokenizer.from_pretrained(tiny_chat_dir)
    messages = [{"role": "user", "content": "Where is the needle?"}]
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    ids = tokenizer(ids, add_special_tokens=False).input_ids
    method = make_method(str(tiny_chat_dir), "none", None, "float32", "openai")
    reply = tokenizer(" in the haystack", add_special_tokens=False).input_ids
    with FakeChatServer(tokenizer, "tiny", lambda _: tokenizer.decode(reply)) as url:
        backend = load_backend(method, "cpu", None, EngineOptions(base_urls=(url,)), 64)
        backend.generate_chat(
            [ChatPrompt("Where is the needle?", "", tuple(ids))], StopRule(20), lambda *a: None
        )
    assert counted == [len(ids) + len(reply)]


def test_vllm_rounds_report_the_prompt_once_and_every_new_token(counted, monkeypatch):
    """Rounds of 8, 16, ... new tokens: the first reads the prompt, later ones only what they add."""
    import sys

    from coca_eval.backends.vllm import VllmBackend

    monkeypatch.setitem(
        sys.modules, "vllm", SimpleNamespace(SamplingParams=lambda **kw: SimpleNamespace(**kw))
    )

    class _Engine:
        def generate(self, requests, params, use_tqdm=False):
            return [
                SimpleNamespace(outputs=[SimpleNamespace(token_ids=[7] * params.max_tokens, logprobs=None)])
                for _ in requests
            ]

    backend = object.__new__(VllmBackend)
    backend.eos = {0}
    backend.decode = lambda ids, **_: " ".join(map(str, ids))
    stop = StopRule(20, lambda text: False)  # a rule that may stop early: decoded in rounds
    generated = backend._greedy_in_rounds(_Engine(), [[1] * 30, [1] * 50], stop)
    assert [len(g) for g in generated] == [20, 20]
    assert counted == [30 + 8, 50 + 8, 12, 12]  # rounds of 8, then the 12 left of the budget
