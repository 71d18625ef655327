"""The greedy call every backend shares: keywords read once into options, the stop rule normalised."""

from __future__ import annotations

from dataclasses import fields

import pytest

from coca_eval.backends.greedy import GreedyBackend, GreedyKeywords, GreedyOptions
from coca_eval.backends.hf import HFBackend
from coca_eval.backends.openai import OpenAIBackend
from coca_eval.backends.stopping import StopRule
from coca_eval.backends.vllm import VllmBackend


class _Seen(GreedyBackend):
    """Records what its hook is handed and answers every prompt with its own ids."""

    def _decode_greedy(self, prompts, prefix_lengths, stop, on_done, options) -> bool:
        self.seen = (stop, options)
        for i, prompt in enumerate(prompts):
            on_done(i, list(prompt))
        return options.prefix_reuse


def test_the_keywords_are_the_options_fields():
    assert list(GreedyKeywords.__annotations__) == [f.name for f in fields(GreedyOptions)]


def test_no_keyword_means_the_defaults_and_a_bare_budget_becomes_a_rule():
    backend, answers = _Seen(), {}
    assert backend.generate_greedy([[1, 2]], [0], 7, answers.__setitem__) is True
    assert backend.seen == (StopRule(7), GreedyOptions()) and answers == {0: [1, 2]}
    assert GreedyOptions() == GreedyOptions(True, False, None, None)


def test_keywords_reach_the_backend_as_options():
    backend, rule = _Seen(), StopRule(3)
    backend.generate_greedy([], [], rule, print, prefix_reuse=False, batch_size=2, prefix_groups=[0])
    assert backend.seen == (rule, GreedyOptions(prefix_reuse=False, batch_size=2, prefix_groups=[0]))


def test_an_unknown_keyword_is_refused():
    with pytest.raises(TypeError):
        _Seen().generate_greedy([], [], 1, print, reuse=False)


@pytest.mark.parametrize("backend", [HFBackend, OpenAIBackend, VllmBackend])
def test_every_backend_answers_the_shared_call(backend):
    assert backend.generate_greedy is GreedyBackend.generate_greedy
