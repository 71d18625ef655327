"""Non-finite logits in a decoding of two calls (a thought then its answer; LongBench v2's reasoning
then its letter) fail only their own rows: every other row of the call is answered, and the failures
are raised together, each named by its prompt's position in the whole call, so the runner's error
cell keeps the answers journaled beside the failed sample."""

from __future__ import annotations

import pytest

from coca_eval.backends.stopping import StopRule
from coca_eval.errors import NonFiniteOutput
from coca_eval.generation.thinking import ThoughtPlan
from coca_eval.generation.thought import generate_with_thought
from coca_eval.longbench.v2_reasoning import generate_with_reasoning

PLAN = ThoughtPlan("<t>", "</t>", (7,), (8,), 6, "on")


class _FailingCall:
    """A backend whose call number ``call`` fails the prompt whose first id is ``bad``; every other
    prompt is answered with a script (a closed thought on the first call, an answer on the second)."""

    tokenizer = type("T", (), {"eos_token_id": 0, "decode": staticmethod(lambda ids, **_: "reasoned")})()

    def __init__(self, call: int, bad: int):
        self.call, self.bad, self.calls = call, bad, []

    def generate_greedy(self, prompts, prefix_lengths, stop, on_done, prefix_reuse=True, **_):
        self.calls.append([list(p) for p in prompts])
        rows = {}
        for k, prompt in enumerate(prompts):
            if len(self.calls) == self.call and prompt[0] == self.bad:
                rows[k] = f"sample {k}: non-finite logits at answer token 1"
                continue
            on_done(k, [7, 1, 8] if len(self.calls) == 1 else [3, 0])
        if rows:
            raise NonFiniteOutput(next(iter(rows.values())), rows)
        return False


def _thought_run(backend):
    got = {}
    prompts = [[10, 5], [11, 5], [12, 5]]
    with pytest.raises(NonFiniteOutput) as caught:
        generate_with_thought(
            backend, PLAN, prompts, [0, 0, 0], StopRule(4), lambda i, a, t: got.update({i: a})
        )
    return got, caught.value


def _reasoning_run(backend):
    got = {}
    prompts = [[10, 5], [11, 5], [12, 5]]
    second = lambda i, text: [10 + i, 6]  # noqa: E731
    with pytest.raises(NonFiniteOutput) as caught:
        generate_with_reasoning(
            backend, second, prompts, [0, 0, 0], StopRule(4), lambda i, a, r: got.update({i: a})
        )
    return got, caught.value


@pytest.mark.parametrize("run", [_thought_run, _reasoning_run], ids=["thought", "reasoning"])
def test_a_row_failing_in_the_first_call_leaves_the_others_answered(run):
    backend = _FailingCall(call=1, bad=11)
    got, error = run(backend)
    assert sorted(got) == [0, 2] and got[0] == [3, 0]
    assert list(error.rows) == [1] and error.rows[1].startswith("sample 1:")
    assert len(backend.calls[1]) == 2  # the failed row is not asked a second time


@pytest.mark.parametrize("run", [_thought_run, _reasoning_run], ids=["thought", "reasoning"])
def test_a_row_failing_in_the_second_call_is_named_by_its_place_in_the_whole_call(run):
    backend = _FailingCall(call=2, bad=12)
    got, error = run(backend)
    assert sorted(got) == [0, 1]
    assert list(error.rows) == [2] and error.rows[2].startswith("sample 2:")


@pytest.mark.parametrize("run", [_thought_run, _reasoning_run], ids=["thought", "reasoning"])
def test_failures_of_both_calls_are_raised_together(run):
    class _Both(_FailingCall):
        def generate_greedy(self, prompts, *args, **kwargs):
            self.bad = 10 if not self.calls else 12
            self.call = len(self.calls) + 1
            return super().generate_greedy(prompts, *args, **kwargs)

    got, error = run(_Both(1, 10))
    assert sorted(got) == [1] and sorted(error.rows) == [0, 2]
