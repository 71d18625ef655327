"""Long-term decay in closed form, for any set of RoPE frequencies theta_j (j = 0 .. d/2 - 1).

* RoFormer (§3.4.3): |a(s)| <= (max_j |h_{j+1} - h_j|) sum_j |S_j| with S_j = sum_{k<j} exp(i s theta_k);
  the curve drawn is the relative bound (1/(d/2)) sum_{j=1}^{d/2} |S_j|.
* CoCA (App. D.1): with q_j collinear with k_j the same argument bounds |a(s)| by sum_j |C_j|,
  C_j = sum_{k<j} cos(s theta_k); relative form (1/(d/2)) sum_j |C_j|, never above RoFormer's.
* p-RoPE paper, Fig 2 (a): all-ones q and k give q^T R^s k / d = (2/d) sum_j cos(s theta_j).
  Fig 2 (b): Gaussian q, k have expectation 0 at every distance (Prop. 3.2); a seeded sample shows the
  spread, 1/sqrt(d) per pair.
* Fig 8: random positions (Ruoss et al.): N positions drawn without replacement from 1..L and sorted;
  tokens r apart in the sequence sit delta apart with probability C(delta-1, r-1) C(L-delta, N-r) / C(L, N)
  (r of the N + 1 exchangeable gaps sum to delta), so the all-ones curve becomes its expectation under
  that law.

The frequencies come from the model itself (:func:`~coca_eval.analyses.planes.frequencies_of`), so PI,
NTK, YaRN, dynamic NTK at the analysed length and p-RoPE's frozen planes are all covered.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln


def relative_bound(theta: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """RoFormer's (1/(d/2)) sum_j |S_j| at each distance: theta (P,), distances (D,) -> (D,)."""
    phases = np.exp(1j * np.outer(distances, theta))  # (D, P)
    partial = np.cumsum(phases, axis=1)  # (D, P): S_1 .. S_P
    return np.abs(partial).mean(axis=1)  # (D,)


def coca_bound(theta: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """CoCA's strong form (1/(d/2)) sum_j |C_j|: theta (P,), distances (D,) -> (D,)."""
    partial = np.cumsum(np.cos(np.outer(distances, theta)), axis=1)  # (D, P): C_1 .. C_P
    return np.abs(partial).mean(axis=1)  # (D,)


def all_ones(theta: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """q = k = all-ones, activation / d: (2/d) sum_j cos(s theta_j) = mean_j cos(s theta_j) -> (D,)."""
    return np.cos(np.outer(distances, theta)).mean(axis=1)  # (D,)


def gaussian(theta: np.ndarray, distances: np.ndarray, samples: int, seed: int) -> np.ndarray:
    """Mean over ``samples`` seeded Gaussian (q, k) pairs of q^T R^s k / d -> (D,); expectation 0."""
    rng = np.random.default_rng(seed)
    planes = theta.shape[0]
    q = rng.standard_normal((samples, planes)) + 1j * rng.standard_normal((samples, planes))  # (S, P)
    k = rng.standard_normal((samples, planes)) + 1j * rng.standard_normal((samples, planes))  # (S, P)
    rotation = np.exp(1j * np.outer(distances, theta))  # (D, P)
    products = (q * k.conj()).mean(axis=0)  # (P,): the sample mean of q_j conj(k_j)
    return (rotation * products).real.sum(axis=1) / (2 * planes)  # (D,)


def spacing_law(r: int, tokens: int, bound: int) -> np.ndarray:
    """P(delta) for delta = 0 .. bound: the gap between sorted random positions r apart (N = tokens of
    1..L = bound, without replacement); zero where delta < r."""
    delta = np.arange(bound + 1, dtype=np.float64)  # (L+1,)
    ok = (delta >= r) & (bound - delta >= tokens - r)  # (L+1,)
    safe = np.where(ok, delta, r)  # (L+1,)
    log_p = (
        _log_choose(safe - 1, r - 1) + _log_choose(bound - safe, tokens - r) - _log_choose(bound, tokens)
    )  # (L+1,)
    return np.where(ok, np.exp(log_p), 0.0)  # (L+1,)


def random_positions(theta: np.ndarray, distances: np.ndarray, tokens: int, bound: int) -> np.ndarray:
    """The all-ones curve under random positions (bound L >= tokens N): E_delta[all_ones(delta)] -> (D,)."""
    curve = all_ones(theta, np.arange(bound + 1))  # (L+1,)
    out = [curve[0] if r == 0 else spacing_law(int(r), tokens, bound) @ curve for r in distances]
    return np.asarray(out)  # (D,)


def _log_choose(n: np.ndarray | float, k: np.ndarray | float) -> np.ndarray:
    return gammaln(np.asarray(n) + 1) - gammaln(np.asarray(k) + 1) - gammaln(np.asarray(n) - k + 1)


def distance_grid(longest: int, points: int = 160) -> np.ndarray:
    """0 .. 16 one by one, then geometric up to ``longest`` - 1: the curves' x values (distinct ints)."""
    small = np.arange(min(17, longest))
    if longest <= 17:
        return small
    large = np.geomspace(17, longest - 1, points).round().astype(int)
    return np.unique(np.concatenate([small, large]))
