"""Prompts for the backends that score through prompt log-probs (vllm, openai).

Those backends read the log-prob of prompt token ``j`` given the tokens before it, so a target can only
be scored if it sits inside the prompt. A strided window holds all its targets (its last logit is not
used), but a disjoint window (``S >= L``, :func:`~coca_eval.ppl.windows.plan_disjoint`) ends one token
before its last target: the window's last position predicts a token the window does not contain.

So the prompt is the window up to the first scored position followed by every target. In a causal
model a position sees only the tokens before it, so each scored position predicts from exactly the
context it has in the window: the NLLs are those the hf backend computes on the window itself. The
prompt can be one token longer than the window; the window's length still decides anything that
depends on the length (a dynamic rope base).
"""

from __future__ import annotations

import torch


def echo_prompts(input_ids: torch.Tensor, first_logit: int, targets: torch.Tensor) -> tuple[list, slice]:
    """Token rows to send and the prompt positions whose log-probs are the targets'.

    ``input_ids`` (b, n) are the windows, ``targets`` (b, s) the tokens predicted at positions
    ``first_logit .. first_logit + s - 1``; each returned row is ``first_logit + 1 + s`` tokens long.
    """
    count = targets.shape[1]
    if first_logit < 0 or input_ids.shape[1] < first_logit + count:
        raise ValueError(f"positions {first_logit}..{first_logit + count - 1} are not all in the window")
    inside = input_ids[:, first_logit + 1 : first_logit + 1 + count]  # (b, s or s - 1)
    if not torch.equal(inside, targets[:, : inside.shape[1]]):
        raise ValueError("targets must be the tokens that follow the scored positions")
    rows = torch.cat([input_ids[:, : first_logit + 1], targets], dim=1)  # (b, first_logit + 1 + s)
    return rows.tolist(), slice(first_logit + 1, first_logit + 1 + count)
