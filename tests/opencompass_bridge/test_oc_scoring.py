"""Batched scoring behind the OpenCompass wrapper: right padding must not change any sequence's NLL."""

import pytest
import torch

from coca_eval.backends.hf import load_hf_backend
from coca_eval.methods import make_method
from coca_eval.opencompass.scoring import continuation_nll, padded_batch, sequence_nll


@pytest.fixture(scope="module")
def backend(tiny_llama_bos_dir):
    return load_hf_backend(make_method(str(tiny_llama_bos_dir), "none", None, "float32", "hf"))


def test_padding_is_masked_and_left_padding_aligns_the_ends():
    ids, mask = padded_batch([[5, 6, 7], [8]], left=True, pad=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_a_batch_scores_like_each_sequence_alone(backend):
    sequences = [[0, 5, 9, 12, 40, 41, 7], [0, 33, 2], [0, 8, 8, 8, 9]]
    skip = [3, 0, 1]
    nll, scored = sequence_nll(backend, sequences, skip)
    for row, (seq, first) in enumerate(zip(sequences, skip, strict=True)):
        alone, alone_scored = sequence_nll(backend, [seq], [first])
        n = len(seq) - 1
        assert torch.allclose(nll[row, :n], alone[0], atol=1e-5)
        assert scored[row].sum() == alone_scored.sum() == n - max(0, first - 1)
        assert nll[row, n:].abs().sum() == 0  # pads are never scored


def test_continuation_nll_sums_only_the_continuation(backend):
    seq = [0, 5, 9, 12, 40]
    (total,) = continuation_nll(backend, [(seq, 2)])
    per_token, _ = sequence_nll(backend, [seq], [0])
    assert total.item() == pytest.approx(per_token[0, -2:].sum().item(), rel=1e-6)


def test_mean_nll_divides_like_opencompass(backend):
    """Sum over scored tokens / (tokens - mask): N for an unmasked sequence (N - 1 are scored)."""
    from coca_eval.opencompass.scoring import mean_nll

    sequences, skip = [[0, 5, 9, 12, 40, 41, 7], [0, 33, 2]], [3, 0]
    nll, _ = sequence_nll(backend, sequences, skip)
    means = mean_nll(backend, sequences, skip)
    assert means[0].item() == pytest.approx(nll[0].sum().item() / (7 - 3), rel=1e-6)
    assert means[1].item() == pytest.approx(nll[1].sum().item() / 3, rel=1e-6)
