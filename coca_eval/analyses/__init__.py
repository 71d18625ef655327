"""Analyses of how a model uses RoPE, as tasks of the harness (``coca-eval analyze ...``).

``frequencies`` (per-frequency norms of q, k, v), ``angles`` (initial q-k angles and CoCA's anomalous
regime), ``decay`` (long-term decay closed forms against the measured mean logit) and ``attention``
(logit outliers and local attention mass past the trained length). Each registers a task spec in
:mod:`.spec`; the model is observed through :mod:`.capture`, one layer at a time.
"""
