"""Peer definitions of long-document perplexity, written out plainly to cross-check the engine.

Nothing here is used to produce results. Tests and ``benchmarks/ppl_bench.py`` compare the engine with:

* :func:`brute_force_nll`: one forward per token over exactly the context the protocol promises it;
* :func:`hf_guide_loop`: the Hugging Face "perplexity of fixed-length models" loop (full logits,
  ``labels=``), returning both its reported PPL and the exact per-token average of what it scores;
* :func:`lm_eval_rolling_nll`: lm-eval's rolling loglikelihood windows (prefix token, disjoint
  predictions, each window conditioned on the tokens just before it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F


@torch.inference_mode()
def _last_nll(model, context: list[int], target: int) -> float:
    logits = model(input_ids=torch.tensor([context])).logits[0, -1].double()  # [V]
    return float(-torch.log_softmax(logits, dim=-1)[target])


def context_start(j: int, total: int, length: int, stride: int, policy: str) -> tuple[int, bool]:
    """First document index of token ``j``'s context, and whether BOS precedes it (protocol, per token)."""
    if stride >= length:  # disjoint: chunk end e, context = the L positions ending at e - 1
        chunk_end = min((j // length + 1) * length, total)
        bos = policy == "always" or (policy == "first" and j < length)
        return max(0, chunk_end - 1 - (length - int(bos))), bos
    bos_of = lambda k: policy == "always" or (policy == "first" and k == 0)  # noqa: E731
    k = 0
    while min(k * stride + length - int(bos_of(k)), total) <= j:
        k += 1
    return k * stride, bos_of(k)


def brute_force_nll(model, ids: Sequence[int], length: int, stride: int, policy: str, bos_id: int | None):
    """Per-token NLL, one forward per token (NaN for token 0 without BOS)."""
    out = np.full(len(ids), np.nan)
    for j in range(0 if policy != "never" else 1, len(ids)):
        start, bos = context_start(j, len(ids), length, stride, policy)
        out[j] = _last_nll(model, [bos_id] * bos + list(ids[start:j]), ids[j])
    return out


@torch.inference_mode()
@torch.no_grad()
def hf_guide_loop(
    model, ids: Sequence[int], max_length: int, stride: int, exact: bool = True
) -> tuple[float, float, int]:
    """The guide's loop over one token sequence, under ``torch.no_grad()`` as in the guide.

    Returns ``(guide_ppl, exact_ppl, n_scored)``: ``guide_ppl`` weights each window's mean loss by
    ``valid_labels - 1`` as the guide does (right for the first window, one short for every later
    window, whose labels are all scored); ``exact_ppl`` is the plain per-token average of the same NLLs.
    ``exact=False`` leaves out that extra float64 pass over the logits (``exact_ppl`` is then NaN), so
    a timing of the loop times the guide's own work only.
    """
    encodings = torch.tensor([list(ids)])
    seq_len = encodings.size(1)
    guide_sum, guide_count, exact_sum, exact_count, prev_end = 0.0, 0, 0.0, 0, 0
    for begin in range(0, seq_len, stride):
        end = min(begin + max_length, seq_len)
        trg_len = end - prev_end
        input_ids = encodings[:, begin:end]
        target_ids = input_ids.clone()
        target_ids[:, :-trg_len] = -100
        outputs = model(input_ids=input_ids, labels=target_ids)
        loss_tokens = (target_ids != -100).sum().item() - 1
        guide_sum += outputs.loss.item() * loss_tokens
        guide_count += loss_tokens
        exact_count += int((target_ids[0, 1:] != -100).sum())
        if exact:
            shifted = F.cross_entropy(  # the same loss, per token, to get the exact count
                outputs.logits[0, :-1].double(), target_ids[0, 1:], ignore_index=-100, reduction="sum"
            )
            exact_sum += shifted.item()
        prev_end = end
        if end == seq_len:
            break
    exact_ppl = math.exp(exact_sum / exact_count) if exact else math.nan
    return math.exp(guide_sum / guide_count), exact_ppl, exact_count


def lm_eval_rolling_windows(
    ids: Sequence[int], prefix: int, max_len: int
) -> list[tuple[list[int], list[int]]]:
    """(input, predicted) pairs: first ``[prefix] + ids[:L-1]`` -> ``ids[:L]``; then each next ``L``
    tokens predicted from the ``L`` tokens right before the window's last prediction."""
    ids = list(ids)
    windows = [([prefix] + ids[: max_len - 1], ids[:max_len])]
    predicted = min(max_len, len(ids))
    while predicted < len(ids):
        n = min(max_len, len(ids) - predicted)
        end = predicted + n
        windows.append((ids[end - max_len - 1 : end - 1], ids[end - n : end]))
        predicted = end
    return windows


@torch.inference_mode()
def lm_eval_rolling_nll(model, ids: Sequence[int], prefix: int, max_len: int) -> np.ndarray:
    """Per-token NLL under lm-eval's rolling windows (every token scored, token 0 from the prefix)."""
    out, position = np.full(len(ids), np.nan), 0
    for inputs, predicted in lm_eval_rolling_windows(ids, prefix, max_len):
        logits = model(input_ids=torch.tensor([inputs])).logits[0].double()  # [n_in, V]
        logp = torch.log_softmax(logits[-len(predicted) :], dim=-1)  # [n, V]
        nll = -logp[torch.arange(len(predicted)), torch.tensor(predicted)]
        out[position : position + len(predicted)] = nll.numpy()
        position += len(predicted)
    return out
