"""The prompts the vllm and openai backends send hold every target of every window plan, disjoint
windows (S = L) included, and each scored position keeps exactly the context it has in its window."""

from __future__ import annotations

import pytest
import torch

from coca_eval.backends.echo import echo_prompts
from coca_eval.ppl.engine import _inputs
from coca_eval.ppl.windows import plan_windows

IDS = list(range(100, 170))  # [70] distinct tokens, so a shifted prompt cannot pass by accident
BOS = 1


@pytest.mark.parametrize("policy", ["always", "never", "first"])
@pytest.mark.parametrize(("length", "stride"), [(16, 16), (16, 40), (16, 5), (9, 9)])
def test_every_target_is_in_the_prompt_after_its_window_context(policy, length, stride):
    plan = plan_windows(len(IDS), length, stride, policy)
    for window in plan:
        input_ids, targets = _inputs(IDS, [window], BOS)  # (1, n), (1, s)
        rows, scored = echo_prompts(input_ids, window.first_logit, targets)
        row = rows[0]
        assert row[scored] == IDS[window.score_from : window.score_to]
        for j in range(scored.start, scored.stop):  # the context before each target is the window's
            assert row[:j] == input_ids[0, :j].tolist()
        assert len(row) <= window.length + 1


def test_a_disjoint_window_gets_its_last_target_appended():
    window = plan_windows(40, 16, 16, "never")[0]  # targets 1..15, the window holds ids[0:15]
    input_ids, targets = _inputs(IDS, [window], BOS)  # (1, 15), (1, 15)
    assert input_ids.shape[1] == window.first_logit + targets.shape[1]  # one token short of its targets
    rows, scored = echo_prompts(input_ids, window.first_logit, targets)
    assert rows == [IDS[0:16]] and scored == slice(1, 16)


def test_targets_that_do_not_follow_the_window_are_refused():
    input_ids = torch.tensor([[5, 6, 7, 8]])  # (1, 4)
    with pytest.raises(ValueError, match="follow the scored positions"):
        echo_prompts(input_ids, 0, torch.tensor([[6, 9, 8]]))
    with pytest.raises(ValueError, match="not all in the window"):
        echo_prompts(input_ids, 2, torch.tensor([[8, 9, 10]]))
