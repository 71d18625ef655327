"""The thought phase's parts: the close marker as a stop sequence of token ids (a marker of several
tokens stops decoding only when all of them are out), the split of a thought (closed, ended, cut by
its budget, with the budget's edge exact), the template variable reaching the chat frame, and the
two calls on the real hf backend, where prompt + thought + answer is what one greedy run decodes."""

from __future__ import annotations

import pytest

from coca_eval.backends.stopping import StopRule
from coca_eval.generation.thinking import Thinking, ThoughtPlan, find_markers, thought_plan
from coca_eval.generation.thought import generate_with_thought, split_thought

PLAN = ThoughtPlan("<t>", "</t>", (7,), (8, 9), 6, "on")


def test_a_marker_of_several_tokens_stops_only_when_whole():
    rule = StopRule(50, stop_sequences=((8, 9),))
    decode = lambda ids: ""  # noqa: E731
    assert rule.first_stop([1, 8, 2, 9, 8, 9, 5], set(), decode) == 6
    assert rule.first_stop([1, 8, 2, 9], set(), decode) is None
    assert rule.stops_early and not StopRule(50).stops_early


@pytest.mark.parametrize(
    ("generated", "tokens", "cut", "ended"),
    [
        ([7, 1, 2, 8, 9], 5, False, False),  # closed by its own marker
        ([7, 1, 2, 3, 4, 8, 9][:6], 6, True, False),  # the marker's first half at the budget: cut
        ([7, 1, 2, 3, 4, 5], 6, True, False),  # exactly the budget, no marker: cut
        ([7, 1, 8, 9, 3, 4][:4], 4, False, False),
        ([7, 1, 0], 2, False, True),  # EOS before the marker: no answer follows
    ],
)
def test_split_thought(generated, tokens, cut, ended):
    thought = split_thought(PLAN, generated, {0})
    assert (len(thought.tokens), thought.closed_by_budget, thought.ended) == (tokens, cut, ended)
    assert thought.continuation(PLAN)[-2:] == [8, 9] or ended


class _Scripted:
    """A backend whose model continues every prompt with the same script, under the caller's rule."""

    tokenizer = type(
        "T", (), {"eos_token_id": 0, "decode": staticmethod(lambda ids, **_: " ".join(map(str, ids)))}
    )()

    def __init__(self, script):
        self.script, self.prompts = script, []

    def generate_greedy(self, prompts, prefix_lengths, stop, on_done, prefix_reuse=True, **_):
        self.prompts.append([list(p) for p in prompts])
        for i, prompt in enumerate(prompts):
            done = len(prompt) - 2  # the prompts are [5, 5]: what follows them is the script's
            on_done(i, stop.cut(self.script[done:], {0}, self.tokenizer.decode))
        return False


@pytest.mark.parametrize(("budget", "cut"), [(5, False), (6, False), (4, True)])
def test_the_budget_is_exact(budget, cut):
    """A thought of 5 tokens (markers included) fits a budget of 5; at 4 it is closed by the budget."""
    backend = _Scripted([7, 1, 2, 8, 9, 3, 4, 0])
    plan = ThoughtPlan("<t>", "</t>", (7,), (8, 9), budget, "on")
    got = {}
    generate_with_thought(backend, plan, [[5, 5]], [0], StopRule(10), lambda i, a, t: got.update({i: (a, t)}))
    answer, thought = got[0]
    assert thought.closed_by_budget is cut
    assert backend.prompts[1] == [[5, 5, *thought.continuation(plan)]]
    if not cut:
        assert answer == [3, 4, 0] and thought.tokens == (7, 1, 2, 8, 9)
    else:
        assert thought.tokens == (7, 1, 2, 8) and thought.continuation(plan) == [7, 1, 2, 8, 8, 9]


def test_a_thought_ended_by_eos_has_an_empty_answer_and_no_second_call():
    backend = _Scripted([7, 1, 0])
    got = {}
    generate_with_thought(backend, PLAN, [[5, 5]], [0], StopRule(10), lambda i, a, t: got.update({i: (a, t)}))
    assert got[0][0] == [] and got[0][1].ended and len(backend.prompts) == 1


