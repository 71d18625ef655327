"""Window plans: every target scored once, windows never longer than L, each target predictable."""

import pytest

from coca_eval.ppl.params import make_params
from coca_eval.ppl.windows import BOS_POLICIES, disjoint, disjoint_lengths, first_target, plan_windows

CASES = [(20, 8, 3), (20, 8, 8), (17, 8, 8), (5, 8, 3), (20, 4, 1), (20, 8, 6), (64, 16, 4), (33, 16, 16)]


@pytest.mark.parametrize("policy", BOS_POLICIES)
@pytest.mark.parametrize(("total", "length", "stride"), CASES)
@pytest.mark.parametrize("mode", ["sliding", "truncated"])
def test_every_target_scored_exactly_once(policy, total, length, stride, mode):
    plan = plan_windows(total, length, stride, policy, mode)
    scored = [j for w in plan for j in range(w.score_from, w.score_to)]
    assert len(scored) == len(set(scored))
    if mode == "sliding":
        assert scored == list(range(first_target(policy), total))
    else:
        assert scored == list(range(first_target(policy), min(total, length - (policy != "never"))))
    for w in plan:
        assert w.length <= length
        assert w.first_logit >= 0  # the first target has a predecessor (a token or BOS) in the window
        assert (
            w.score_to <= w.end + 1
        )  # the last target is predicted by the window's last position or earlier


def test_strided_matches_guide_layout():
    plan = plan_windows(20, 8, 3, "never")
    assert [(w.start, w.end) for w in plan] == [(0, 8), (3, 11), (6, 14), (9, 17), (12, 20)]
    assert [(w.score_from, w.score_to) for w in plan] == [(1, 8), (8, 11), (11, 14), (14, 17), (17, 20)]


def test_disjoint_matches_lm_eval_layout():
    plan = plan_windows(20, 8, 8, "first")
    assert plan[0].bos and not plan[1].bos
    assert [(w.start, w.end, w.score_from, w.score_to) for w in plan] == [
        (0, 7, 0, 8),
        (7, 15, 8, 16),
        (11, 19, 16, 20),
    ]


@pytest.mark.parametrize("stride", [4, 7, 8, 9, 16])
def test_one_stride_rule_decides_plans_strides_and_captions(stride):
    params = make_params({"stride": stride, "lengths": (8,), "doc_tokens": 64})
    plan = plan_windows(40, 8, stride, "never")
    overlapping = any(a.end > b.start for a, b in zip(plan, plan[1:], strict=False))
    assert disjoint(stride, 8) == (stride >= 8) == (not overlapping)
    if disjoint(stride, 8):  # any stride at or past L cuts the same windows
        assert plan == plan_windows(40, 8, 8, "never")
    assert params.effective_stride(8) == (8 if disjoint(stride, 8) else stride)
    assert disjoint_lengths(stride, [4, 8, 16]) == [n for n in (4, 8, 16) if disjoint(stride, n)]


def test_stride_without_context_is_rejected():
    with pytest.raises(ValueError):
        plan_windows(40, 8, 7, "first")
    with pytest.raises(ValueError):
        plan_windows(40, 8, 0, "never")
