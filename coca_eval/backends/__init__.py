"""Backends turn token windows into log-probabilities and prompts into greedy generations.

Shape comments use the legend in :mod:`coca_eval.models` (b, n, s, h, kv, d, hidden, vocab, ...).
"""