def test_markers_and_plans_from_the_template(tmp_path):
    from transformers import AutoTokenizer

    from tests.ruler.conftest import ZOO_CHECKPOINT
    from tests.thinking.conftest import PLAIN_TEMPLATE, THINKING_TEMPLATE

    tokenizer = AutoTokenizer.from_pretrained(ZOO_CHECKPOINT)
    assert find_markers(tokenizer, THINKING_TEMPLATE) == ("<think>", "</think>")
    assert find_markers(tokenizer, PLAIN_TEMPLATE) is None
    assert thought_plan(Thinking("off"), THINKING_TEMPLATE, tokenizer, lambda: True) is None
    assert thought_plan(Thinking("auto"), THINKING_TEMPLATE, tokenizer, lambda: False) is None
    plan = thought_plan(Thinking("auto"), THINKING_TEMPLATE, tokenizer, lambda: True)
    assert plan.close_ids == tuple(tokenizer("</think>", add_special_tokens=False).input_ids)
    given = thought_plan(Thinking("on", 9, ("[[", "]]")), THINKING_TEMPLATE, tokenizer, lambda: True)
    assert (given.open_marker, given.close_marker, given.budget) == ("[[", "]]", 9)


def test_the_template_variable_reaches_the_chat_frame():
    from transformers import AutoTokenizer

    from coca_eval.chat import frame_from_template, renders_alike
    from tests.ruler.conftest import ZOO_CHECKPOINT
    from tests.thinking.conftest import THINKING_TEMPLATE

    tokenizer = AutoTokenizer.from_pretrained(ZOO_CHECKPOINT)
    frame = lambda variables: frame_from_template(THINKING_TEMPLATE, tokenizer, "t", variables)  # noqa: E731
    off = Thinking("off").variables(THINKING_TEMPLATE)
    assert off == {"enable_thinking": False} and Thinking("auto").variables(THINKING_TEMPLATE) == {}
    assert frame(off).tail[-len(frame({}).tail) :] != frame({}).tail  # the empty thought is in the frame
    assert tokenizer.decode(frame(off).tail).endswith("<think>\n\n</think>\n\n")
    assert frame({"enable_thinking": True}) == frame({})
    assert renders_alike(THINKING_TEMPLATE, tokenizer, {"enable_thinking": True})


def test_on_the_hf_backend_the_two_calls_decode_what_one_greedy_run_does(tiny_llama_bos_dir):
    """A tiny random model's own greedy continuation, with two of its tokens taken as the close
    marker: the thought ends there, and the answer is what the same greedy run decodes after it; a
    shorter budget closes the thought with the marker and answers from there."""
    from coca_eval.backends.hf import load_hf_backend
    from coca_eval.backends.hf_generation import GreedyDecoder
    from coca_eval.methods import make_method

    backend = load_hf_backend(make_method(str(tiny_llama_bos_dir), "none", None, "float32", "hf"))
    prompts = [[1, *range(20 + k, 60 + k)] for k in range(3)]  # one length: decoded as one batch
    decoder = GreedyDecoder(backend, 24)
    runs = [decoder.naive(p) for p in prompts]
    end = next(
        i for i in range(2, 12) if all(tuple(r[i - 2 : i]) not in _pairs(r[: i - 1]) for r in runs[:1])
    )
    close = tuple(runs[0][end - 2 : end])
    plan = ThoughtPlan("<t>", "</t>", (), close, 16, "on")
    got = {}
    generate_with_thought(
        backend, plan, prompts, [0, 0, 0], StopRule(6), lambda i, a, t: got.update({i: (a, t)})
    )
    answer, thought = got[0]
    assert list(thought.tokens) == runs[0][:end] and not thought.closed_by_budget
    assert answer == runs[0][end : end + 6]
    short = ThoughtPlan("<t>", "</t>", (), close, end - 1, "on")
    generate_with_thought(
        backend, short, prompts[:1], [0], StopRule(6), lambda i, a, t: got.update({i: (a, t)})
    )
    answer, thought = got[0]
    assert thought.closed_by_budget and list(thought.tokens) == runs[0][: end - 1]
    forced = [*prompts[0], *runs[0][: end - 1], *close]
    assert answer == GreedyDecoder(backend, 6).naive(forced)


def _pairs(tokens):
    return {tuple(tokens[i : i + 2]) for i in range(len(tokens) - 1)}
