"""The OpenCompass bridge: the paper's Table 5 (short-context benchmarks) from our method specs.

Only :mod:`coca_eval.opencompass.model` imports OpenCompass, and only OpenCompass's task processes import
that module, so ``import coca_eval`` (and this package) never pulls OpenCompass in. The rest writes the
config, runs OpenCompass as a subprocess and turns its files into our cells.
"""
